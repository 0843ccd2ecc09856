"""Attributes set from constructor arguments, called in another method."""


class Disk:
    def write(self):
        pass


class Network:
    def write(self):
        pass


class Store:
    def __init__(self, backend, notifier):
        self.backend = backend
        self.notifier = notifier

    def save(self):
        self.backend.write()
        self.notifier()


def alert():
    pass


def main():
    store = Store(Disk(), alert)
    store.save()
