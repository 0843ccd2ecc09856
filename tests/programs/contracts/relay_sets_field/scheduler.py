"""run_batch, the relay the loop gets its result from, sets the draft itself on its overlapped
way; the loop runs only with overlap (the dispatcher): the idle return never reaches the read."""
from .results import Draft, Result  # noqa: F401 (the worker imports them from here)
from .worker import DraftWorker


def dispatch_event_loop(scheduler, batch):
    if scheduler.overlap:
        scheduler.event_loop_overlap(batch)


class Scheduler:
    def __init__(self, overlap):
        self.overlap = overlap
        self.worker = DraftWorker()

    def run_batch(self, batch):
        result = self.worker.forward(batch)
        if self.overlap:
            result.draft = Draft(lens=[])
        ret = result
        return ret

    def event_loop_overlap(self, batch):
        result = self.run_batch(batch)
        self.process_result(batch, result)

    def process_result(self, batch, result):
        batch.lens = result.draft.lens
