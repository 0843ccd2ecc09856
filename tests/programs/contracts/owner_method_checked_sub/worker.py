"""A worker that always returns a draft, without lengths when the batch is idle."""
from .scheduler import Draft, Result


class DraftWorker:
    def forward(self, batch) -> Result:
        if batch.idle:
            return Result(tokens=[1], draft=Draft())
        return Result(tokens=[1], draft=Draft(lens=[1]))
