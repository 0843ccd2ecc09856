"""`match result.draft:` whose `case None:` returns: the code after the match runs only with a draft."""
from .results import Draft, Result  # noqa: F401 (the worker imports them from here)
from .worker import DraftWorker


class Scheduler:
    def __init__(self):
        self.worker = DraftWorker()

    def run_batch(self, batch):
        result = self.worker.forward(batch)
        match result.draft:
            case None:
                return
        batch.lens = result.draft.lens
