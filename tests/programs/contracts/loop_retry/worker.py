"""A retry loop whose `else` raises: the only way past it is the `break` after the step's result."""
from .scheduler import Draft, Result


class DraftWorker:
    def forward(self, batch) -> Result:
        for _ in range(2):
            try:
                out = self.step(batch)
            except RuntimeError:
                continue
            break
        else:
            raise RuntimeError("the step failed twice")
        return out

    def step(self, batch) -> Result:
        return Result(tokens=[1], draft=Draft(lens=[len(batch)]))
