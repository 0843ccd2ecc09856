"""A parameter annotated with a base class is what every caller passes, when each passes a known one."""


class Worker:
    def step(self):
        pass


class Fast(Worker):
    def step(self):
        pass


class Slow(Worker):
    def step(self):
        pass


class Spec:
    def __init__(self, target: Worker):
        self._target = target

    @property
    def target(self):
        return self._target

    def run(self):
        self.target.step()


def spec_class():
    return Spec


def start():
    kwargs = dict(target=Fast())
    cls = spec_class()
    return cls(**kwargs)


def any_worker(worker: Worker):
    worker.step()


def pass_through(w):
    any_worker(w)
    any_worker(Fast())
