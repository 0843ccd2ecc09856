"""Arguments flow into parameters: callbacks, bound methods, classes, keywords, **kwargs, *args,
and attributes set from constructor arguments."""
from typing import Callable


def target():
    pass


def other():
    pass


class Worker:
    def step(self):
        pass


class Engine:
    def __init__(self, worker, name="x"):
        self.worker = worker
        self.name = name

    def run(self):
        self.worker.step()


def call_it(fn):
    fn()


def call_typed(fn: Callable[[], None]):
    fn()


def call_kw(*, hook=None):
    hook()


def call_kwargs(**kwargs):
    kwargs["cb"]()


def call_args(*args):
    for a in args:
        a()


def make(factory):
    return factory()


def use_made():
    made = make(Worker)
    made.step()


def never_called(fn):
    fn()


def main():
    call_it(target)
    call_typed(Worker().step)
    call_kw(hook=other)
    call_kwargs(cb=target)
    call_args(other)
    use_made()
    Engine(Worker()).run()
