"""Tuple unpacking of returned objects and of functions."""


class Reader:
    def read(self):
        pass


class Writer:
    def write(self):
        pass


def make_pair():
    return Reader(), Writer()


def ping():
    pass


def pong():
    pass


def main():
    r, w = make_pair()
    r.read()
    w.write()
    x, y = ping, pong
    y()
    (p, q), z = (ping, pong), ping
    q()
    first, *rest = [pong, ping]
    first()
