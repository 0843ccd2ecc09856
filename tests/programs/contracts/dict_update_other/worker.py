"""`result.__dict__.update({...})` of other attributes leaves the draft as it is."""
from .scheduler import Draft, Result


class DraftWorker:
    def forward(self, batch) -> Result:
        result = Result(tokens=[1], draft=Draft(lens=[len(batch)]))
        result.__dict__.update({"tokens": [2]}, steps=1)
        return result
