"""The result kept in a local dict display that nothing changes: `held["r"]` is the result."""
from .results import Draft, Result  # noqa: F401 (the worker imports them from here)
from .worker import DraftWorker


class Scheduler:
    def __init__(self):
        self.worker = DraftWorker()

    def run_batch(self, batch):
        result = self.worker.forward(batch)
        held = {"r": result, "batch": batch}
        batch.lens = held["r"].draft.lens
