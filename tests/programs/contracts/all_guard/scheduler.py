"""The draft is used under `all(...)` of a None test over a tuple holding it."""
from .results import Draft, Result  # noqa: F401 (the worker imports them from here)
from .worker import DraftWorker


class Scheduler:
    def __init__(self):
        self.worker = DraftWorker()

    def run_batch(self, batch):
        result = self.worker.forward(batch)
        if all(part is not None for part in (result.draft, result.tokens)):
            batch.lens = result.draft.lens
