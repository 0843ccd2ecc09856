"""A write in `finally` runs after the `return` took its value: on the object returned."""
from .scheduler import Draft, Result


class DraftWorker:
    def forward(self, batch) -> Result:
        result = Result(tokens=[1], draft=Draft(lens=[len(batch)]))
        try:
            return result
        finally:
            if batch.idle:
                result.draft = None
            result = None
