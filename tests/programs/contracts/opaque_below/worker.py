"""The draft is handed to a pool that nothing in the tree resolves: it may clear the draft's lens
(not the result's draft itself), which the scheduler reads below the draft."""
from .scheduler import Draft, Result


class DraftWorker:
    def forward(self, batch) -> Result:
        result = Result(tokens=[1], draft=Draft(lens=[len(batch)]))
        self.pool.release(result.draft)
        return result
