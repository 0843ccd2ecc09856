"""... every item of which has the draft: whichever the loop stops at has it."""
from .scheduler import Draft, Result


class DraftWorker:
    def forward(self, batch) -> Result:
        for out in (Result(tokens=[1], draft=Draft(lens=[])), Result(tokens=[2], draft=Draft(lens=[1]))):
            if batch.stop:
                break
        return out
