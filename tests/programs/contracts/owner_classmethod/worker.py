"""An idle batch gets the result's own empty value, built by `cls(...)` in a classmethod."""
from .scheduler import Draft, Result


class DraftWorker:
    def forward(self, batch) -> Result:
        if batch.idle:
            return Result.empty()
        return Result(tokens=[1], draft=Draft(lens=[len(batch)]))
