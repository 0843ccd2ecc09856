"""`self.reuse(batch) or Draft(...)`: the reused draft where there is one, else a new one."""
from typing import Optional

from .scheduler import Draft, Result


class DraftWorker:
    def forward(self, batch) -> Result:
        result = Result(tokens=[1])
        result.draft = self.reuse(batch) or Draft(lens=[len(batch)])
        return result

    def reuse(self, batch) -> Optional[Draft]:
        if batch.idle:
            return None
        return Draft(lens=[0])
