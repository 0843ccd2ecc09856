"""Element types: loops, comprehensions, unpacking, enumerate/zip, dict views, attribute chains."""
from typing import Dict, List, Tuple


class Stats:
    def mark(self):
        pass


class Req:
    def __init__(self):
        self.stats = Stats()

    def check(self):
        pass


class Batch:
    reqs: List[Req]
    by_id: Dict[str, Req]

    def __init__(self):
        self.reqs = []
        self.by_id = {}


def pair() -> Tuple[Req, Stats]:
    return Req(), Stats()


def loop(batch: Batch):
    for req in batch.reqs:
        req.check()
        req.stats.mark()


def views(batch: Batch):
    for key, req in batch.by_id.items():
        req.check()
    for i, r in enumerate(batch.reqs):
        r.stats.mark()


def comprehension(batch: Batch):
    return [r.check() for r in batch.reqs]


def unpack():
    a, b = pair()
    b.mark()
    for r, s in zip([Req()], [Stats()]):
        s.mark()
