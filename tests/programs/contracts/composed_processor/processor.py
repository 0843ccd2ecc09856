"""The scheduler's output processing, an object of its own."""
from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from .scheduler import Result


class ResultProcessor:
    def __init__(self, scheduler):
        self.scheduler = scheduler

    def process(self, batch, result: Result):
        if batch.done:
            return
        self._record(batch, result)

    def _record(self, batch, result):
        batch.lens = len(result.draft.lens)
