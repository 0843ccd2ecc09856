"""The scheduler of the programs entered through a dispatcher (their loops.py links here): one
loop reads the draft, the other hands the tokens on; their scheduler.py holds the dispatcher."""
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
