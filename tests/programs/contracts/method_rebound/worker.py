"""__init__ rebinds the step on the instance to a method that answers idle batches bare."""
from .scheduler import Draft, Result


class DraftWorker:
    def __init__(self):
        self.forward = self._idle_aware

    def forward(self, batch) -> Result:
        return Result(tokens=[1], draft=Draft(lens=[1]))

    def _idle_aware(self, batch) -> Result:
        if batch.idle:
            return Result(tokens=[1])
        return Result(tokens=[1], draft=Draft(lens=[1]))
