"""The draft comes from functools.partial of a partial over a helper that can return None."""
import functools

from .scheduler import Draft, Result


def build_draft(width, depth, batch):
    if width == 0:
        return None
    return Draft(lens=[width, depth])


class DraftWorker:
    def forward(self, batch) -> Result:
        first = functools.partial(build_draft, batch.width)
        make = functools.partial(first, 2)
        return Result(tokens=[1], draft=make(batch))
