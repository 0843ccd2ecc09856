"""A local alias of the draft: testing `info.lens` asks nothing of `lens`, only of `draft`."""
from dataclasses import dataclass
from typing import Optional

from .worker import DraftWorker


@dataclass
class Draft:
    lens: Optional[list] = None


@dataclass
class Result:
    tokens: list
    draft: Optional[Draft] = None


class Scheduler:
    def __init__(self):
        self.worker = DraftWorker()

    def run_batch(self, batch):
        result = self.worker.forward(batch)
        info = result.draft
        if info.lens is not None:
            batch.lens = info.lens
