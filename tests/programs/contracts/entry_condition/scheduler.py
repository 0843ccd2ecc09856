"""The loop that reads the draft runs only where the dispatcher saw no pipeline stage: the
worker's stage return never reaches the read (the entry condition of event_loop_normal)."""
from .worker import DraftWorker


class Scheduler:
    def __init__(self, staged):
        self.staged = staged
        self.worker = DraftWorker(staged)

    def run_batch(self, batch):
        return self.worker.forward(batch)

    def event_loop_normal(self, batch):
        result = self.run_batch(batch)
        self.process_result(batch, result)

    def event_loop_staged(self, batch):
        result = self.run_batch(batch)
        batch.sent = result.tokens

    def process_result(self, batch, result):
        batch.lens = result.draft.lens


def dispatch_event_loop(scheduler, batch):
    if scheduler.staged:
        scheduler.event_loop_staged(batch)
    else:
        scheduler.event_loop_normal(batch)
