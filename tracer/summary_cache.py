"""The on-disk cache of module summaries: one pickle per file content, one pack per source tree.

A cache that cannot be read is a miss; one that cannot be written only costs speed, so either
failure lets the run go on. A write failure is reported once per process on stderr, with its
cause, so that a read-only or full cache directory does not go unnoticed.
"""

from __future__ import annotations

import contextlib
import gc
import hashlib
import os
import pickle
import queue
import sys
import threading
from pathlib import Path
from typing import Iterator

from spectrace.atomic import atomic_write
from spectrace.source import cache_dir
from spectrace.tracer.index import ModuleSummary, summarize_source

SUMMARY_FORMAT = 14  # bump when the summary layout changes: old cache entries are ignored

# What an unreadable entry raises: absent or unreadable file (OSError), truncated (EOFError),
# corrupt (UnpicklingError), written by an older layout of the classes (AttributeError).
_UNREADABLE = (OSError, EOFError, pickle.UnpicklingError, AttributeError)

_write_failure_reported = False

# The cache folders this process made or found: one mkdir each, not one per file written (a
# cold map writes a summary per module it parses, spread over 256 folders).
_made_dirs: set = set()


def report_write_failure(cause: str) -> None:
    """Say once per process that the cache could not be written, and why."""
    global _write_failure_reported
    if not _write_failure_reported:
        _write_failure_reported = True
        print(f"spectrace: warning: cannot write the index cache ({cause}); going on without it, "
              "which only costs speed", file=sys.stderr)


def _cache_root() -> Path:
    return cache_dir() / "index" / f"v{SUMMARY_FORMAT}-py{sys.version_info[0]}{sys.version_info[1]}"


def content_key(data: bytes) -> str:
    return hashlib.blake2b(data, digest_size=16).hexdigest()


class SummaryCache:
    """Per-file summaries keyed by content hash, plus a per-tree pack for the warm path.

    The pack maps each file to (size, mtime_ns, content key); a file whose size and mtime
    match is taken from the pack without being read; any other file is hashed, and a
    summary cached under its hash is reused, so a changed file is re-read alone.

    ``report_failures=False`` (worker processes) keeps the first write failure in
    ``write_failure`` for the parent to report, so that a pool of workers says it once.
    """

    def __init__(self, enabled: bool = True, report_failures: bool = True):
        self.enabled = enabled and not os.environ.get("SPECTRACE_NO_CACHE")
        self.root = _cache_root()
        self.report_failures = report_failures
        self.write_failure: str | None = None
        self._behind: queue.SimpleQueue | None = None  # files for the writing thread, in order

    @contextlib.contextmanager
    def writing_behind(self) -> Iterator[None]:
        """For the length of the block, cache files are written by a thread while the caller goes
        on; all of them are written when the block ends. (Creating a file costs up to a millisecond
        of system time on some filesystems, and a cold map writes one per module it parses.)"""
        if not self.enabled or self._behind is not None:
            yield
            return
        todo: queue.SimpleQueue = queue.SimpleQueue()
        thread = threading.Thread(target=self._write_queued, args=(todo,), name="spectrace-cache-writer",
                                  daemon=True)
        thread.start()
        self._behind = todo
        try:
            yield
        finally:
            self._behind = None
            todo.put(None)
            thread.join()

    def _write_queued(self, todo: queue.SimpleQueue) -> None:
        while (item := todo.get()) is not None:
            self._write_now(*item)

    def _obj_path(self, key: str) -> Path:
        return self.root / "objects" / key[:2] / f"{key}.pkl"

    def get_blob(self, key: str) -> bytes | None:
        """The pickled summary of a content key (unpickling it is the caller's: a bad one is a miss)."""
        if not self.enabled:
            return None
        try:
            with open(self._obj_path(key), "rb") as fh:
                return fh.read()
        except OSError:
            return None  # a miss: the file is parsed again and its entry rewritten

    def put_blob(self, key: str, blob: bytes) -> None:
        if self.enabled:
            self.write(self._obj_path(key), blob)

    def pack_path(self, tree_root: Path) -> Path:
        key = hashlib.blake2b(str(tree_root.resolve()).encode(), digest_size=10).hexdigest()
        return self.root / "packs" / f"{key}.pkl"

    def load_pack(self, tree_root: Path) -> dict:
        if not self.enabled:
            return {}
        # Unpickling half a million small tuples triggers the cyclic GC over and over; none of
        # them can form a cycle, so switch it off for the load (a third of the warm start).
        gc_was_on = gc.isenabled()
        gc.disable()
        try:
            with open(self.pack_path(tree_root), "rb") as fh:
                return pickle.load(fh)
        except _UNREADABLE:
            return {}  # no usable pack: every file goes through the per-file cache
        finally:
            if gc_was_on:
                gc.enable()

    def save_pack(self, tree_root: Path, pack: dict) -> None:
        if self.enabled:
            self.write(self.pack_path(tree_root), pickle.dumps(pack, protocol=pickle.HIGHEST_PROTOCOL))

    def write(self, path: Path, data: bytes) -> None:
        """Replace one cache file atomically (readers see the old file or the new one)."""
        behind = self._behind
        if behind is not None:
            behind.put((path, data))
        else:
            self._write_now(path, data)

    def _write_now(self, path: Path, data: bytes) -> None:
        try:
            try:
                if path.parent not in _made_dirs:
                    path.parent.mkdir(parents=True, exist_ok=True)
                    _made_dirs.add(path.parent)
                atomic_write(path, data, durable=False)  # a lost cache file is rebuilt: no fsync
            except FileNotFoundError:  # its folder was removed since: make it again
                _made_dirs.discard(path.parent)
                path.parent.mkdir(parents=True, exist_ok=True)
                atomic_write(path, data, durable=False)
        except OSError as exc:
            if self.write_failure is None:
                self.write_failure = str(exc)
            if self.report_failures:
                report_write_failure(str(exc))


def module_stats(summary: ModuleSummary) -> tuple:
    """What ``spectrace index`` reports of a module, kept beside its pickle so that a warm index
    need not unpickle it: (classes, functions, call sites, parse error or None)."""
    return (len(summary.classes), len(summary.functions),
            sum(len(f.calls) for f in summary.functions.values()), summary.error)


def summarize_file(root: Path, relpath: str, cache: SummaryCache | None = None) -> tuple[ModuleSummary, tuple]:
    """A file's summary and its pack entry, (size, mtime_ns, content key, pickled summary,
    ``module_stats``), from the cache when its content was seen before."""
    summary, entry, fresh = read_or_parse(root, relpath, cache)
    if fresh and cache is not None:
        cache.put_blob(entry[2], entry[3])
    return summary, entry


def read_or_parse(root: Path, relpath: str, cache: SummaryCache | None = None) -> tuple[ModuleSummary, tuple, bool]:
    """``summarize_file`` without writing the cache: also whether the summary was parsed anew
    (and so is worth writing under its content key)."""
    path = root / relpath
    st = os.stat(path)  # before reading: a file changed meanwhile is read again next time
    data = path.read_bytes()
    key = content_key(data)
    blob = cache.get_blob(key) if cache is not None else None
    summary = None
    if blob is not None:
        try:
            summary = pickle.loads(blob)
        except _UNREADABLE:
            summary = None
    fresh = summary is None or summary.path != relpath
    if fresh:
        summary = summarize_source(data, relpath)
        blob = pickle.dumps(summary, protocol=pickle.HIGHEST_PROTOCOL)
    return summary, (st.st_size, st.st_mtime_ns, key, blob, module_stats(summary)), fresh


def summarize_in_worker(args: tuple[str, str, bool]) -> tuple[str, tuple, str | None]:
    """``summarize_file`` in a pool process: the pack entry alone comes back (the summary travels
    pickled once), with the cache's write failure for the parent to report."""
    root, relpath, enabled = args
    cache = SummaryCache(enabled, report_failures=False)
    _summary, entry = summarize_file(Path(root), relpath, cache)
    return relpath, entry, cache.write_failure
