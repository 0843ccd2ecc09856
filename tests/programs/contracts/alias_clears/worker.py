"""A write through another name of the result is a write of the result."""
from .scheduler import Draft, Result


class DraftWorker:
    def forward(self, batch) -> Result:
        result = Result(tokens=[1], draft=Draft(lens=[1]))
        alias = result
        if batch.idle:
            alias.draft = None
        return result
