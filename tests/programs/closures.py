"""Calls inside nested functions are folded into the function that defines them."""


def helper():
    pass


def other():
    pass


def outer():
    def inner():
        helper()

        def innermost():
            other()

        innermost()

    inner()
