"""The scheduler sets the draft itself on every path before the result's method reads it."""
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

    def copy_to_cpu(self):
        self.tokens = list(self.tokens)
        self.draft.lens = list(self.draft.lens)


class Scheduler:
    def __init__(self):
        self.worker = DraftWorker()

    def run_batch(self, batch):
        result = self.worker.forward(batch)
        result.draft = Draft(lens=[0])
        result.copy_to_cpu()
        return result.tokens
