"""The on-disk cache of module summaries: bundles of pickles by file content, one pack per source tree.

A cache that cannot be read is a miss; one that cannot be written only costs speed, so either
failure lets the run go on. A write failure is reported once per process on stderr, with its
cause, so that a read-only or full cache directory does not go unnoticed.
"""

from __future__ import annotations

import gc
import hashlib
import os
import pickle
import sys
from pathlib import Path

from spectrace.atomic import atomic_write
# (spectrace.cache reads SUMMARY_FORMAT here)
from spectrace.tracer.cache_layout import SUMMARY_FORMAT, index_cache_root, pack_path  # noqa: F401
from spectrace.tracer.index import ModuleSummary, light_summary, lighten, outline_summary, summarize_source


# What an unreadable entry raises: absent or unreadable file (OSError), truncated (EOFError),
# corrupt (UnpicklingError), written by an older layout of the classes (AttributeError).
_UNREADABLE = (OSError, EOFError, pickle.UnpicklingError, AttributeError)

_write_failure_reported = False


def report_write_failure(cause: str) -> None:
    """Say once per process that the cache could not be written, and why."""
    global _write_failure_reported
    if not _write_failure_reported:
        _write_failure_reported = True
        print(f"spectrace: warning: cannot write the index cache ({cause}); going on without it, "
              "which only costs speed", file=sys.stderr)


def content_key(data: bytes) -> str:
    return hashlib.blake2b(data, digest_size=16).hexdigest()


class SummaryCache:
    """Summaries keyed by content hash, plus a per-tree pack for the warm path.

    The pack maps each file to (size, mtime_ns, content key); a file whose size and mtime
    match is taken from the pack without being read; any other file is hashed, and a
    summary cached under its hash is reused, so a changed file is re-read alone.

    The summaries a process parses are written together by ``flush``, as one bundle file: creating
    a file costs up to a millisecond of system time on some filesystems, and a cold map parses a
    few hundred modules. A bundle is a header (content key -> offset and length) and the pickles;
    a reader loads the headers of every bundle once and reads only the pickles it needs.
    """

    def __init__(self, enabled: bool = True):
        self.enabled = enabled and not os.environ.get("SPECTRACE_NO_CACHE")
        self.root = index_cache_root()
        self._new: dict[str, bytes] = {}  # content key -> pickled summary, parsed here, not yet written
        self._bundled: dict[str, tuple[Path, int, int]] | None = None  # content key -> (bundle, offset, length)

    def get_blob(self, key: str) -> bytes | None:
        """The pickled summary of a content key (unpickling it is the caller's: a bad one is a miss)."""
        if not self.enabled:
            return None
        if key in self._new:
            return self._new[key]
        where = self._bundle_index().get(key)
        if where is None:
            return None
        path, offset, length = where
        try:
            with open(path, "rb") as fh:
                fh.seek(offset)
                return fh.read(length)
        except OSError:
            return None  # a miss: the file is parsed again and its summary written anew

    def put_blob(self, key: str, blob: bytes) -> None:
        if self.enabled:
            self._new[key] = blob

    def flush(self) -> None:
        """Write the summaries parsed since the last flush, as one bundle."""
        new, self._new = self._new, {}
        if not new:
            return
        header, offset = {}, 0
        for key, blob in new.items():
            header[key] = (offset, len(blob))
            offset += len(blob)
        head = pickle.dumps(header, protocol=pickle.HIGHEST_PROTOCOL)
        name = hashlib.blake2b("".join(sorted(new)).encode(), digest_size=12).hexdigest()
        self.write(self.root / "bundles" / f"{name}.pkl", b"".join([len(head).to_bytes(8, "little"), head, *new.values()]))

    def _bundle_index(self) -> dict[str, tuple[Path, int, int]]:
        """Where each content key is, over the bundles on disk when first asked (a bundle written
        later by another process is seen by the next process)."""
        if self._bundled is None:
            self._bundled = {}
            try:
                paths = sorted(p for p in (self.root / "bundles").iterdir() if p.suffix == ".pkl")
            except OSError:
                paths = []  # no bundle yet
            for path in paths:
                try:
                    with open(path, "rb") as fh:
                        size = int.from_bytes(fh.read(8), "little")
                        header = pickle.loads(fh.read(size))
                except (*_UNREADABLE, ValueError):
                    continue  # a damaged bundle: its summaries are parsed again
                base = 8 + size
                for key, (offset, length) in header.items():
                    self._bundled[key] = (path, base + offset, length)
        return self._bundled

    def pack_path(self, tree_root: Path) -> Path:
        return pack_path(self.root, tree_root)

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
            return {}  # no usable pack: every file goes through the bundles
        finally:
            if gc_was_on:
                gc.enable()

    def save_pack(self, tree_root: Path, pack: dict) -> None:
        """Write the per-tree pack, and the summaries parsed since the last flush."""
        if self.enabled:
            self.flush()
            self.write(self.pack_path(tree_root), pickle.dumps(pack, protocol=pickle.HIGHEST_PROTOCOL))

    def write(self, path: Path, data: bytes) -> None:
        """Replace one cache file atomically (readers see the old file or the new one)."""
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            atomic_write(path, data, durable=False)  # a lost cache file is rebuilt: no fsync
        except OSError as exc:
            report_write_failure(str(exc))


def module_stats(light: ModuleSummary) -> tuple:
    """What ``spectrace index`` reports of a module, kept beside its pickle so that a warm index
    need not unpickle it: (classes, functions, parse error or None), as its light summary counts
    them (what is defined outside function bodies)."""
    return len(light.classes), len(light.functions), light.error


# The stats of a pack entry made from a module's outline (``outline_file``), in place of its
# ``module_stats``: (OUTLINED, whether a class is defined inside a function).
OUTLINED = "outlined"


def is_outlined(entry: tuple) -> bool:
    """A pack entry made from an outline: its light summary is right unless a body hides a syntax
    error, so `index` summarises the file again and its summaries stay out of the cache by content."""
    return entry[4] is not None and entry[4][0] == OUTLINED


def outline_file(root: Path, relpath: str, pickled: bool = False):
    """(a file's light summary from its outline, whether a class is defined inside a function, its
    bytes, its pack entry: the light summary's pickle there only if ``pickled``), or None where the
    scan gives no outline."""
    path = f"{root}/{relpath}"
    st = os.stat(path)  # before reading: a file changed meanwhile is read again next time
    with open(path, "rb") as fh:
        data = fh.read()
    found = outline_summary(data, relpath)
    if found is None:
        return None
    summary, classes_in_bodies = found
    blob = pickle.dumps(summary, protocol=pickle.HIGHEST_PROTOCOL) if pickled else None
    return summary, classes_in_bodies, data, (st.st_size, st.st_mtime_ns, content_key(data), blob,
                                              (OUTLINED, classes_in_bodies), None)


def whole_key(key: str) -> str:
    """The cache key of a content's whole summary (its light one is under the content key)."""
    return key + ":whole"


def summarize_file(root: Path, relpath: str, cache: SummaryCache | None = None,
                   whole: bool = True) -> tuple[ModuleSummary, tuple]:
    """A file's summary (its whole one, or its light one) and its pack entry: (size, mtime_ns,
    content key, pickled light summary, ``module_stats``, pickled whole summary or None), from
    the cache when its content was seen before."""
    summary, entry, fresh = read_or_parse(root, relpath, cache, whole)
    if fresh and cache is not None:
        keep_blobs(cache, entry)
    return summary, entry


def keep_blobs(cache: SummaryCache, entry: tuple) -> None:
    """Put a pack entry's summaries in the cache by content."""
    cache.put_blob(entry[2], entry[3])
    if entry[5] is not None:
        cache.put_blob(whole_key(entry[2]), entry[5])


def _loads(blob: bytes | None, relpath: str) -> ModuleSummary | None:
    if blob is None:
        return None
    try:
        summary = pickle.loads(blob)
    except _UNREADABLE:
        return None
    return summary if summary.path == relpath else None


def read_or_parse(root: Path, relpath: str, cache: SummaryCache | None = None,
                  whole: bool = True) -> tuple[ModuleSummary, tuple, bool]:
    """``summarize_file`` without putting the summaries in the cache: also whether they were made
    anew (and so are worth keeping under their content key)."""
    path = root / relpath
    st = os.stat(path)  # before reading: a file changed meanwhile is read again next time
    data = path.read_bytes()
    key = content_key(data)
    dumps = pickle.dumps
    if whole:
        whole_blob = cache.get_blob(whole_key(key)) if cache is not None else None
        summary = _loads(whole_blob, relpath)
        light_blob = cache.get_blob(key) if summary is not None else None
        light = _loads(light_blob, relpath)
        fresh = light is None
        if summary is None:
            summary = summarize_source(data, relpath)
            whole_blob = dumps(summary, protocol=pickle.HIGHEST_PROTOCOL)
        if light is None:
            light = lighten(summary)
            light_blob = dumps(light, protocol=pickle.HIGHEST_PROTOCOL)
    else:
        whole_blob = None
        light_blob = cache.get_blob(key) if cache is not None else None
        summary = light = _loads(light_blob, relpath)
        fresh = summary is None
        if fresh:
            summary = light = light_summary(data, relpath)
            light_blob = dumps(light, protocol=pickle.HIGHEST_PROTOCOL)
    return summary, (st.st_size, st.st_mtime_ns, key, light_blob, module_stats(light), whole_blob), fresh


_worker_caches: dict[bool, SummaryCache] = {}


def worker_cache(enabled: bool) -> SummaryCache:
    """The cache a worker process reads through, one per process: a new one per file would read
    the headers of every bundle again for each file (most of an index of a tree whose files were
    touched but not changed, where every summary comes from the bundles)."""
    cache = _worker_caches.get(enabled)
    if cache is None:
        cache = _worker_caches[enabled] = SummaryCache(enabled)
    return cache


def summarize_in_worker(args: tuple[str, str, bool, bool]) -> tuple[str, tuple, bool]:
    """``read_or_parse`` in a pool process: the pack entry alone comes back (the summary travels
    pickled once), with whether it was parsed anew (the parent writes those)."""
    root, relpath, enabled, whole = args
    _summary, entry, fresh = read_or_parse(Path(root), relpath, worker_cache(enabled), whole)
    return relpath, entry, fresh
