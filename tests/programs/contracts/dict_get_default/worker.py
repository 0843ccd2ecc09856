"""`.get(key, default)` with a draft as the default: a missing key gives the default, never None."""
from .scheduler import Draft, Result


class DraftWorker:
    def __init__(self):
        self.drafts: dict = {}

    def forward(self, batch) -> Result:
        return Result(tokens=[1], draft=self.drafts.get(batch.rid, Draft(lens=[])))
