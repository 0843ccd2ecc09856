"""A helper handed the draft (an attribute chain of the result, not a local) clears its lens for
idle batches."""
from .scheduler import Draft, Result


class DraftWorker:
    def forward(self, batch) -> Result:
        result = Result(tokens=[1], draft=Draft(lens=[len(batch)]))
        self.trim(result.draft, batch)
        return result

    def trim(self, draft, batch):
        if batch.idle:
            draft.lens = None
