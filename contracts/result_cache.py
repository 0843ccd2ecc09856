"""The check's answer for an unchanged tree: a report cached under a key of everything it depends
on, so a check repeated on the same tree (pre-commit, CI, the patch engine's before and after
gates on an unpatched file set) reads it back instead of analysing again.

The key covers the checker's own code (every source file of the contracts and tracer packages),
the catalog as loaded (contracts, roles, assumptions), ``strict``, the tree's place, version and
origin, and the tree itself: every file below its package directory by path, size, mtime, ctime
and inode, the same kind of fingerprint the index's pack trusts. Any edit, added or removed file
makes a new key. Set ``SPECTRACE_CONTRACTS_RESULT_CACHE=0`` (or ``check --no-result-cache``) to
analyse every time.
"""

from __future__ import annotations

import hashlib
import os
import pickle
from dataclasses import replace
from pathlib import Path

from spectrace.atomic import atomic_write
from spectrace.contracts.cache_warnings import warn_cache_unusable

RESULT_CACHE_VERSION = 1
KEEP = 32  # reports kept; the oldest beyond that are removed


def enabled() -> bool:
    return os.environ.get("SPECTRACE_CONTRACTS_RESULT_CACHE", "1") != "0"


def results_dir() -> Path:
    from spectrace.source import cache_dir

    return cache_dir() / "contracts" / f"results-v{RESULT_CACHE_VERSION}"


def _code_files() -> list[Path]:
    """The checker's sources: the contracts and tracer packages, and the modules of spectrace's own
    that the analysis uses (sides, source)."""
    import spectrace.contracts
    import spectrace.sides
    import spectrace.source
    import spectrace.tracer

    files = [Path(spectrace.sides.__file__), Path(spectrace.source.__file__)]
    for package in (spectrace.contracts, spectrace.tracer):
        for root in package.__path__:
            files += sorted(f for f in Path(root).rglob("*") if f.suffix in (".py", ".toml") and f.is_file())
    return files


def _code_fingerprint(h) -> None:
    for f in _code_files():
        h.update(f"{f.name}\0".encode())
        h.update(f.read_bytes())


def _tree_fingerprint(h, top: Path) -> None:
    stack = [top]
    entries = []
    while stack:
        d = stack.pop()
        with os.scandir(d) as it:
            for e in it:
                if e.is_dir(follow_symlinks=False):
                    if e.name != "__pycache__":
                        stack.append(Path(e.path))
                elif e.is_file():
                    st = e.stat()
                    entries.append(f"{e.path}\0{st.st_size}\0{st.st_mtime_ns}\0{st.st_ctime_ns}\0{st.st_ino}")
    h.update("\n".join(sorted(entries)).encode())


def report_key(source, contracts, strict: bool) -> str:
    h = hashlib.sha256(f"{RESULT_CACHE_VERSION}\0{strict}\0{source.root}\0{source.version}\0"
                       f"{getattr(source, 'origin', '')}\0".encode())
    h.update(repr([(c, ) for c in contracts]).encode())
    h.update(repr((getattr(contracts, "roles", None), getattr(contracts, "assumptions", None))).encode())
    _code_fingerprint(h)
    _tree_fingerprint(h, Path(source.package_dir))
    return h.hexdigest()[:32]


def load(key: str):
    path = results_dir() / f"{key}.pkl"
    try:
        with open(path, "rb") as fh:
            report = pickle.load(fh)
        os.utime(path)  # most recently used: kept longest
        return report
    except (OSError, pickle.UnpicklingError, EOFError, AttributeError, ImportError):
        return None


def store(key: str, report) -> None:
    """Keep ``report`` without the extraction's open index (the tree is re-opened when asked)."""
    x = report.extraction
    kept = replace(report, extraction=replace(x)) if x is not None else report
    if x is not None and getattr(x, "_roles", None) is not None:
        kept.extraction._roles = x._roles
    d = results_dir()
    try:
        d.mkdir(parents=True, exist_ok=True)
        atomic_write(d / f"{key}.pkl", pickle.dumps(kept, protocol=pickle.HIGHEST_PROTOCOL), durable=False)
        old = sorted(d.glob("*.pkl"), key=lambda p: p.stat().st_mtime_ns)[:-KEEP]
        for p in old:
            p.unlink(missing_ok=True)
    except OSError as exc:
        warn_cache_unusable("contract results", exc)
