"""Values the resolver follows: module-level rebinding, starred unpacking, generators, builtins that
call their arguments, builtin values' methods, constant keys, aliases of a callee."""
from collections import OrderedDict


def f1():
    pass


def f2():
    pass


def f3():
    pass


a = b = f1
a = f2
TABLE = {"one": f1, 2: f2}
TABLE["three"] = f3
KEY = 2


def rebound():
    a()
    b()


def starred():
    head, *rest = f1, f2, f3
    rest[1]()


def gen():
    yield f3


def generated():
    for g in gen():
        g()


def callbacks():
    sorted([1], key=f1)
    list(map(f2, [1]))


def strings():
    "-".join([])


def keyed():
    TABLE["one"]()
    TABLE[KEY]()


def take(fn):
    fn()


def aliased():
    t = take
    t(f3)


class Ordered(OrderedDict):
    pass


def raising():
    Ordered()
    raise ValueError
