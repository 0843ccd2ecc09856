"""The idle result's keywords spread from a dict with literal keys, the draft not among them."""
from .scheduler import Draft, Result


class DraftWorker:
    def forward(self, batch) -> Result:
        if batch.idle:
            fields = {"tokens": [1]}
            return Result(**fields)
        return Result(tokens=[1], draft=Draft(lens=[1]))
