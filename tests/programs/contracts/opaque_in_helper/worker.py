"""A helper of the worker hands the result, for idle batches, to a hook nothing in the tree
resolves: not decided there."""
from .scheduler import Draft, Result


class DraftWorker:
    def forward(self, batch) -> Result:
        result = Result(tokens=[1], draft=Draft(lens=[len(batch)]))
        self.finish(result, batch)
        return result

    def finish(self, result, batch):
        if batch.idle:
            self.hook.adjust(result)
