"""The result is handed to a method that hands it on, for busy batches only, to a mixin's method
using the draft."""
from .results import Draft, Result  # noqa: F401 (the worker imports them from here)
from .counters import CountersMixin
from .worker import DraftWorker


class Scheduler(CountersMixin):
    def __init__(self):
        self.worker = DraftWorker()

    def run_batch(self, batch):
        result = self.worker.forward(batch)
        batch.tokens = result.tokens
        self.process_result(batch, result)

    def process_result(self, batch, result):
        if not batch.idle:
            self.record(batch, result)
