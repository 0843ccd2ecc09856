"""`vars(result).update(draft=None)` clears the draft for an idle batch: a write of each keyword."""
from .scheduler import Draft, Result


class DraftWorker:
    def forward(self, batch) -> Result:
        result = Result(tokens=[1], draft=Draft(lens=[len(batch)]))
        if batch.idle:
            vars(result).update(draft=None)
        return result
