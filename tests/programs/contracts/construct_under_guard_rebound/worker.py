"""... but bound to None again under the test, the local is None where the result is built."""
from .scheduler import Draft, Result


class DraftWorker:
    def forward(self, batch) -> Result:
        draft = Draft(lens=batch.lens) if batch.lens is not None else None
        if draft is not None:
            draft = None
            return Result(tokens=[1], draft=draft)
        return Result(tokens=[1], draft=Draft(lens=[]))
