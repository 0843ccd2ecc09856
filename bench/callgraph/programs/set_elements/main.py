"""Functions stored in sets and called while iterating."""


def a():
    pass


def b():
    pass


def c():
    pass


def main():
    hooks = {a, b}
    for hook in hooks:
        hook()
    for h in frozenset([c]):
        h()
