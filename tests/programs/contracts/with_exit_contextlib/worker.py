"""Context managers of the tree taking `__exit__` from contextlib: a ContextDecorator lets an
error go up, a subclass of suppress swallows it (the draft left out)."""
import contextlib

from .scheduler import Draft, Result


class Timed(contextlib.ContextDecorator):
    def __enter__(self):
        return self


class Tolerant(contextlib.suppress):
    pass


class DraftWorker:
    def forward(self, batch) -> Result:
        if batch.retry:
            result = Result(tokens=[1])
            with Tolerant(RuntimeError):
                result.draft = Draft(lens=self.propose(batch))
            return result
        result = Result(tokens=[1])
        with Timed():
            result.draft = Draft(lens=[len(batch)])
        return result

    def propose(self, batch) -> list:
        return [len(batch)]
