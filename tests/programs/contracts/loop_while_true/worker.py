"""`while True` left only by the `break` after the draft is set: the return after the loop has it,
the early return in the body does not."""
from .scheduler import Draft, Result


class DraftWorker:
    def forward(self, batch) -> Result:
        result = Result(tokens=[1])
        while True:
            if batch.done:
                return result
            try:
                result.draft = Draft(lens=self.propose(batch))
                break
            except RuntimeError:
                continue
        return result

    def propose(self, batch) -> list:
        return [len(batch)]
