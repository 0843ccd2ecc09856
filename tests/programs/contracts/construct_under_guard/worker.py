"""The result is built with the local draft under `if draft is not None:`: it is set there."""
from .scheduler import Draft, Result


class DraftWorker:
    def forward(self, batch) -> Result:
        draft = Draft(lens=batch.lens) if batch.lens is not None else None
        if draft is not None:
            return Result(tokens=[1], draft=draft)
        return Result(tokens=[1], draft=Draft(lens=[]))
