"""A loop over a display leaves its target at the last item, or at one before where it breaks."""
from .scheduler import Draft, Result


class DraftWorker:
    def forward(self, batch) -> Result:
        for out in (Result(tokens=[1], draft=Draft(lens=[])), Result(tokens=[2])):
            if batch.stop:
                break
        return out
