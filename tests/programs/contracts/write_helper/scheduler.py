"""The scheduler keeps the draft on the batch and then dereferences it there: nothing below
`result.draft` is read off the result itself."""
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
        batch.draft = result.draft
        batch.draft.ready = True
