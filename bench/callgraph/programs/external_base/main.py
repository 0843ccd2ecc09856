"""Classes deriving from stdlib classes: own methods resolve, inherited external ones are not edges."""
import collections
import threading


class Registry(collections.OrderedDict):
    def add(self, key):
        self[key] = True
        self.check()

    def check(self):
        pass


class Special(Registry):
    def check(self):
        pass


class Worker(threading.Thread):
    def __init__(self):
        super().__init__()
        self.done = False

    def run(self):
        self.finish()

    def finish(self):
        pass


def main():
    r = Registry()
    r.add("a")
    r.clear()
    s = Special()
    s.add("b")
    s.update({})
    w = Worker()
    w.start()
    w.join()
