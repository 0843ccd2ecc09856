"""The step is an alias of the base's step, which sets the draft: the subclass's own method of that
name defined before the alias is no longer what runs."""
from .scheduler import Draft, Result


class BaseWorker:
    def forward(self, batch) -> Result:
        return Result(tokens=[1], draft=Draft(lens=[1]))


class DraftWorker(BaseWorker):
    def forward(self, batch) -> Result:
        return Result(tokens=[1])

    forward = BaseWorker.forward
