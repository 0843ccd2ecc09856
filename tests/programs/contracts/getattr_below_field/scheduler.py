"""`getattr(result, "draft").lens` without a default is `result.draft.lens`: it reaches into the draft."""
from .results import Draft, Result  # noqa: F401 (the worker imports them from here)
from .worker import DraftWorker


class Scheduler:
    def __init__(self):
        self.worker = DraftWorker()

    def run_batch(self, batch):
        result = self.worker.forward(batch)
        batch.lens = getattr(result, "draft").lens
