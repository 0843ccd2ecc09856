"""A call between keeping the result on the scheduler and the read may assign the attribute again."""
from .results import Draft, Result  # noqa: F401 (the worker imports them from here)
from .worker import DraftWorker


class Scheduler:
    def __init__(self):
        self.worker = DraftWorker()

    def run_batch(self, batch):
        result = self.worker.forward(batch)
        self.last = result
        self.log_step(batch)
        batch.lens = self.last.draft.lens

    def log_step(self, batch):
        self.steps = getattr(self, "steps", 0) + 1
