"""The loop runs only where the dispatcher saw `disagg == Disagg.NULL`; the read stands under\n`self.disagg == Disagg.PREFILL`: one value equals one member of an enum at most."""
from enum import Enum

from .results import Draft, Result  # noqa: F401 (the worker imports them from here)
from .worker import DraftWorker


class Disagg(Enum):
    NULL = "null"
    PREFILL = "prefill"


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
