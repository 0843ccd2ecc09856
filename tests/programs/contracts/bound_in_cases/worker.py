"""The result bound in each case of a match with a wildcard; the idle case's has no draft."""
from .scheduler import Draft, Result


class DraftWorker:
    def forward(self, batch) -> Result:
        match batch.mode:
            case "idle":
                out = Result(tokens=[1])
            case _:
                out = Result(tokens=[1], draft=Draft(lens=[1]))
        return out
