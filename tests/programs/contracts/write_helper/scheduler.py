"""The scheduler keeps the draft on the batch and then dereferences it there: nothing below
`result.draft` is read off the result itself."""
from .results import Draft, Result  # noqa: F401 (the worker imports them from here)
from .worker import DraftWorker


class Scheduler:
    def __init__(self):
        self.worker = DraftWorker()

    def run_batch(self, batch):
        result = self.worker.forward(batch)
        batch.draft = result.draft
        batch.draft.ready = True
