"""A write in a `try` body under an `if`: an error skips it inside that `if`, where the step
returns (no condition of the write's own is needed to skip it)."""
from .scheduler import Draft, Result


class DraftWorker:
    def forward(self, batch) -> Result:
        if batch.retry:
            result = Result(tokens=[1])
            try:
                result.draft = Draft(lens=self.propose(batch))
            except RuntimeError:
                pass
            return result
        return Result(tokens=[1], draft=Draft(lens=[len(batch)]))

    def propose(self, batch) -> list:
        return [len(batch)]
