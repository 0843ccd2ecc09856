"""`dataclasses.replace` of a finished result drops the draft for an idle batch."""
import dataclasses

from .scheduler import Draft, Result


class DraftWorker:
    def forward(self, batch) -> Result:
        out = Result(tokens=[1], draft=Draft(lens=[len(batch)]))
        if batch.idle:
            return dataclasses.replace(out, draft=None)
        return out
