"""A partial of a helper that tests the draft before it reads it."""
import functools

from .results import Draft, Result  # noqa: F401 (the worker imports them from here)
from .worker import DraftWorker


class Scheduler:
    def __init__(self):
        self.worker = DraftWorker()

    def run_batch(self, batch):
        result = self.worker.forward(batch)
        use = functools.partial(self._use, result)
        batch.lens = use()

    def _use(self, r):
        if r.draft is None:
            return []
        return r.draft.lens
