"""The draft is whatever the worker cached, or None where it cached none."""
from .scheduler import Draft, Result


class DraftWorker:
    def forward(self, batch) -> Result:
        return Result(tokens=[1], draft=getattr(self, "cached", None))
