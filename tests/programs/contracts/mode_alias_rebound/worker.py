"""The worker leaves the draft out under `batch.forward_mode.is_idle()`."""
from .scheduler import Draft, Result


class DraftWorker:
    def forward(self, batch) -> Result:
        if batch.forward_mode.is_idle():
            return Result(tokens=[1])
        return Result(tokens=[1], draft=Draft(lens=[len(batch)]))
