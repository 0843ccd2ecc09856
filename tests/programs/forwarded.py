"""``**kwargs`` handed on: the keywords reach the parameters of the function it is handed to."""


def greet():
    pass


def target(action=None, **rest):
    action()


def forward(**kwargs):
    return target(**kwargs)


def main():
    forward(action=greet)
