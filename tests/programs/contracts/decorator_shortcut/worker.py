"""A decorator of the tree puts its wrapper in the step's place: the wrapper answers idle
batches itself, with no draft, and calls the step for the others."""
from .scheduler import Draft, Result


def skip_idle(fn):
    def inner(self, batch):
        if batch.idle:
            return Result(tokens=[])
        return fn(self, batch)

    return inner


class DraftWorker:
    @skip_idle
    def forward(self, batch) -> Result:
        return Result(tokens=[1], draft=Draft(lens=[len(batch)]))
