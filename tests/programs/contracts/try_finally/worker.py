"""A `return` in `finally` replaces what the body returned."""
from .scheduler import Draft, Result


class DraftWorker:
    def forward(self, batch) -> Result:
        try:
            return Result(tokens=[1], draft=Draft(lens=[2]))
        finally:
            if batch.aborted:
                return Result(tokens=[])
