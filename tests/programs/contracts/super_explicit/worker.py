"""The step delegates from a nested function through `super(DraftWorker, self)`: the base's
idle path, which leaves the draft unset, is this worker's too."""
from .scheduler import Draft, Result


class BaseWorker:
    def forward(self, batch) -> Result:
        if batch.idle:
            return Result(tokens=[1])
        return Result(tokens=[1], draft=Draft(lens=[len(batch)]))


class DraftWorker(BaseWorker):
    def forward(self, batch) -> Result:
        def run():
            return super(DraftWorker, self).forward(batch)

        return run()
