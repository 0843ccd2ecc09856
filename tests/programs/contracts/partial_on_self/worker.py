"""A functools.partial kept on `self` when the worker is built, called by its step later."""
import functools

from .scheduler import Draft, Result


def build_draft(width, batch):
    if width == 0:
        return None
    return Draft(lens=[width])


class DraftWorker:
    def __init__(self, width):
        self.make = functools.partial(build_draft, width)

    def forward(self, batch) -> Result:
        return Result(tokens=[1], draft=self.make(batch))
