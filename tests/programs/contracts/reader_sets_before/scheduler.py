"""The method the loop hands the result to sets the draft itself before it reads it."""
from .results import Draft, Result  # noqa: F401 (the worker imports them from here)
from .worker import DraftWorker


class Scheduler:
    def __init__(self):
        self.worker = DraftWorker()

    def event_loop_normal(self, batch):
        result = self.worker.forward(batch)
        self.process_result(batch, result)

    def process_result(self, batch, result):
        result.draft = Draft(lens=[len(batch.reqs)])
        batch.lens = result.draft.lens
