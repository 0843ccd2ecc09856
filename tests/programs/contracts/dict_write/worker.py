"""The draft cleared for idle batches through the result's `__dict__`."""
from .scheduler import Draft, Result


class DraftWorker:
    def forward(self, batch) -> Result:
        result = Result(tokens=[1], draft=Draft(lens=[len(batch)]))
        if batch.idle:
            result.__dict__["draft"] = None
        return result
