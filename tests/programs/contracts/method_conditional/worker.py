"""An override of the step defined only when a flag is on at import: it may be what runs."""
import os

from .scheduler import Draft, Result

SHORTCUT = os.environ.get("SHORTCUT") == "1"


class BaseWorker:
    def forward(self, batch) -> Result:
        return Result(tokens=[1], draft=Draft(lens=[1]))


class DraftWorker(BaseWorker):
    if SHORTCUT:

        def forward(self, batch) -> Result:
            return Result(tokens=[1])
