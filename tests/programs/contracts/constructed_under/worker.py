"""A worker that steps through a fast path, built only when `fast` is asked for, which leaves the
draft unset for idle batches."""
from .scheduler import Draft, Result


class FastPath:
    def step(self, batch) -> Result:
        if batch.idle:
            return Result(tokens=[1])
        return Result(tokens=[1], draft=Draft(lens=[1]))


class SlowPath:
    def step(self, batch) -> Result:
        return Result(tokens=[1], draft=Draft(lens=[1]))


class DraftWorker:
    def __init__(self, fast: bool):
        if fast:
            self.path = FastPath()
        else:
            self.path = SlowPath()

    def forward(self, batch) -> Result:
        return self.path.step(batch)
