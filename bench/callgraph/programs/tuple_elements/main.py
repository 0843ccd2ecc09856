"""Functions stored in tuples and called by index."""


def start():
    pass


def stop():
    pass


PAIR = (start, stop)


def make():
    return (start, stop)


def main():
    PAIR[1]()
    make()[0]()
