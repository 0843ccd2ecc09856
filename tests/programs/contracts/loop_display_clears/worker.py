"""A loop over a display holding the result writes the result through its target."""
from .scheduler import Draft, Result


class DraftWorker:
    def forward(self, batch) -> Result:
        result = Result(tokens=[1], draft=Draft(lens=[1]))
        for r in [result]:
            if batch.idle:
                r.draft = None
        return result
