class Runner:
    def __init__(self):
        self.n = 0

    def go(self):
        pass


def configure():
    pass


def compute(x):
    return x * 2
