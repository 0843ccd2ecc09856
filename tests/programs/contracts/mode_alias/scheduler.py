"""The draft is read for decode batches, the mode tested through a local bound once from the
batch's: `mode.is_decode()` is `batch.forward_mode.is_decode()`, which excludes the worker's
`batch.forward_mode.is_idle()`."""
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
        mode = batch.forward_mode
        if mode.is_decode():
            batch.lens = result.draft.lens
