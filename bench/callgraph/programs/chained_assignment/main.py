"""Chained assignment binds every target to the value (`a = b = f`), at module level and in functions."""


def alpha():
    pass


def beta():
    pass


def gamma():
    pass


first = second = alpha
first = beta  # rebinding one target leaves the other


def main():
    second()
    first()
    x = y = gamma
    y()
    x()
