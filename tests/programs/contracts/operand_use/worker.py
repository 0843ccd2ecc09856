"""The worker counts accepted tokens only for a batch that is not idle."""
from .scheduler import Result


class DraftWorker:
    def forward(self, batch) -> Result:
        if batch.idle:
            return Result(tokens=[1], steps=0)
        return Result(tokens=[1], accepted=[1], steps=1)
