"""The result's draft is written through a property setter of the result (`self.draft = value`)."""
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

    @property
    def draft_input(self):
        return self.draft

    @draft_input.setter
    def draft_input(self, value):
        self.draft = value


class Scheduler:
    def __init__(self):
        self.worker = DraftWorker()

    def run_batch(self, batch):
        result = self.worker.forward(batch)
        batch.lens = result.draft.lens
