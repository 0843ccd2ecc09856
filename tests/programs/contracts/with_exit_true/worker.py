"""The draft is made under a context manager of the tree whose `__exit__` returns true for a
runtime error: it swallows it, and the step returns the result without the draft."""
from .scheduler import Draft, Result


class Tolerant:
    def __enter__(self):
        return self

    def __exit__(self, kind, value, tb):
        return kind is not None and issubclass(kind, RuntimeError)


class DraftWorker:
    def forward(self, batch) -> Result:
        result = Result(tokens=[1])
        with Tolerant():
            result.draft = Draft(lens=self.propose(batch))
        return result

    def propose(self, batch) -> list:
        return [len(batch)]
