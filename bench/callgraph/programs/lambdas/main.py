"""Lambdas: their calls count as calls of the function that defines them."""


def helper(x):
    return x


def other():
    pass


def apply(fn):
    return fn(1)


def main():
    f = lambda x: helper(x)
    f(2)
    apply(lambda v: other())
    return sorted([3, 1], key=lambda n: helper(n))
