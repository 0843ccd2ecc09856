"""The step's result is a field of the NamedTuple a helper returns: a bare one for idle batches."""
from typing import NamedTuple

from .scheduler import Draft, Result


class Step(NamedTuple):
    out: Result
    idle: bool


class DraftWorker:
    def forward(self, batch) -> Result:
        return self.run(batch).out

    def run(self, batch) -> Step:
        if batch.idle:
            return Step(Result(tokens=[1]), True)
        return Step(out=Result(tokens=[1], draft=Draft(lens=[len(batch)])), idle=False)
