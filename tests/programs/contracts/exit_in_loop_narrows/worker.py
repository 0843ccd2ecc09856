"""`if draft is None: continue` in a loop: the return after it on the loop's block has a draft."""
from .scheduler import Draft, Result


class DraftWorker:
    def forward(self, batch) -> Result:
        for lens in batch.candidates:
            draft = Draft(lens=lens) if lens else None
            if draft is None:
                continue
            return Result(tokens=[1], draft=draft)
        raise RuntimeError("no candidate")
