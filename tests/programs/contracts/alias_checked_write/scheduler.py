"""The draft taken into a local, written through under a None test of the local: never None there."""
from .results import Draft, Result  # noqa: F401 (the worker imports them from here)
from .worker import DraftWorker


class Scheduler:
    def __init__(self):
        self.worker = DraftWorker()

    def run_batch(self, batch):
        result = self.worker.forward(batch)
        draft = result.draft
        if draft is not None:
            draft.lens = []
