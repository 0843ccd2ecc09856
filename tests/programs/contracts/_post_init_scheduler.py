"""The scheduler of the programs whose result has a `__post_init__` (their scheduler.py links here;
their results.py says what it writes)."""
from .results import Draft, Result  # noqa: F401 (the worker imports them from here)
from .worker import DraftWorker


class Scheduler:
    def __init__(self):
        self.worker = DraftWorker()

    def run_batch(self, batch):
        result = self.worker.forward(batch)
        batch.lens = result.draft.lens
