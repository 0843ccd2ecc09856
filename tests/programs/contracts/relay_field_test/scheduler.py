"""The loop reads the draft only when the result says it accepted tokens."""
from dataclasses import dataclass
from typing import Optional

from .worker import DraftWorker


@dataclass
class Draft:
    lens: list


@dataclass
class Result:
    tokens: list
    accepted: Optional[list] = None
    draft: Optional[Draft] = None


class LoopMixin:
    def launch(self, batch):
        result = self.run_batch(batch)
        return result, len(batch.reqs)

    def loop(self, batch):
        result, _ = self.launch(batch)
        if result.accepted is not None:
            batch.lens = result.draft.lens


class Scheduler(LoopMixin):
    def __init__(self):
        self.worker = DraftWorker()

    def run_batch(self, batch):
        return self.worker.forward(batch)
