"""The draft taken into a local through `typing.cast`, then written through."""
from typing import cast

from .results import Draft, Result  # noqa: F401 (the worker imports them from here)
from .worker import DraftWorker


class Scheduler:
    def __init__(self):
        self.worker = DraftWorker()

    def run_batch(self, batch):
        result = self.worker.forward(batch)
        draft = cast(Draft, result.draft)
        draft.lens = []
