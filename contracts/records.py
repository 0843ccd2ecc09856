"""What an extraction reports: the records each pass produces, and their stable ids.

The passes build these typed records and ``Extraction`` holds them as they are; ``check``,
``diff`` and the renderings read their attributes. ``to_json`` writes them as JSON objects with the
same names; JSON is made only there, at the edge.
"""

from __future__ import annotations

import hashlib
import os
import re
from dataclasses import asdict, dataclass, field
from pathlib import Path

from spectrace.contracts.dataclasses_scan import FieldInfo
from spectrace.contracts.facts import Guard
from spectrace.contracts.kinds import ProducerKind, ReadKind, SiteKind, plain

# the version of the JSON that extract, check and diff write (docs/schemas/contracts-*.json):
# fields are added, never renamed
SCHEMA_VERSION = 1
# counters that differ between a cold and a warm run: written only when asked for
CACHE_COUNTERS = ("functions_parsed", "functions_reused")


def portable_root(root: str, version: str, origin: str) -> str:
    """Where the tree is, in a form that does not depend on the cache folder or the machine: the
    version for a release from the cache or PyPI (what ``--sglang`` takes), else the path relative
    to the working directory when it lies below it."""
    if origin in ("cache", "pypi"):
        return version
    rel = os.path.relpath(root)
    return rel if not rel.startswith("..") else str(Path(root))


def portable_source(describe: str, root: str, version: str, origin: str) -> str:
    """``describe()`` of the source with its absolute package path made portable (left out for a
    release from the cache or PyPI: the version says which tree it is)."""
    if origin in ("cache", "pypi"):
        return re.sub(rf"\({origin}: [^)]*\)", f"({origin})", describe)
    return describe.replace(str(Path(root)), portable_root(root, version, origin)) if root else describe


@dataclass
class FieldRead:
    id: str
    field: str
    owner: str
    attribute_path: list
    file: str
    line: int
    col: int
    consumer: str
    module: str
    side: str
    guarded: bool
    guards: list[Guard]
    path_condition: str
    conditions: list  # [[text, positive]]
    early_exits: list  # tests of earlier exits in enclosing blocks (false here)
    shape: str
    via: str  # "direct", "alias <name>", "getattr"
    deref: bool  # the value is dereferenced here: deeper attribute, method call, or stored and then dereferenced
    in_test: bool  # the read is a condition itself
    kind: ReadKind
    holder: str = ""  # how the read's root comes to hold the owner
    # a read in a helper the receiving function passes its result to: that function, the call's
    # site and path condition (the read's identity is the caller's, under both conditions)
    caller: str = ""
    caller_site: str = ""
    call_condition: str = ""
    # the result's other fields that the read's conditions and early exits say are not None
    # (``if result.accept_lens is not None: ... result.next_draft_input.x``): a worker path that
    # leaves one of them None never reaches the read
    tested_set: list = field(default_factory=list)
    # why the read's root may not hold the result where it is read (an item of a dict that may be
    # changed after it was given it): a worker path that breaks it is unknown, not a violation
    unsure: str = ""


@dataclass
class Producer:
    id: str
    kind: ProducerKind
    owner: str
    fields: list  # fields set (non-None) by the construct, or the one assigned
    none_fields: list  # fields explicitly passed/assigned None
    file: str
    line: int
    function: str
    module: str
    side: str
    path_condition: str
    shape: str


@dataclass
class ReturnPath:
    worker: str  # class qualname
    method: str  # Class.method (module-free)
    file: str
    line: int
    shape: str
    path_condition: str
    conditions: list
    sets: list | None  # fields set non-None on this path; None: could not be followed
    via: list  # helper functions followed, outermost first
    unresolved: str | None = None
    deep_sets: list = field(default_factory=list)  # "field.attr" paths set non-None below a set field
    unknown: dict = field(default_factory=dict)  # "field.attr" -> why it could not be decided
    cleared: dict = field(default_factory=dict)  # path -> where this path leaves it None
    branch: str = ""  # the branches taken before the return that this path stands for


@dataclass
class ViolatingRead:
    id: str
    file: str
    line: int
    consumer: str
    shape: str
    path_condition: str
    context: str  # how the consumer gets the worker's result: "direct" or "called from f:line"


@dataclass
class ViolatingPath:
    worker: str
    method: str
    file: str
    line: int
    shape: str
    path_condition: str
    via: list
    branch: str = ""  # the branches taken before the return
    left_none: str = ""  # where the path leaves the attribute None


@dataclass
class Violation:
    id: str
    field: str
    owner: str
    read: ViolatingRead
    producer: ViolatingPath
    worker_selection: str
    message: str
    attribute_path: list = field(default_factory=list)  # the dereferenced prefix left None ("next_draft_input", "new_seq_lens")


@dataclass
class Unknown:
    """A scheduler read whose obligation a worker path could not be followed far enough to decide."""
    id: str
    field: str
    owner: str
    attribute_path: list
    read: ViolatingRead
    producer: ViolatingPath
    why: str
    message: str


@dataclass(frozen=True)
class WorkerDispatch:
    """The consumer's attribute that holds the worker: the classes it may hold, the condition under
    which each is chosen, and the worker methods the consumer calls on it."""
    targets: list[str]
    selection: dict[str, str]  # class -> rendered condition
    methods: list[str]


@dataclass(frozen=True)
class UndeclaredRead:
    """A consumer's read of an attribute that no class on its path declares."""
    attribute: str
    file: str
    line: int
    consumer: str
    shape: str
    holder: str  # the local the read goes through
    id: str
    owner: str
    suggestion: str  # the closest declared field ("" when none is close)
    declared_by_write: bool  # a worker-side write sets it: reported, not failing
    message: str


@dataclass(frozen=True)
class ProducerFunction:
    """One class's method of a producer named by a producer-sets contract, with its return paths."""
    function: str
    file: str
    line: int
    paths: list[ReturnPath]


@dataclass(frozen=True)
class Site:
    """Where a check found a contract's statement: a scheduler read, a relay's call, a worker's or a
    producer's return."""
    file: str
    line: int
    consumer: str
    shape: str
    path_condition: str
    guards: list[Guard] = field(default_factory=list)
    read_id: str = ""  # the extracted read's id (a read site)
    kind: ReadKind | SiteKind = SiteKind.RETURN

    def to_json(self) -> dict:
        return plain(asdict(self))


@dataclass(frozen=True)
class ReadSite(Site):
    """A read site; one in a helper the consumer passes its result to names that caller."""
    caller: str = ""
    caller_site: str = ""

    def to_json(self) -> dict:
        data = plain(asdict(self))
        if not self.caller:
            del data["caller"], data["caller_site"]
        return data


@dataclass(frozen=True)
class ProducerReturn(Site):
    """A named producer's return (or its ``def`` when it has none) and the fields it sets there."""
    sets: list | None = None  # None: the returned value was not followed


@dataclass
class Extraction:
    source: str
    version: str
    root: str
    owner: str
    owner_file: str
    owner_line: int
    owner_fields: list[FieldInfo]
    polymorphic: dict[str, WorkerDispatch]  # the consumer's worker attribute -> what it dispatches to
    reads: list[FieldRead] = field(default_factory=list)
    producers: list[Producer] = field(default_factory=list)
    return_paths: list[ReturnPath] = field(default_factory=list)
    violations: list[Violation] = field(default_factory=list)
    unknowns: list[Unknown] = field(default_factory=list)  # obligations not decided (an unresolved producer call)
    undeclared: list[UndeclaredRead] = field(default_factory=list)
    notes: list = field(default_factory=list)
    stats: dict = field(default_factory=dict)
    # "Class.method" asked for by ``producers=`` -> one entry per class of that name that has the
    # method ([] when the tree has none)
    producer_paths: dict[str, list[ProducerFunction]] = field(default_factory=dict)
    origin: str = ""  # how the tree was found: "cache", "pypi", "path", "installed"

    @property
    def portable_root(self) -> str:
        return portable_root(self.root, self.version, self.origin)

    @property
    def portable_source(self) -> str:
        return portable_source(self.source, self.root, self.version, self.origin)

    def to_json(self, cache_stats: bool = False) -> dict:
        """The JSON form: portable ``source``/``root``, cache counters only with ``cache_stats``."""
        data = {"schema_version": SCHEMA_VERSION, **plain(asdict(self))}
        data.update(source=self.portable_source, root=self.portable_root)
        if not cache_stats:
            data["stats"] = {k: v for k, v in self.stats.items() if k not in CACHE_COUNTERS}
        return data


def stable_id(*parts: str) -> str:
    return hashlib.sha1("\0".join(parts).encode()).hexdigest()[:10]


def read_id(field_name: str, consumer: str, shape: str, path: list) -> str:
    """Stable across line moves: field, module-free consumer, the statement's normalised shape."""
    return f"R-{field_name}-" + stable_id(field_name, consumer, re.sub(r"\s+", "", shape), ".".join(path))


def producer_id(kind: str, function: str, shape: str) -> str:
    return f"P-{kind}-" + stable_id(kind, function, re.sub(r"\s+", "", shape))


def violation_id(read: str, worker: str, method: str, shape: str) -> str:
    return "V-" + stable_id(read, worker, method, shape)


def dedupe_ids(items) -> None:
    """The same statement twice in one function: suffix the later ones (#2, #3) in source order."""
    seen: dict[str, int] = {}
    for it in sorted(items, key=lambda i: (i.file, i.line, getattr(i, "col", 0))):
        n = seen.get(it.id, 0) + 1
        seen[it.id] = n
        if n > 1:
            it.id = f"{it.id}#{n}"
