"""`type(result.draft) is Draft`: the draft is a Draft under it, not None."""
from .results import Draft, Result  # noqa: F401 (the worker imports them from here)
from .worker import DraftWorker


class Scheduler:
    def __init__(self):
        self.worker = DraftWorker()

    def run_batch(self, batch):
        result = self.worker.forward(batch)
        if type(result.draft) is Draft:
            batch.lens = result.draft.lens
