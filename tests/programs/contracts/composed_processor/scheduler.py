"""The scheduler hands the worker's result to an object it holds, whose method hands it to another
of its methods, which dereferences the draft."""
from dataclasses import dataclass
from typing import Optional

from .processor import ResultProcessor
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
        self.processor = ResultProcessor(self)

    def run_batch(self, batch):
        result = self.worker.forward(batch)
        self.processor.process(batch, result)
        return result.tokens
