"""A decorator whose wrapper only passes the call on (through a local) leaves the step's
results as they are."""
import functools

from .scheduler import Draft, Result


def traced(fn):
    @functools.wraps(fn)
    def inner(self, batch):
        out = fn(self, batch)
        return out

    return inner


class DraftWorker:
    @traced
    def forward(self, batch) -> Result:
        return Result(tokens=[1], draft=Draft(lens=[len(batch)]))
