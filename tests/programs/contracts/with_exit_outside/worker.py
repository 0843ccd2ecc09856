"""A context manager of the tree that takes `__exit__` from a class outside it: whether it
swallows what its body raises (and the step returns without the draft) is not decided."""
from outside_lib import Tolerant

from .scheduler import Draft, Result


class Guarded(Tolerant):
    pass


class DraftWorker:
    def forward(self, batch) -> Result:
        result = Result(tokens=[1])
        with Guarded():
            result.draft = Draft(lens=[len(batch)])
        return result
