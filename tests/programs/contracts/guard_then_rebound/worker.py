"""The draft is made inside `try`; the `except` path returns a result without it."""
from .scheduler import Draft, Result


class DraftWorker:
    def forward(self, batch) -> Result:
        result = Result(tokens=[1])
        try:
            result.draft = Draft(lens=self.propose(batch))
        except RuntimeError:
            return result
        return result

    def propose(self, batch) -> list:
        return [len(batch)]
