"""Functions stored in lists and called by index."""


def first():
    pass


def second():
    pass


def third():
    pass


HANDLERS = [first, second]


def main():
    HANDLERS[0]()
    local = [third]
    local[0]()
    local.append(first)
    local[-1]()
