"""A function passed as an argument and called through the parameter."""


def double(x):
    return x * 2


def square(x):
    return x * x


def negate(x):
    return -x


def apply(fn, value):
    return fn(value)


def twice(fn, value):
    return fn(fn(value))


def run():
    apply(double, 1)
    twice(square, 2)
    twice(fn=negate, value=3)
