"""`dataclasses.replace` that changes another field keeps the draft of the result it copies."""
from dataclasses import replace

from .scheduler import Draft, Result


class DraftWorker:
    def forward(self, batch) -> Result:
        out = Result(tokens=[1], draft=Draft(lens=[len(batch)]))
        return replace(out, tokens=[2])
