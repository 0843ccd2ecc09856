"""The result built from a local tuple spread after a positional argument: the draft is its item."""
from .scheduler import Draft, Result


class DraftWorker:
    def forward(self, batch) -> Result:
        rest = (Draft(lens=[len(batch)]),)
        return Result([1], *rest)
