"""for loops and iter()/next() call __iter__ and __next__."""


class Countdown:
    def __init__(self, n):
        self.n = n

    def __iter__(self):
        return CountdownIter(self.n)


class CountdownIter:
    def __init__(self, n):
        self.n = n

    def __iter__(self):
        return self

    def __next__(self):
        if self.n == 0:
            raise StopIteration
        self.n -= 1
        return self.n


def gen():
    yield 1


def main():
    for _ in Countdown(3):
        pass
    it = iter(Countdown(2))
    next(it)
    for _ in gen():
        pass
