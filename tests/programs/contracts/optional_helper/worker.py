"""The draft comes from a helper that returns None for an idle batch."""
from typing import Optional

from .scheduler import Draft, Result


class DraftWorker:
    def forward(self, batch) -> Result:
        return Result(tokens=[1], draft=self.make_draft(batch))

    def make_draft(self, batch) -> Optional[Draft]:
        if batch.idle:
            return None
        return Draft(lens=[len(batch)])
