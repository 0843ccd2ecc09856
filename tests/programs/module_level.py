"""Calls in module-level code, class bodies and bare decorators belong to the module."""


def register(fn):
    return fn


def setup():
    return 1


@register
def handler():
    pass


class Config:
    value = setup()


setup()
