"""A decorator factory with arguments, and an identity decorator."""


def retry(times):
    def decorate(fn):
        def wrapper(*args):
            for _ in range(times):
                fn(*args)
        return wrapper
    return decorate


def register(fn):
    REGISTRY.append(fn)
    return fn


REGISTRY = []


@retry(3)
def fetch():
    pass


@register
def handler():
    pass


def main():
    fetch()
    handler()
