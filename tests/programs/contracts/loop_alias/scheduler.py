"""The draft and the tokens are handled in a loop over both: the loop variable is each in turn."""
from .results import Draft, Result  # noqa: F401 (the worker imports them from here)
from .worker import DraftWorker


class Scheduler:
    def __init__(self):
        self.worker = DraftWorker()

    def run_batch(self, batch):
        result = self.worker.forward(batch)
        for part in (result.draft, result.tokens):
            batch.parts.append(part.copy())
