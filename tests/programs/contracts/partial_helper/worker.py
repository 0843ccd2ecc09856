"""The draft comes from functools.partial over a helper that can return None."""
import functools

from .scheduler import Draft, Result


def build_draft(width, batch):
    if width == 0:
        return None
    return Draft(lens=[width])


class DraftWorker:
    def forward(self, batch) -> Result:
        make = functools.partial(build_draft, batch.width)
        return Result(tokens=[1], draft=make(batch))
