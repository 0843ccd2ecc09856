"""`None is not result.draft` tests the draft as `result.draft is not None` does."""
from .results import Draft, Result  # noqa: F401 (the worker imports them from here)
from .worker import DraftWorker


class Scheduler:
    def __init__(self):
        self.worker = DraftWorker()

    def run_batch(self, batch):
        result = self.worker.forward(batch)
        if None is not result.draft:
            batch.lens = result.draft.lens
