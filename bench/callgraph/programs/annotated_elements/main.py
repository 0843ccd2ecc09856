"""Loop variables and container elements typed only by annotations."""
from typing import Dict, List, Optional


class Task:
    def run(self):
        pass

    def cancel(self):
        pass


class Other:
    def run(self):
        pass

    def cancel(self):
        pass


class Queue:
    def __init__(self):
        self.tasks: List[Task] = []
        self.current: Optional[Task] = None
        self.by_name: Dict[str, Task] = {}

    def drain(self):
        for task in self.tasks:
            task.run()

    def first(self):
        self.tasks[0].cancel()

    def named(self, name):
        self.by_name[name].run()
        if self.current is not None:
            self.current.cancel()


def process(items: list[Task]):
    for item in items:
        item.cancel()
    items[-1].run()


def main():
    q = Queue()
    q.tasks.append(Task())
    q.by_name["x"] = Task()
    q.current = Task()
    q.drain()
    q.first()
    q.named("x")
    process([Task()])
