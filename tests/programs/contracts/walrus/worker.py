"""The draft is bound by a walrus in a condition; the other branch returns without it."""
from .scheduler import Draft, Result


class DraftWorker:
    def forward(self, batch) -> Result:
        if (lens := batch.lens) is not None:
            return Result(tokens=[1], draft=Draft(lens=lens))
        return Result(tokens=[1])
