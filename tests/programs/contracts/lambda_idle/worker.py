"""The draft comes from a lambda that yields None for an idle batch."""
from .scheduler import Draft, Result


class DraftWorker:
    def forward(self, batch) -> Result:
        make = lambda b: Draft(lens=[1]) if not b.idle else None  # noqa: E731
        return Result(tokens=[1], draft=make(batch))
