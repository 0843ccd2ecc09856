"""The draft comes from a helper with more ways to return than are followed one by one: the ways
past the cap (among them the `return None`) are one way not followed, not left out."""
from .scheduler import Draft, Result


class DraftWorker:
    def forward(self, batch) -> Result:
        return Result(tokens=[1], draft=self.make(batch))

    def make(self, batch):
        if batch.a:
            return self.sized(batch)
        if batch.b:
            return self.sized(batch)
        if batch.c:
            return self.sized(batch)
        if batch.d:
            return self.sized(batch)
        if batch.e:
            return self.sized(batch)
        if batch.f:
            return self.sized(batch)
        if batch.g:
            return self.sized(batch)
        if batch.h:
            return self.sized(batch)
        return None

    def sized(self, batch):
        if batch.n == 1:
            return Draft(lens=[1])
        if batch.n == 2:
            return Draft(lens=[2])
        if batch.n == 3:
            return Draft(lens=[3])
        if batch.n == 4:
            return Draft(lens=[4])
        if batch.n == 5:
            return Draft(lens=[5])
        if batch.n == 6:
            return Draft(lens=[6])
        if batch.n == 7:
            return Draft(lens=[7])
        if batch.n == 8:
            return Draft(lens=[8])
        return Draft(lens=[])
