"""A retry loop whose `else` raises, but an idle batch breaks out before the draft is set."""
from .scheduler import Draft, Result


class DraftWorker:
    def forward(self, batch) -> Result:
        result = Result(tokens=[1])
        for _ in range(2):
            if batch.idle:
                break
            result.draft = Draft(lens=[len(batch)])
            break
        else:
            raise RuntimeError("no step ran")
        return result
