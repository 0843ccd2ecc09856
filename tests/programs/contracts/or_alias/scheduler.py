"""The draft falls back to the batch's own, which may be None as well."""
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
        draft = result.draft or batch.draft
        batch.lens = draft.lens
