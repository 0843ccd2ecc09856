"""The assigned type wins over a base-class annotation when both are known."""


class Worker:
    def step(self):
        pass


class FastWorker(Worker):
    def step(self):
        pass


class SlowWorker(Worker):
    def step(self):
        pass


class Holder:
    def __init__(self):
        self.worker: Worker = FastWorker()
        self._draft = FastWorker()

    @property
    def draft(self) -> Worker:
        return self._draft

    def run(self):
        self.worker.step()
        self.draft.step()
