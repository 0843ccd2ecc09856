"""The result kept on the scheduler first, then read through that attribute."""
from .results import Draft, Result  # noqa: F401 (the worker imports them from here)
from .worker import DraftWorker


class Scheduler:
    def __init__(self):
        self.worker = DraftWorker()

    def run_batch(self, batch):
        result = self.worker.forward(batch)
        self.last = result
        batch.lens = self.last.draft.lens
