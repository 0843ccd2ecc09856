"""The scheduler hands the result to a helper that submits its copy, a functools.partial, to a pool."""
import functools
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

    def copy_to_cpu(self, keep_tokens=True):
        if keep_tokens:
            self.tokens = list(self.tokens)
        self.draft.lens = list(self.draft.lens)


class Scheduler:
    def __init__(self):
        self.worker = DraftWorker()
        self.pool = None

    def run_batch(self, batch):
        result = self.worker.forward(batch)
        self._copy(result, batch)
        return result.tokens


    def _copy(self, result, batch):
        copy = functools.partial(result.copy_to_cpu, keep_tokens=batch.keep)
        self.pool.submit(copy)
