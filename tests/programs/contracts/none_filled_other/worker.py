"""A draft given under a test of something else leaves the helper's None where it is skipped."""
from typing import Optional

from .scheduler import Draft, Result


class DraftWorker:
    def forward(self, batch) -> Result:
        draft = self.make(batch)
        if batch.retry:
            draft = Draft(lens=[])
        return Result(tokens=[1], draft=draft)

    def make(self, batch) -> Optional[Draft]:
        return None if batch.idle else Draft(lens=[len(batch)])
