"""The await programs' scheduler: the worker's result is what its coroutine `forward` returns."""
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

    async def run_batch(self, batch):
        result = await self.worker.forward(batch)
        batch.lens = result.draft.lens
