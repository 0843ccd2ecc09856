"""The draft taken into a local, written through under an isinstance test of it: never None there."""
from .results import Draft, Result  # noqa: F401 (the worker imports them from here)
from .worker import DraftWorker


class Scheduler:
    def __init__(self):
        self.worker = DraftWorker()

    def run_batch(self, batch):
        result = self.worker.forward(batch)
        draft = result.draft
        if isinstance(draft, Draft):
            draft.lens = []
