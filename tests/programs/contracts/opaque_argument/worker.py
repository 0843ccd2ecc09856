"""The result is handed to a hook the worker is given, which nothing in the tree resolves: it may
clear the draft."""
from .scheduler import Draft, Result


class DraftWorker:
    def __init__(self, hook):
        self.hook = hook

    def forward(self, batch) -> Result:
        result = Result(tokens=[1], draft=Draft(lens=[len(batch)]))
        self.hook.adjust(result)
        return result
