"""An assert that the local is not None: the way that leaves it None raised there."""
from .scheduler import Draft, Result


class DraftWorker:
    def forward(self, batch) -> Result:
        draft = Draft(lens=batch.lens) if batch.lens is not None else None
        assert draft is not None
        return Result(tokens=[1], draft=draft)
