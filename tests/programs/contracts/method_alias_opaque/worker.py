"""The step is bound in the class body to what a factory returns: which function runs is not followed."""
from .scheduler import Draft, Result


def make_step():
    return lambda self, batch: Result(tokens=[1])


class BaseWorker:
    def forward(self, batch) -> Result:
        return Result(tokens=[1], draft=Draft(lens=[1]))


class DraftWorker(BaseWorker):
    forward = make_step()
