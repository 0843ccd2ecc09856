"""Decorators: a bare @d calls d; calling a decorated function calls the wrapper d defines, which
calls the original; a decorator that returns the function as it is changes nothing."""
import functools


def log():
    pass


def traced(fn):
    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        log()
        return fn(*args, **kwargs)

    return wrapper


def register(fn):
    return fn


def retry(times):
    def decorator(fn):
        def again(*args):
            return fn(*args)

        return again

    return decorator


@traced
def work():
    pass


@register
def plain():
    pass


@retry(3)
def flaky():
    pass


class Service:
    @traced
    def handle(self):
        pass


def main():
    work()
    plain()
    flaky()
    Service().handle()
