"""A loop over a display holding the worker's result binds its target to the result."""
from .results import Draft, Result  # noqa: F401 (the worker imports them from here)
from .worker import DraftWorker


class Scheduler:
    def __init__(self):
        self.worker = DraftWorker()

    def run_batch(self, batch):
        result = self.worker.forward(batch)
        for r in (result,):
            batch.lens = r.draft.lens
