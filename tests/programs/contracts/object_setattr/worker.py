"""The draft cleared for idle batches by `object.__setattr__` (as a frozen dataclass is written)."""
from .scheduler import Draft, Result


class DraftWorker:
    def forward(self, batch) -> Result:
        result = Result(tokens=[1], draft=Draft(lens=[len(batch)]))
        if batch.idle:
            object.__setattr__(result, "draft", None)
        return result
