"""An assert under an `if` of its own: the way around it reaches the return unchecked."""
from .scheduler import Draft, Result


class DraftWorker:
    def forward(self, batch) -> Result:
        draft = Draft(lens=batch.lens) if batch.lens is not None else None
        if batch.strict:
            assert draft is not None
        return Result(tokens=[1], draft=draft)
