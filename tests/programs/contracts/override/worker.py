"""The base method calls self.prefill(); the subclass the scheduler holds overrides it."""
from .scheduler import Draft, Result


class BaseWorker:
    def forward(self, batch) -> Result:
        return self.prefill(batch)

    def prefill(self, batch) -> Result:
        return Result(tokens=[1], draft=Draft(lens=[1]))


class DraftWorker(BaseWorker):
    def prefill(self, batch) -> Result:
        return Result(tokens=[1])
