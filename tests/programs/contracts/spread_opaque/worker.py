"""The result's keywords spread from a dict a helper builds: which fields it gives is not followed."""
from .scheduler import Draft, Result


class DraftWorker:
    def forward(self, batch) -> Result:
        fields = self.fields_of(batch)
        return Result(**fields)

    def fields_of(self, batch) -> dict:
        return {"tokens": [1], "draft": Draft(lens=[1])}
