"""A lambda kept on `self` when the worker is built, returning None for idle batches, called by
the step for the draft."""
from .scheduler import Draft, Result


class DraftWorker:
    def __init__(self):
        self.make = lambda b: None if b.idle else Draft(lens=[len(b)])

    def forward(self, batch) -> Result:
        return Result(tokens=[1], draft=self.make(batch))
