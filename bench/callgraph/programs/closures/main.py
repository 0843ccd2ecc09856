"""Nested functions returned, called later, or called in place."""


def log(msg):
    pass


def make_counter():
    count = 0

    def increment():
        nonlocal count
        count += 1
        log("inc")
        return count
    return increment


def scale(x, f):
    return x * f


def make_multiplier(factor):
    def multiply(x):
        return scale(x, factor)
    return multiply


def run_inner():
    def step():
        log("step")
    step()
    step()


def main():
    counter = make_counter()
    counter()
    triple = make_multiplier(3)
    triple(2)
    run_inner()
