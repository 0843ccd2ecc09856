"""The dict is handed to a call, which may put anything under "r": the item is not followed."""
from .results import Draft, Result  # noqa: F401 (the worker imports them from here)
from .worker import DraftWorker


class Scheduler:
    def __init__(self):
        self.worker = DraftWorker()

    def run_batch(self, batch):
        result = self.worker.forward(batch)
        held = {"r": result}
        self.refresh(held)
        batch.lens = held["r"].draft.lens

    def refresh(self, held):
        held["r"] = Result(tokens=[], draft=Draft(lens=[]))
