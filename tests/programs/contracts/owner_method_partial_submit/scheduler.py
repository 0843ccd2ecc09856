"""The scheduler hands the result to a helper that submits its copy, a functools.partial, to a pool."""
import functools

from .results import Draft, Result  # noqa: F401 (the worker imports them from here)
from .worker import DraftWorker


class Scheduler:
    def __init__(self):
        self.worker = DraftWorker()
        self.pool = None

    def run_batch(self, batch):
        result = self.worker.forward(batch)
        self._copy(result, batch)
        return result.tokens

    def _copy(self, result, batch):
        copy = functools.partial(result.copy_to_cpu, keep_tokens=batch.keep)
        self.pool.submit(copy)
