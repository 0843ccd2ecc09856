"""The spread tuple bound again by `+=`: what it holds then is not followed."""
from .scheduler import Draft, Result


class DraftWorker:
    def forward(self, batch) -> Result:
        args = ([1],)
        args += (Draft(lens=[len(batch)]),)
        return Result(*args)
