"""... and handed to a helper that calls it when it likes: when the local is rebound is not known."""
from .scheduler import Draft, Result


class DraftWorker:
    def forward(self, batch) -> Result:
        draft = None

        def build():
            nonlocal draft
            draft = Draft(lens=[len(batch)])

        self.later(build)
        return Result(tokens=[1], draft=draft)

    def later(self, fn):
        fn()
