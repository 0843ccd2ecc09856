"""The worker of the programs whose result decides its draft itself (their worker.py links here):
it always builds the draft."""
from .scheduler import Draft, Result


class DraftWorker:
    def forward(self, batch) -> Result:
        return Result(tokens=batch.tokens, draft=Draft(lens=[len(batch)]))
