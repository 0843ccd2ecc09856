"""An assert inside a try whose handler swallows the AssertionError: the return follows either way."""
from .scheduler import Draft, Result


class DraftWorker:
    def forward(self, batch) -> Result:
        draft = Draft(lens=batch.lens) if batch.lens is not None else None
        try:
            assert draft is not None
        except AssertionError:
            pass
        return Result(tokens=[1], draft=draft)
