"""`match result.draft: case Draft(lens=lens):` runs only where the draft is a Draft."""
from .results import Draft, Result  # noqa: F401 (the worker imports them from here)
from .worker import DraftWorker


class Scheduler:
    def __init__(self):
        self.worker = DraftWorker()

    def run_batch(self, batch):
        result = self.worker.forward(batch)
        match result.draft:
            case Draft(lens=lens):
                batch.lens = lens
