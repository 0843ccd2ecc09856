"""A nested function that writes the result through its free variable, where it is called."""
from .scheduler import Draft, Result


class DraftWorker:
    def forward(self, batch) -> Result:
        result = Result(tokens=[1], draft=Draft(lens=[1]))

        def clear():
            result.draft = None

        if batch.idle:
            clear()
        return result
