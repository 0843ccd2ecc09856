"""A write through an item of a local list display is a write of the object it holds."""
from .scheduler import Draft, Result


class DraftWorker:
    def forward(self, batch) -> Result:
        outs = [Result(tokens=[1], draft=Draft(lens=[1]))]
        outs[0].draft = None
        return outs[0]
