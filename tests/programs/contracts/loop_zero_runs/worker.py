"""The draft is set in a loop's body, which runs zero times for an empty batch."""
from .scheduler import Draft, Result


class DraftWorker:
    def forward(self, batch) -> Result:
        result = Result(tokens=[1])
        for req in batch.reqs:
            result.draft = Draft(lens=[len(req)])
            break
        return result
