"""A bare decorator that returns a wrapper."""


def traced(fn):
    def wrapper(*args, **kwargs):
        record()
        return fn(*args, **kwargs)
    return wrapper


def record():
    pass


@traced
def work():
    pass


def main():
    work()
