"""... and looked up with `held.get("r")`, a key the display gives."""
from .results import Draft, Result  # noqa: F401 (the worker imports them from here)
from .worker import DraftWorker


class Scheduler:
    def __init__(self):
        self.worker = DraftWorker()

    def run_batch(self, batch):
        result = self.worker.forward(batch)
        held = {"r": result}
        batch.lens = held.get("r").draft.lens
