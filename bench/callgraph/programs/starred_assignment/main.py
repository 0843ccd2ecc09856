"""Starred assignment: each target gets its items (`a, *rest = f, g, h`; `*init, last = [...]`)."""


def first():
    pass


def second():
    pass


def third():
    pass


def fourth():
    pass


def unpack_front():
    head, *rest = first, second, third
    head()
    rest[0]()
    rest[1]()


def unpack_back():
    *init, tail = [third, fourth]
    tail()


def main():
    unpack_front()
    unpack_back()
