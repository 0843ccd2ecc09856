"""for over an object and with on an object call the protocol's methods the tree defines."""


class Span:
    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False


class Numbers:
    def __iter__(self):
        return NumberIter()


class NumberIter:
    def __next__(self):
        raise StopIteration


def uses():
    with Span():
        for _n in Numbers():
            pass


def plain():
    for _n in [1, 2]:
        pass
    with open("f"):
        pass
