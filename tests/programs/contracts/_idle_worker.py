"""The worker of the programs that differ only in how their scheduler uses the draft (their
worker.py links here): an idle batch gets no draft."""
from .scheduler import Draft, Result


class DraftWorker:
    def forward(self, batch) -> Result:
        if batch.idle:
            return Result(tokens=[1])
        return Result(tokens=[1], draft=Draft(lens=[len(batch)]))
