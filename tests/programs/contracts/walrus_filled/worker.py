"""As none_filled, with the helper's value bound by a walrus in the test."""
from typing import Optional

from .scheduler import Draft, Result


class DraftWorker:
    def forward(self, batch) -> Result:
        if (draft := self.make(batch)) is None:
            draft = Draft(lens=[])
        return Result(tokens=[1], draft=draft)

    def make(self, batch) -> Optional[Draft]:
        return None if batch.idle else Draft(lens=[len(batch)])
