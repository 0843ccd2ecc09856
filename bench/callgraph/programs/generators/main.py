"""Generators: iterating one yields what it yields (`yield f`, `yield from other()`)."""


def step_one():
    pass


def step_two():
    pass


def extra():
    pass


def steps():
    yield step_one
    yield step_two


def more():
    yield from steps()
    yield extra


def run_more():
    for step in more():
        step()


def main():
    for step in steps():
        step()
    run_more()
