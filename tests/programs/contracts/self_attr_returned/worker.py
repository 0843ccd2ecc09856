"""The result kept on the worker, then returned from there: the kept value."""
from .scheduler import Draft, Result


class DraftWorker:
    def forward(self, batch) -> Result:
        if batch.idle:
            out = Result(tokens=[1])
        else:
            out = Result(tokens=[1], draft=Draft(lens=[1]))
        self.last = out
        return self.last
