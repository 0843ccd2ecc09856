"""`case Result(draft=d):` binds d to the result's draft, None or not."""
from .results import Draft, Result  # noqa: F401 (the worker imports them from here)
from .worker import DraftWorker


class Scheduler:
    def __init__(self):
        self.worker = DraftWorker()

    def run_batch(self, batch):
        result = self.worker.forward(batch)
        match result:
            case Result(draft=d):
                batch.lens = d.lens
