"""`case None | []:` that returns, after a case that cannot match None: the draft is set after the match."""
from .results import Draft, Result  # noqa: F401 (the worker imports them from here)
from .worker import DraftWorker


class Scheduler:
    def __init__(self):
        self.worker = DraftWorker()

    def run_batch(self, batch):
        result = self.worker.forward(batch)
        match result.draft:
            case "skip":
                return
            case None | []:
                return
        batch.lens = result.draft.lens
