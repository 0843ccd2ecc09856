"""`filter(None, [result.draft])` lets through a true draft only: the loop's read is guarded."""
from .results import Draft, Result  # noqa: F401 (the worker imports them from here)
from .worker import DraftWorker


class Scheduler:
    def __init__(self):
        self.worker = DraftWorker()

    def run_batch(self, batch):
        result = self.worker.forward(batch)
        for d in filter(None, [result.draft]):
            batch.lens = d.lens
