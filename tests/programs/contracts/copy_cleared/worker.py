"""A copy of the result (`copy.copy`) has its draft; the copy returned for an idle batch has it cleared."""
import copy

from .scheduler import Draft, Result


class DraftWorker:
    def forward(self, batch) -> Result:
        result = Result(tokens=[1], draft=Draft(lens=[len(batch)]))
        if batch.idle:
            result = copy.copy(result)
            result.draft = None
        return result
