"""A pipeline loop in a mixin gets the result through run_batch and an item of a tuple."""
from dataclasses import dataclass
from typing import Optional

from .worker import DraftWorker


@dataclass
class Draft:
    lens: list


@dataclass
class Result:
    tokens: list
    draft: Optional[Draft] = None


class LoopMixin:
    def launch(self, batch):
        result = self.run_batch(batch)
        return result, len(batch.reqs)

    def loop(self, batch):
        result, _ = self.launch(batch)
        batch.lens = result.draft.lens


class Scheduler(LoopMixin):
    def __init__(self):
        self.worker = DraftWorker()

    def run_batch(self, batch):
        out = self.worker.forward(batch)
        ret = out
        return ret
