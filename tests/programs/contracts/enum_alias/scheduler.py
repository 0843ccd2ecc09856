"""As enum_exclusive, but `Disagg.PREFILL` has the value of `Disagg.NULL` (an alias, the same\nmember): the two tests can hold together."""
from enum import Enum

from .results import Draft, Result  # noqa: F401 (the worker imports them from here)
from .worker import DraftWorker


class Disagg(Enum):
    NULL = "null"
    PREFILL = "null"


def dispatch_event_loop(scheduler, batch):
    if scheduler.disagg == Disagg.NULL:
        scheduler.event_loop_normal(batch)


class Scheduler:
    def __init__(self, disagg):
        self.disagg = disagg
        self.worker = DraftWorker()

    def event_loop_normal(self, batch):
        result = self.worker.forward(batch)
        self.process_result(batch, result)

    def process_result(self, batch, result):
        if self.disagg == Disagg.PREFILL:
            batch.lens = result.draft.lens
