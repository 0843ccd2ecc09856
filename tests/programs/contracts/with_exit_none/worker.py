"""The draft is made under a context manager of the tree whose `__exit__` returns nothing: what the
body raises goes on up, so every return comes after the draft is written."""
import time

from .scheduler import Draft, Result


class Timed:
    def __enter__(self):
        self.start = time.perf_counter()
        return self

    def __exit__(self, kind, value, tb):
        self.seconds = time.perf_counter() - self.start


class DraftWorker:
    def __init__(self):
        self.timer = Timed()

    def forward(self, batch) -> Result:
        result = Result(tokens=[1])
        with self.timer:
            result.draft = Draft(lens=self.propose(batch))
        return result

    def propose(self, batch) -> list:
        return [len(batch)]
