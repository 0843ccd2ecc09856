"""The draft is made inside `with contextlib.suppress(...)`: an error there skips the write and
the step goes on to return the result without it."""
import contextlib

from .scheduler import Draft, Result


class DraftWorker:
    def forward(self, batch) -> Result:
        result = Result(tokens=[1])
        with contextlib.suppress(RuntimeError):
            result.draft = Draft(lens=self.propose(batch))
        return result

    def propose(self, batch) -> list:
        return [len(batch)]
