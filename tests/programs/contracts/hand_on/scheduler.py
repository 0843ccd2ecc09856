"""The scheduler reads nothing of the result but hands it on, as an event loop does, to a method
that hands it to a mixin's method using the draft (the catalog's hand_on_receivers)."""
from .results import Draft, Result  # noqa: F401 (the worker imports them from here)
from .counters import CountersMixin
from .worker import DraftWorker


class Scheduler(CountersMixin):
    def __init__(self):
        self.worker = DraftWorker()

    def run_batch(self, batch):
        result = self.worker.forward(batch)
        self.process_result(batch, result)

    def process_result(self, batch, result):
        if batch.decode:
            self.record(batch, result)
