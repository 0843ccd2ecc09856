"""The scheduler hands the result to a helper that sets the draft before it calls the copy."""
from .results import Draft, Result  # noqa: F401 (the worker imports them from here)
from .worker import DraftWorker


class Scheduler:
    def __init__(self):
        self.worker = DraftWorker()

    def run_batch(self, batch):
        result = self.worker.forward(batch)
        self._copy(result, batch)
        return result.tokens

    def _copy(self, result, batch):
        result.draft = Draft(lens=[])
        result.copy_to_cpu(keep_tokens=batch.keep)
