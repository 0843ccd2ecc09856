"""The scheduler subscripts one field and adds another: None supports neither."""
from dataclasses import dataclass
from typing import Optional

from .worker import DraftWorker


@dataclass
class Result:
    tokens: list
    accepted: Optional[list] = None
    steps: Optional[int] = None


class Scheduler:
    def __init__(self):
        self.worker = DraftWorker()

    def run_batch(self, batch):
        result = self.worker.forward(batch)
        batch.first = result.accepted[0]
        batch.total = result.steps + len(batch)
