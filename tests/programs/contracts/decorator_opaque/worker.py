"""A decorator of the tree that returns what another object makes of the step: what runs
instead is not known."""
from .scheduler import Draft, Result


class Registry:
    def wrap(self, fn):
        return fn


REGISTRY = Registry()


def registered(fn):
    return REGISTRY.wrap(fn)


class DraftWorker:
    @registered
    def forward(self, batch) -> Result:
        return Result(tokens=[1], draft=Draft(lens=[len(batch)]))
