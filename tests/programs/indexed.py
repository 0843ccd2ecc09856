"""A literal index into a list or tuple display picks that item, unless the list is reordered;
``dict(key=value)`` is a dict display."""


def a():
    pass


def b():
    pass


def c():
    pass


TABLE = [a, b]


def first():
    TABLE[0]()


def last():
    fs = [a, b, c]
    fs[-1]()


def literal():
    (a, b)[1]()


def reordered():
    fs = [a, b]
    fs.sort(key=id)
    fs[0]()


def by_key():
    table = dict(ls=c)
    table["ls"]()
