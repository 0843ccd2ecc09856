"""The draft is looked up in a dict with `.get(key)`: None for a batch it holds no draft for."""
from .scheduler import Draft, Result


class DraftWorker:
    def __init__(self):
        self.drafts: dict = {}

    def forward(self, batch) -> Result:
        return Result(tokens=[1], draft=self.drafts.get(batch.rid))
