"""The worker of the programs whose scheduler is entered through a dispatcher (their worker.py links
here): a pipeline stage hands its hidden states on and makes no draft."""
from .results import Draft, Result


class DraftWorker:
    def __init__(self, staged):
        self.staged = staged

    def forward(self, batch) -> Result:
        if self.staged:
            return Result(tokens=[])
        return Result(tokens=[1], draft=Draft(lens=[len(batch)]))
