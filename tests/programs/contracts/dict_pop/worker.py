"""`result.__dict__.pop("draft")` leaves the draft at its class default, as `del result.draft` does."""
from .scheduler import Draft, Result


class DraftWorker:
    def forward(self, batch) -> Result:
        result = Result(tokens=[1], draft=Draft(lens=[len(batch)]))
        if batch.idle:
            result.__dict__.pop("draft", None)
        return result
