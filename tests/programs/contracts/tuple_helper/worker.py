"""The step's result is item 0 of a helper's tuple; the helper's idle path has no draft."""
from .scheduler import Draft, Result


class DraftWorker:
    def forward(self, batch) -> Result:
        result, _stats = self.run(batch)
        return result

    def run(self, batch):
        if batch.idle:
            return Result(tokens=[1]), None
        return Result(tokens=[1], draft=Draft(lens=[len(batch)])), len(batch)
