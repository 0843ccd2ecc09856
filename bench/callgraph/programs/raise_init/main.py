"""raise A and raise A(...) construct the exception."""


class AppError(Exception):
    def __init__(self, msg="app"):
        super().__init__(msg)


class NotFound(AppError):
    pass


class Timeout(Exception):
    def __init__(self):
        super().__init__("timeout")


def find(x):
    if x:
        raise NotFound
    raise AppError("bad")


def wait():
    raise Timeout()


def main():
    try:
        find(1)
    except AppError as e:
        raise Timeout from e
