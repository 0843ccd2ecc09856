"""The draft is taken into a local by a conditional expression, then used without a test."""
from .results import Draft, Result  # noqa: F401 (the worker imports them from here)
from .worker import DraftWorker


class Scheduler:
    def __init__(self):
        self.worker = DraftWorker()

    def run_batch(self, batch):
        result = self.worker.forward(batch)
        draft = result.draft if batch.wants_draft else batch.draft
        batch.lens = draft.lens
