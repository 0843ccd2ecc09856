"""The step returns an item of a local list display: the last, which has no draft."""
from .scheduler import Draft, Result


class DraftWorker:
    def forward(self, batch) -> Result:
        outs = [Result(tokens=[1], draft=Draft(lens=[1])), Result(tokens=[2])]
        return outs[-1]
