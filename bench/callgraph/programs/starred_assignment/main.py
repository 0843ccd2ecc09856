"""Starred assignment: each target gets its items (`a, *rest = f, g, h`; `*init, last = [...]`)."""


def one():
    pass


def two():
    pass


def three():
    pass


def four():
    pass


def unpack_front():
    head, *rest = one, two, three
    head()
    rest[0]()
    rest[1]()


def unpack_back():
    *init, tail = [three, four]
    tail()


def main():
    unpack_front()
    unpack_back()
