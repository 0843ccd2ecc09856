"""The draft is kept on the worker first, then read back into the result."""
from typing import Optional

from .scheduler import Draft, Result


class DraftWorker:
    def forward(self, batch) -> Result:
        self.last_draft = self.make_draft(batch)
        return Result(tokens=[1], draft=self.last_draft)

    def make_draft(self, batch) -> Optional[Draft]:
        if batch.idle:
            return None
        return Draft(lens=[len(batch)])
