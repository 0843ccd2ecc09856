"""Constructs that a text scan for function bodies must read as the tokenizer does: strings and
brackets whose lines are indented less than the body they are in, line continuations, a def inside
a string, decorators, conditional and nested definitions, property setters, one-line bodies."""

import functools
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from collections import OrderedDict  # noqa: F401

TEMPLATE = """
def not_a_function():
    pass
"""


def helper(x):
    return x + 1


def sink(*args, **kwargs):
    return args


def trace(fn):
    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        sink("before")
        return fn(*args, **kwargs)
    return wrapper


def dedented_string():
    text = """
class NotAClass:
    def method(self):
        helper(0)
"""
    return helper(len(text))


def dedented_brackets():
    table = {
"a": helper(1),
'b': [sink(2),
  3],
    }
    return table


def continued():
    total = helper(1) + \
helper(2)
    return total


def comment_at_column_zero():
    first = helper(3)
# a comment where a statement could end the body
    return sink(first)


def with_def_text():
    s = 'def fake(): pass'; t = "class Fake: pass"  # noqa: E702
    return helper(len(s + t))


def one_liner(x): return helper(x)


async def coroutine(x):
    await_me = sink(x)
    return await_me


def local_class():
    class Local:
        def run(self):
            return helper(4)
    return Local().run()


if helper(0):
    def conditional():
        return sink("yes")
else:
    def conditional():
        return sink("no")


class Holder:
    factor = staticmethod(lambda v: helper(v))

    def __init__(self):
        self.items = []
        self._x = 0

    @property
    def x(self):
        return helper(self._x)

    @x.setter
    def x(self, value):
        self._x = sink(value)

    @trace
    def decorated(self, y=(
            1, 2)) -> int:
        self.items.append(y)
        return len(self.items)

    def uses(self):
        self.x = 3
        return self.x + self.decorated() + Holder.factor(2)

    class Inner:
        def deep(self):
            return helper(5)

    def multiline_signature(self,
                            a,
                            b=")"):  # a bracket in a string of the signature
        return sink(a, b)


def main():
    h = Holder()
    h.uses()
    h.Inner().deep()
    h.multiline_signature(1)
    dedented_string()
    dedented_brackets()
    continued()
    comment_at_column_zero()
    with_def_text()
    one_liner(1)
    local_class()
    conditional()
    return coroutine(2)


def last_without_newline():
    return main()