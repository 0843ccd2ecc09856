"""A local tested against None and bound to None again under the test: the write after it sets None."""
from .scheduler import Draft, Result


class DraftWorker:
    def forward(self, batch) -> Result:
        draft = Draft(lens=batch.lens) if batch.lens is not None else None
        result = Result(tokens=[1], draft=Draft(lens=[]))
        if draft is not None:
            draft = None
            result.draft = draft
        return result
