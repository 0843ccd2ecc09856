"""The result stored under a key of a dict made empty: what the item holds when read is not followed."""
from .results import Draft, Result  # noqa: F401 (the worker imports them from here)
from .worker import DraftWorker


class Scheduler:
    def __init__(self):
        self.worker = DraftWorker()

    def run_batch(self, batch):
        result = self.worker.forward(batch)
        held = {}
        held["r"] = result
        batch.lens = held["r"].draft.lens
