"""A test of the draft, then the result bound again under it: the test was of the other result."""
from .results import Draft, Result  # noqa: F401 (the worker imports them from here)
from .worker import DraftWorker


class Scheduler:
    def __init__(self):
        self.worker = DraftWorker()

    def run_batch(self, batch):
        result = self.worker.forward(batch)
        if result.draft is not None:
            result = self.worker.forward(batch)
            batch.lens = result.draft.lens
