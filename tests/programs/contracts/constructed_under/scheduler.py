"""The scheduler reads the draft only when the worker was built without its fast path."""
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
    def __init__(self, fast: bool):
        self.fast = fast
        self.worker = DraftWorker(fast)

    def run_batch(self, batch):
        result = self.worker.forward(batch)
        if not self.fast:
            batch.lens = result.draft.lens
