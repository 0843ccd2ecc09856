"""run_batch returns the worker's result or, for embeddings, a result of another class that it
copies itself: the copy runs on that one, not on the worker's."""
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


@dataclass
class Embedding:
    values: list

    def copy_to_cpu(self):
        self.values = list(self.values)


class Scheduler:
    def __init__(self):
        self.worker = DraftWorker()

    def run_batch(self, batch):
        if batch.generate:
            out = self.worker.forward(batch)
            if not batch.idle:
                out.copy_to_cpu()
            batch.tokens = out.tokens
            ret = out
        else:
            ret = Embedding(values=[])
            ret.copy_to_cpu()
        return ret
