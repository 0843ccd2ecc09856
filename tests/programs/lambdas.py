"""A variable holding a lambda whose body is a call: calling it calls that call's target."""


def g():
    pass


def h(x):
    pass


def direct():
    x = lambda: g()
    x()


def own_param():
    y = lambda h: h()
    y(g)


def apply(fn):
    fn()


def passed():
    apply(lambda: h(1))


class Holder:
    def __init__(self):
        self.callback = lambda: g()

    def fire(self):
        self.callback()
