"""Functions handed to the builtins that call them: map, filter, sorted/max(key=), functools.reduce."""
from functools import reduce


def double(x):
    return x * 2


def positive(x):
    return x > 0


def length(s):
    return len(s)


def score(x):
    return -x


def add(a, b):
    return a + b


def make(x):
    def get():
        return x

    return get


def main():
    list(map(double, [1, 2]))
    list(filter(positive, [1, -1]))
    sorted(["a", "bb"], key=length)
    max([1, 2], key=score)
    reduce(add, [1, 2, 3])
    for getter in map(make, [1, 2]):
        getter()
