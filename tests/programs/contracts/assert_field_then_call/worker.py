"""A helper the result is passed to after the assert clears the field."""
from .scheduler import Draft, Result


class DraftWorker:
    def forward(self, batch) -> Result:
        result = Result(tokens=[1], draft=Draft(lens=[1]))
        assert result.draft is not None
        self.clear(result, batch)
        return result

    def clear(self, result, batch):
        if batch.idle:
            result.draft = None
