"""`typing.cast` is its value: the step behind it returns no draft for an idle batch."""
from typing import cast

from .scheduler import Draft, Result


class DraftWorker:
    def forward(self, batch) -> Result:
        return cast(Result, self.step(batch))

    def step(self, batch):
        if batch.idle:
            return Result(tokens=[1])
        return Result(tokens=[1], draft=Draft(lens=[len(batch)]))
