"""A function nested in the scheduler's method reads the draft through the result it closes over, and is called."""
from .results import Draft, Result  # noqa: F401 (the worker imports them from here)
from .worker import DraftWorker


class Scheduler:
    def __init__(self):
        self.worker = DraftWorker()

    def run_batch(self, batch):
        result = self.worker.forward(batch)
        batch.tokens = result.tokens

        def keep():
            batch.lens = result.draft.lens

        keep()
