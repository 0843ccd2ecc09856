"""The draft is what an awaited coroutine of the worker returns, None for an idle batch."""
from typing import Optional

from .scheduler import Draft, Result


class DraftWorker:
    async def forward(self, batch) -> Result:
        return Result(tokens=[1], draft=await self.make_draft(batch))

    async def make_draft(self, batch) -> Optional[Draft]:
        if batch.idle:
            return None
        return Draft(lens=[len(batch)])
