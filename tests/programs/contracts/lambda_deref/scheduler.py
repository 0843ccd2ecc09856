"""The draft is passed to a lambda of the scheduler's method that dereferences its parameter."""
from .results import Draft, Result  # noqa: F401 (the worker imports them from here)
from .worker import DraftWorker


class Scheduler:
    def __init__(self):
        self.worker = DraftWorker()

    def run_batch(self, batch):
        result = self.worker.forward(batch)
        keep = lambda draft: draft.lens  # noqa: E731
        batch.lens = keep(result.draft)
