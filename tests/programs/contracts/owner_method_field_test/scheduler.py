"""The scheduler copies the result only when it has no delayed sampling to run."""
from dataclasses import dataclass
from typing import Callable, Optional

from .worker import DraftWorker


@dataclass
class Draft:
    lens: list


@dataclass
class Result:
    tokens: list
    draft: Optional[Draft] = None
    delay: Optional[Callable] = None

    def copy_to_cpu(self):
        self.tokens = list(self.tokens)
        self.draft.lens = list(self.draft.lens)


class Scheduler:
    def __init__(self):
        self.worker = DraftWorker()

    def run_batch(self, batch):
        result = self.worker.forward(batch)
        if result.delay is None:
            result.copy_to_cpu()
        return result.tokens
