"""Functions passed through **kwargs and called from the dict or a named parameter."""


def greet():
    pass


def farewell():
    pass


def dispatch(**kwargs):
    kwargs["action"]()


def call_named(action=None, **rest):
    action()
    rest["after"]()


def forward(*args, **kwargs):
    return call_named(*args, **kwargs)


def main():
    dispatch(action=greet)
    forward(action=greet, after=farewell)
    opts = {"action": farewell, "after": greet}
    call_named(**opts)
