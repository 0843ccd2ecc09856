"""setattr over a literal list of field names clears the draft."""
from .scheduler import Draft, Result


class DraftWorker:
    def forward(self, batch) -> Result:
        result = Result(tokens=[1], draft=Draft(lens=[1]))
        if batch.reset:
            for name in ("draft",):
                setattr(result, name, None)
        return result
