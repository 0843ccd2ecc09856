"""A method called on an item of a local dict that resolves to nothing of the tree may change it."""
from .scheduler import Draft, Result


class DraftWorker:
    def forward(self, batch) -> Result:
        outs = {"r": Result(tokens=[1], draft=Draft(lens=[1]))}
        outs["r"].reset()
        return outs["r"]
