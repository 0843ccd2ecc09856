"""`case None:` whose body goes on: the draft may still be None after the match."""
from .results import Draft, Result  # noqa: F401 (the worker imports them from here)
from .worker import DraftWorker


class Scheduler:
    def __init__(self):
        self.worker = DraftWorker()

    def run_batch(self, batch):
        result = self.worker.forward(batch)
        match result.draft:
            case None:
                batch.lens = []
        batch.lens = result.draft.lens
