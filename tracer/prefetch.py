"""Parsing ahead: a second process summarises the modules a lazy walk is about to ask for.

A cold ``map`` spends most of its time parsing the modules its roots reach, one at a time, on one
core. Some of what it will ask for next is known a little ahead: before the calls of a function
are resolved, the modules its calls' names are imported from; when a module is parsed, the
modules its classes' bases come from; before a search by name, the modules it will open. Such a
list goes to one worker process, which takes it from the end while the walk goes from the start,
so the two meet in the middle. A module the walk asks for before the worker has started on it is
parsed by the walk itself. What the walk asks for does not depend on the worker (it only fills a
waiting room), so neither do the answers.
"""

from __future__ import annotations

import threading
from concurrent.futures import Future, ProcessPoolExecutor
from pathlib import Path

from spectrace.tracer.summary_cache import outline_file, read_or_parse, worker_cache

# (pack entry, parsed anew): the entry is ``summarize_file``'s
Parsed = tuple


def parse_for_pack(args: tuple[str, str, bool, bool]) -> Parsed:
    """In the worker: one file's summary, pickled as the pack keeps it. The parent stores the
    bytes, and keeps them for the cache where they were parsed anew. With ``outlined``, the light
    summary of the file's outline where the scan gives one (its bodies are the parent's to parse
    one by one)."""
    root, rel, enabled, outlined = args
    if outlined:
        found = outline_file(Path(root), rel, pickled=True)
        if found is not None:
            return found[3], False
    _summary, entry, fresh = read_or_parse(Path(root), rel, worker_cache(enabled))
    return entry, fresh


class ParseAhead:
    """One file at a time goes to the worker (a file sent is no longer the walk's to parse), the
    next as soon as the last is done (a callback in the pool's thread, hence the lock)."""

    def __init__(self, root: Path, cache_enabled: bool, outlined: bool = False):
        self.root = root
        self.cache_enabled = cache_enabled
        self.outlined = outlined  # outlines rather than whole summaries (``parse_for_pack``)
        self._whole: set[str] = set()  # while outlining: the files to parse whole all the same
        self._pool: ProcessPoolExecutor | None = None
        self._stack: list[str] = []  # wanted soon, not sent yet: the last pushed goes first
        self._sent: dict[str, Future] = {}
        self._busy = False
        self._lock = threading.RLock()  # a job done already runs its callback in the sender

    def expect(self, rels, whole: bool = False) -> None:
        """Files the walk will ask for, in the order it will (the worker starts from the last);
        ``whole``: parsed whole even while outlining."""
        with self._lock:
            if whole:
                self._whole.update(rels)
            for rel in rels:
                if rel not in self._sent:
                    if rel in self._stack:
                        self._stack.remove(rel)
                    self._stack.append(rel)
            self._send_next()

    def take(self, rel: str) -> Parsed | None:
        """The worker's result for ``rel``, waiting if it was sent; None when it was not sent (it is
        withdrawn: the asker parses it now) or the worker failed on it."""
        with self._lock:
            job = self._sent.pop(rel, None)
            if job is None:
                if rel in self._stack:
                    self._stack.remove(rel)
                return None
        try:
            return job.result()
        except Exception:  # noqa: BLE001 (the asker parses it again and reports what is wrong)
            return None

    def _send_next(self) -> None:
        """With the lock held: send the top of the stack if the worker is idle."""
        if self._busy or not self._stack:
            return
        if self._pool is None:
            self._pool = ProcessPoolExecutor(max_workers=1)
        rel = self._stack.pop()
        self._busy = True
        job = self._pool.submit(parse_for_pack, (str(self.root), rel, self.cache_enabled,
                                                  self.outlined and rel not in self._whole))
        self._sent[rel] = job
        job.add_done_callback(self._done)

    def _done(self, _job: Future) -> None:
        with self._lock:
            self._busy = False
            if self._pool is not None:
                self._send_next()

    def close(self) -> list[tuple[str, Parsed]]:
        """Stop: return what the worker finished and was not asked for (it is good for the pack)."""
        with self._lock:
            self._stack.clear()
            pool, self._pool = self._pool, None
            sent, self._sent = self._sent, {}
        done = [(rel, job.result()) for rel, job in sent.items()
                if job.done() and not job.cancelled() and job.exception() is None]
        if pool is not None:
            pool.shutdown(wait=False, cancel_futures=True)
        return done
