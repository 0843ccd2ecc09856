"""The draft is read for batches that do not extend: a mixed batch extends (is_mixed() implies is_extend())."""
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


class Scheduler:
    def __init__(self):
        self.worker = DraftWorker()

    def run_batch(self, batch):
        result = self.worker.forward(batch)
        if not batch.forward_mode.is_extend():
            batch.lens = result.draft.lens
