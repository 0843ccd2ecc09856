"""Receivers built by factories: dataclass fields set from constructor arguments, ``partial``
objects passed through ``**kwargs`` dicts, properties that return an attribute."""
import functools
from dataclasses import dataclass
from functools import partial
from typing import NamedTuple


class Allocator:
    def __init__(self):
        self.pages = 0

    def alloc(self):
        pass


class PagedAllocator(Allocator):
    def flush(self):
        pass


class RingAllocator(Allocator):
    def flush(self):
        pass


class Cache:
    def reset(self):
        pass


class RadixCache(Cache):
    def reset(self):
        pass

    def backup(self):
        pass


class ChunkCache(Cache):
    pass


def make_cache(radix):
    if radix:
        return RadixCache()
    return ChunkCache()


@dataclass(frozen=True, kw_only=True)
class BuildResult:
    allocator: object
    cache: object
    size: int


class Pair(NamedTuple):
    first: object
    second: object


def build(allocator: Allocator, radix) -> BuildResult:
    cache = make_cache(radix)
    return BuildResult(allocator=allocator, cache=cache, size=1)


class Owner:
    def __init__(self):
        result = build(PagedAllocator(), True)
        self.allocator = result.allocator
        self.cache = result.cache
        self.pair = Pair(RadixCache(), PagedAllocator())

    def step(self):
        self.allocator.flush()  # declared Allocator: every override

    def clear(self):
        self.cache.reset()  # RadixCache or ChunkCache (Cache.reset)
        self.cache.backup()

    def positional(self):
        self.pair.first.backup()
        self.pair.second.flush()


class Counter:
    def publish(self, n, value):
        pass


class Worker:
    def forward(self, batch, on_publish=None, on_done=None):
        on_publish(batch)
        on_done(batch)


def done(n, value):
    pass


def run(worker: Worker, counter: Counter):
    kwargs = {}
    kwargs["on_publish"] = partial(counter.publish, 1)
    worker.forward(0, on_done=functools.partial(done, 2), **kwargs)


class Draft:
    def draft(self):
        pass


class FastDraft(Draft):
    def draft(self):
        pass


class SlowDraft(Draft):
    def draft(self):
        pass


class SpecBase:
    def __init__(self):
        self.steps = 0

    @property
    def draft_worker(self) -> Draft:
        return self._draft_worker


class FastSpec(SpecBase):
    def __init__(self):
        super().__init__()
        self._draft_worker = FastDraft()

    def forward(self):
        self.draft_worker.draft()  # the assigned FastDraft, not every Draft


class PlainSpec(SpecBase):
    def forward(self):
        self.draft_worker.draft()  # nothing assigned: the annotation, expanded
