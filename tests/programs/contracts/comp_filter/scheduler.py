"""A comprehension over the draft whose filter tests it: the element is read only for a draft."""
from .results import Draft, Result  # noqa: F401 (the worker imports them from here)
from .worker import DraftWorker


class Scheduler:
    def __init__(self):
        self.worker = DraftWorker()

    def run_batch(self, batch):
        result = self.worker.forward(batch)
        batch.lens = [d.lens for d in [result.draft] if d]
