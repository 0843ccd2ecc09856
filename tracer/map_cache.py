"""A map's answer for an unchanged tree: what ``spectrace map`` wrote, kept under a key of
everything it depends on, so the same map asked for again on the same tree is read back rather
than built again (which, warm, still unpickles every module it reaches and resolves every call).

The key covers spectrace's version and the map's own code (every source file of the tracer and of
spectrace's top-level modules), the arguments that shape the output, the tree's place, version and
origin, and the tree itself (``tree.fingerprint``: every file's path, size, mtime, ctime and inode,
at least what the index's pack trusts), and the renderers' outside parts where a format uses them
(networkx and the graphviz package for every format but json, the ``dot`` program for svg and
png). An edited, added or removed file makes a new key. ``map --no-result-cache``,
``SPECTRACE_MAP_RESULT_CACHE=0`` or ``SPECTRACE_NO_CACHE`` build the map every time.

Only the standard library and the two small modules below are imported here: on a hit, the
parser, the resolver and networkx are never loaded.
"""

from __future__ import annotations

import hashlib
import importlib.util
import os
import pickle
import shutil
from dataclasses import dataclass
from pathlib import Path

import spectrace
from spectrace.atomic import atomic_write
from spectrace.tracer.cache_layout import MAP_RESULT_PREFIX, index_cache_root, pack_path
from spectrace.tracer.tree import TreeState, read_tree, source_packages

RESULT_FORMAT = 1  # bump when what is kept changes
KEEP = 32  # map results kept per cache; the least recently used beyond that are removed
GRAPHVIZ_FORMATS = ("svg", "png")


@dataclass(frozen=True)
class MapRequest:
    """What a map command asks for: everything that shapes its output."""

    roots: tuple[str, ...]
    depth: int
    fmt: str
    include: tuple[str, ...]
    exclude: tuple[str, ...]
    external: bool
    field: str | None
    owner: str | None
    cha: bool
    exact: bool
    closures: str
    lambdas: str
    collapse_by: str | None
    max_nodes: int | None


@dataclass(frozen=True)
class MapAnswer:
    """What a map command wrote: its output, its summary line, the files it could not parse."""

    data: str | bytes
    summary: str
    skipped: tuple[str, ...]


def enabled() -> bool:
    return os.environ.get("SPECTRACE_MAP_RESULT_CACHE", "1") != "0" and not os.environ.get("SPECTRACE_NO_CACHE")


def _code_files() -> list[Path]:
    """The map's code: spectrace's top-level modules (sources, sides, output) and the tracer."""
    import spectrace.tracer

    files = sorted(Path(spectrace.__file__).parent.glob("*.py"))
    for root in spectrace.tracer.__path__:
        files += sorted(Path(root).glob("*.py"))
    return files


def _file_state(path: str | None) -> str:
    if not path:
        return "absent"
    try:
        st = os.stat(path)
    except OSError:
        return "absent"
    return f"{os.path.realpath(path)}\0{st.st_size}\0{st.st_mtime_ns}"


def _module_state(name: str) -> str:
    """Where an installed module lies and its state, without importing it."""
    try:
        spec = importlib.util.find_spec(name)
    except (ImportError, ValueError):
        return "absent"
    return _file_state(spec.origin if spec is not None else None)


class MapResults:
    """The cached answer of one map command on one tree (``key`` is computed when first asked)."""

    def __init__(self, source, request: MapRequest):
        self.source = source
        self.request = request
        self._key: str | None = None
        self.tree: TreeState | None = None  # the tree's files and fingerprint, once the key is made

    @property
    def key(self) -> str:
        if self._key is None:
            self._key = self._compute_key()
        return self._key

    def _compute_key(self) -> str:
        source = self.source
        packages = source_packages(source)
        h = hashlib.blake2b(digest_size=16)
        h.update(repr((RESULT_FORMAT, spectrace.__version__, str(Path(source.root).resolve()), source.version,
                       source.origin, packages, self.request)).encode())
        for f in _code_files():
            h.update(f"{f.name}\0".encode())
            h.update(f.read_bytes())
        if self.request.fmt != "json":
            h.update(f"{_module_state('networkx')}\0{_module_state('graphviz')}".encode())
        if self.request.fmt in GRAPHVIZ_FORMATS:
            h.update(_file_state(shutil.which("dot")).encode())
        self.tree = read_tree(Path(source.root), packages)
        h.update(self.tree.fingerprint.encode())
        return h.hexdigest()

    @property
    def path(self) -> Path:
        return pack_path(index_cache_root(), Path(self.source.root)).with_name(f"{MAP_RESULT_PREFIX}{self.key}.pkl")

    def load(self) -> MapAnswer | None:
        try:
            with open(self.path, "rb") as fh:
                answer = pickle.load(fh)
            os.utime(self.path)  # most recently used: kept longest
        except (OSError, EOFError, pickle.UnpicklingError, AttributeError, ImportError, ValueError):
            return None
        return answer if isinstance(answer, MapAnswer) else None

    def store(self, answer: MapAnswer) -> None:
        """Keep ``answer``; a cache that cannot be written only costs the next run its speed."""
        from spectrace.tracer.summary_cache import report_write_failure

        path = self.path
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            atomic_write(path, pickle.dumps(answer, protocol=pickle.HIGHEST_PROTOCOL), durable=False)
            kept = sorted(path.parent.glob(f"{MAP_RESULT_PREFIX}*.pkl"), key=_last_used)
            for old in kept[:-KEEP]:
                old.unlink(missing_ok=True)
        except OSError as exc:
            report_write_failure(str(exc))


def _last_used(path: Path) -> int:
    try:
        return path.stat().st_mtime_ns
    except OSError:
        return 0  # removed meanwhile by another process
