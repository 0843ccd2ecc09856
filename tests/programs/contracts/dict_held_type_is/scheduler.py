"""`type(held["r"].draft) is Draft` guards the item's draft: a Draft, not None."""
from .results import Draft, Result  # noqa: F401 (the worker imports them from here)
from .worker import DraftWorker


class Scheduler:
    def __init__(self):
        self.worker = DraftWorker()

    def run_batch(self, batch):
        result = self.worker.forward(batch)
        held = {"r": result}
        if type(held["r"].draft) is Draft:
            batch.lens = held["r"].draft.lens
