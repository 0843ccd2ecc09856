"""A guarded capture before `case None: return` takes None where its guard holds and goes on."""
from .results import Draft, Result  # noqa: F401 (the worker imports them from here)
from .worker import DraftWorker


class Scheduler:
    def __init__(self):
        self.worker = DraftWorker()

    def run_batch(self, batch):
        result = self.worker.forward(batch)
        match result.draft:
            case d if batch.quick:
                batch.lens = d
            case None:
                return
        batch.lens = result.draft.lens
