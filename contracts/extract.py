"""Field-flow extraction of the scheduler <-> worker contracts on a result dataclass.

Pipeline (``extract(source)``):

1. **Owner**: the dataclass (``GenerationBatchResult`` by default) is found by class name across the
   tree (its module moved between releases) and its fields read from its body (``dataclasses.py``).
2. **Scope**: the files of the scheduler and speculative packages, the modules of the classes the
   index says ``Scheduler.model_worker`` can be, and every file that names the owner. Sides come
   from the index: the ``model_worker`` targets' modules and the speculative package are the worker
   side (``WORKER_PACKAGES``, configurable), everything else is the scheduler side.
3. **Facts**: libcst over the functions that mention a field or the owner (``facts.py``), cached per
   file content hash under ``spectrace.source.cache_dir()/contracts``.
4. **Holders**: per function, the names that hold an owner instance: parameters and locals annotated
   with it, results of calls that return it (``self.model_worker.forward_batch_generation(...)``,
   resolved through the index to every worker class's return annotation), aliases, constructors.
5. **Reads**: every ``holder.field`` (and ``holder.field.sub``, and ``alias.sub`` after
   ``alias = holder.field``) with its consumer, position, guards and path condition.
6. **Producers**: constructor calls with their keywords and later ``holder.field = ...`` writes; for
   each ``model_worker`` target, each return path of the scheduler-called method with the fields it
   sets non-None (following helper calls through the index).
7. **Violations**: an unguarded scheduler read of a None-default field that a worker's return path
   leaves unset, when the read's path condition, the worker's selection condition (how
   ``self.model_worker`` comes to be that class: the assignments, the factory's returns and the
   early exits before them) and the return path's condition can hold together (``conditions.py``).
"""

from __future__ import annotations

import hashlib
import os
import pickle
import re
from concurrent.futures import ProcessPoolExecutor
from dataclasses import asdict, dataclass, field
from pathlib import Path

from spectrace.contracts import conditions as C
from spectrace.contracts.dataclasses_scan import DataclassInfo, find_dataclass
from spectrace.contracts.facts import (
    FACTS_VERSION,
    FunctionFacts,
    FunctionSpan,
    facts_for_span,
    function_spans,
    span_key,
)
from spectrace.errors import SpectraceError
from spectrace.source import SglangSource, cache_dir

DEFAULT_OWNER = "GenerationBatchResult"
SCHEDULER_CLASS = "Scheduler"
POLYMORPHIC_ATTR = "model_worker"
SCOPE_PACKAGES = ("sglang/srt/managers/", "sglang/srt/speculative/")
WORKER_PACKAGES = ("sglang/srt/speculative/",)  # fallback worker side, besides the model_worker targets' modules
MAX_HOPS = 6


# ----------------------------------------------------------------- result records


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
    guards: list  # [{"kind", "text", "line"}]
    path_condition: str
    conditions: list  # [[text, positive]]
    early_exits: list  # tests of earlier exits in enclosing blocks (false here)
    shape: str
    via: str  # "direct", "alias <name>", "getattr"
    deref: bool  # the value is dereferenced here: deeper attribute, method call, or stored and then dereferenced
    in_test: bool  # the read is a condition itself
    kind: str  # "unconditional-read", "guarded-read", "check"
    holder: str = ""  # how the read's root comes to hold the owner


@dataclass
class Producer:
    id: str
    kind: str  # "construct" or "assign"
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


@dataclass
class Violation:
    id: str
    field: str
    owner: str
    read: dict  # {"id", "file", "line", "consumer", "shape", "path_condition"}
    producer: dict  # {"worker", "method", "file", "line", "shape", "path_condition", "via"}
    worker_selection: str
    message: str


@dataclass
class Extraction:
    source: str
    version: str
    root: str
    owner: str
    owner_file: str
    owner_line: int
    owner_fields: list  # [{"name", "annotation", "default", "line"}]
    polymorphic: dict  # attr -> {"targets": [...], "selection": {class: condition}}
    reads: list = field(default_factory=list)
    producers: list = field(default_factory=list)
    return_paths: list = field(default_factory=list)
    violations: list = field(default_factory=list)
    notes: list = field(default_factory=list)
    stats: dict = field(default_factory=dict)
    # "Class.method" asked for by ``producers=`` -> [{"function", "file", "line", "paths": [ReturnPath]}]
    # (one entry per class of that name that has the method; [] when the tree has none)
    producer_paths: dict = field(default_factory=dict)

    def to_json(self) -> dict:
        return asdict(self)


# ------------------------------------------------------------------- facts store


def _facts_cache_dir() -> Path:
    return cache_dir() / "contracts" / f"facts-v{FACTS_VERSION}"


def _parse_spans(spans: list[FunctionSpan]) -> list[tuple[str, list[FunctionFacts]]]:
    return [(span_key(s), facts_for_span(s)) for s in spans]


class FactsStore:
    """libcst facts per function, parsed on demand, cached per file content hash."""

    def __init__(self, root: Path, use_cache: bool = True, jobs: int | None = None):
        self.root = root
        self.use_cache = use_cache and not os.environ.get("SPECTRACE_NO_CACHE")
        self.jobs = jobs
        self._text: dict[str, str] = {}
        self._spans: dict[str, list[FunctionSpan]] = {}
        self._cache: dict[str, dict] = {}  # rel -> {span_key: [FunctionFacts]}
        self._dirty: set[str] = set()
        self._hash: dict[str, str] = {}
        self.parsed = 0
        self.reused = 0

    def text(self, rel: str) -> str:
        if rel not in self._text:
            try:
                data = (self.root / rel).read_bytes()
            except OSError:
                data = b""
            self._hash[rel] = hashlib.sha1(data).hexdigest()
            self._text[rel] = data.decode("utf-8", errors="replace")
        return self._text[rel]

    def spans(self, rel: str) -> list[FunctionSpan]:
        """Function spans of a file; their boundaries are cached with the facts (no ast parse when warm)."""
        if rel not in self._spans:
            cache = self._file_cache(rel)
            bounds = cache.get("__spans__")
            text = self.text(rel)
            if bounds is None:
                try:
                    spans = function_spans(text)
                except SyntaxError:
                    spans = []
                cache["__spans__"] = [(s.cls, s.name, s.start, s.end) for s in spans]
                self._dirty.add(rel)
            else:
                lines = text.splitlines(keepends=True)
                spans = [FunctionSpan(c, n, a, b, "".join(lines[a - 1 : b])) for c, n, a, b in bounds]
            self._spans[rel] = spans
        return self._spans[rel]

    def _file_cache(self, rel: str) -> dict:
        if rel not in self._cache:
            self.text(rel)
            entry = {}
            if self.use_cache:
                p = _facts_cache_dir() / f"{self._hash[rel]}.pkl"
                if p.is_file():
                    try:
                        entry = pickle.loads(p.read_bytes())
                    except Exception:
                        entry = {}
            self._cache[rel] = entry
        return self._cache[rel]

    def facts(self, rel: str, spans: list[FunctionSpan]) -> list[FunctionFacts]:
        """Facts for these spans of one file (parsing the ones not cached)."""
        return self.facts_many({rel: spans}).get(rel, [])

    def facts_many(self, wanted: dict[str, list[FunctionSpan]]) -> dict[str, list[FunctionFacts]]:
        todo: list[tuple[str, FunctionSpan]] = []
        for rel, spans in wanted.items():
            cache = self._file_cache(rel)
            for s in spans:
                if span_key(s) not in cache:
                    todo.append((rel, s))
        if todo:
            jobs = self.jobs if self.jobs is not None else min(os.cpu_count() or 1, 8)
            if jobs > 1 and len(todo) > 24:
                chunks = [todo[i::jobs] for i in range(jobs)]
                with ProcessPoolExecutor(jobs) as pool:
                    futures = [(chunk, pool.submit(_parse_spans, [s for _, s in chunk])) for chunk in chunks if chunk]
                    for chunk, fut in futures:
                        for (rel, _), (key, facts) in zip(chunk, fut.result()):
                            self._cache[rel][key] = facts
                            self._dirty.add(rel)
            else:
                for rel, s in todo:
                    self._cache[rel][span_key(s)] = facts_for_span(s)
                    self._dirty.add(rel)
            self.parsed += len(todo)
        self.reused += sum(len(v) for v in wanted.values()) - len(todo)
        out = {}
        for rel, spans in wanted.items():
            cache = self._cache[rel]
            out[rel] = [f for s in spans for f in cache.get(span_key(s), [])]
        return out

    def save(self):
        if not self.use_cache or not self._dirty:
            return
        d = _facts_cache_dir()
        d.mkdir(parents=True, exist_ok=True)
        for rel in self._dirty:
            tmp = d / f".{self._hash[rel]}.{os.getpid()}.tmp"
            tmp.write_bytes(pickle.dumps(self._cache[rel], protocol=pickle.HIGHEST_PROTOCOL))
            os.replace(tmp, d / f"{self._hash[rel]}.pkl")
        self._dirty.clear()


# ------------------------------------------------------------------- helpers


def module_of_rel(rel: str) -> str:
    mod = rel[:-3].replace("/", ".")
    return mod[: -len(".__init__")] if mod.endswith(".__init__") else mod


def _mentions(text: str | None, name: str) -> bool:
    return bool(text) and re.search(rf"\b{re.escape(name)}\b", text) is not None


def _dominates(earlier_blocks: list, later_blocks: list) -> bool:
    return later_blocks[: len(earlier_blocks)] == earlier_blocks


def _rename_self_attrs(text: str, rename: dict) -> str:
    for old, new in rename.items():
        text = re.sub(rf"\bself\.{re.escape(old)}\b", f"self.{new}", text)
    return text


def _covers(write_blocks: list[list[str]], prefix: list[str]) -> bool:
    """Do writes at these block paths happen on every path through the blocks below ``prefix``?"""
    if any(wb == prefix for wb in write_blocks):
        return True
    below = [wb for wb in write_blocks if wb[: len(prefix)] == prefix and len(wb) > len(prefix)]
    ifs = {wb[len(prefix)][:-1] for wb in below if wb[len(prefix)].endswith(("b", "e"))}
    return any(_covers(below, prefix + [f"{line}b"]) and _covers(below, prefix + [f"{line}e"]) for line in ifs)


def _stable_id(prefix: str, *parts: str) -> str:
    return hashlib.sha1("\0".join(parts).encode()).hexdigest()[:10]


ASSUMPTIONS_FILE = Path(__file__).parent / "catalog" / "assumptions.toml"


def load_assumptions(path: Path | None = None) -> list[dict]:
    try:
        import tomllib
    except ImportError:  # pragma: no cover - python 3.10
        import tomli as tomllib
    p = Path(path) if path else ASSUMPTIONS_FILE
    if not p.is_file():
        return []
    return list(tomllib.loads(p.read_text()).get("assumption", []))


def _load_project(source: SglangSource):
    try:
        from spectrace.tracer.project import Project
    except Exception:  # pragma: no cover - the index is part of the package
        return None
    try:
        return Project(source)
    except Exception:
        return None


# ------------------------------------------------------------------- the extractor


class Extractor:
    def __init__(self, source: SglangSource, owner: str = DEFAULT_OWNER, project=None, use_cache: bool = True,
                 jobs: int | None = None, worker_packages=WORKER_PACKAGES, scope_packages=SCOPE_PACKAGES,
                 assumptions: list[dict] | None = None, producers: dict[str, list[str]] | None = None):
        # named producers ("Class.method" -> extra attribute names to follow besides the owner's
        # fields, e.g. a marker a patch sets on the result): their return paths are computed too
        self.producers = dict(producers or {})
        self.source = source
        self.root = Path(source.root)
        self.owner_name = owner
        self.project = project if project is not None else _load_project(source)
        self.store = FactsStore(self.root, use_cache=use_cache, jobs=jobs)
        self.worker_packages = tuple(worker_packages)
        self.scope_packages = tuple(scope_packages)
        self.notes: list[str] = []
        self._func_index: dict[str, tuple[str, FunctionFacts]] = {}  # module.qualname -> (rel, facts)
        self.assumptions = load_assumptions() if assumptions is None else assumptions
        self.assumptions_used: set[str] = set()

    # -- files
    def all_files(self) -> list[str]:
        if self.project is not None:
            return sorted(self.project.files.values())
        out = []
        for dirpath, dirnames, filenames in os.walk(self.root / "sglang"):
            dirnames[:] = sorted(d for d in dirnames if not d.startswith((".", "__pycache__")))
            for fn in filenames:
                if fn.endswith(".py"):
                    out.append(os.path.relpath(os.path.join(dirpath, fn), self.root).replace(os.sep, "/"))
        return sorted(out)

    def rel_of_module(self, module: str) -> str | None:
        if self.project is not None:
            return self.project.files.get(module)
        for cand in (module.replace(".", "/") + ".py", module.replace(".", "/") + "/__init__.py"):
            if (self.root / cand).is_file():
                return cand
        return None

    # -- index helpers (each degrades to a name-based answer without the index)
    def class_qn(self, module: str, cls: str | None) -> str | None:
        return f"{module}.{cls}" if cls else None

    def find_class(self, name: str) -> list[str]:
        """Qualified names of the top-level classes called ``name`` (the index's cached class-name map)."""
        if self.project is None:
            return []
        return [qn for qn in self.project.find_classes(name) if self.project.split(qn)[1] == name]

    def mro(self, class_qn: str) -> list[str]:
        return self.project.mro(class_qn) if self.project is not None else [class_qn]

    def attr_classes(self, class_qn: str, attr: str) -> list[str]:
        if self.project is None:
            return []
        return sorted({t[1] for t in self.project.attr_types(class_qn, attr) if t and t[0] == "inst"})

    def lookup_method(self, class_qn: str, name: str) -> str | None:
        return self.project.lookup_method(class_qn, name) if self.project is not None else None

    def function_facts(self, func_qn: str) -> tuple[str, FunctionFacts] | None:
        """Facts of a fully qualified function (parsed on demand)."""
        if func_qn in self._func_index:
            return self._func_index[func_qn]
        if self.project is None:
            return None
        mod, local = self.project.split(func_qn)
        if mod is None:
            return None
        rel = mod.path
        for span in self.store.spans(rel):
            name = f"{span.cls}.{span.name}" if span.cls else span.name
            if local == name or local.startswith(name + "."):
                for f in self.store.facts(rel, [span]):
                    self._func_index[f"{mod.module}.{f.qualname}"] = (rel, f)
        return self._func_index.get(func_qn)

    def resolve_callee(self, module: str, facts: FunctionFacts, callee: str) -> list[str]:
        """Fully qualified targets of ``callee`` called inside ``facts`` (self.m, self.a.m, Cls.m, f)."""
        parts = callee.split(".")
        cls_qn = self.class_qn(module, facts.cls)
        out: list[str] = []
        if self.project is None:
            return out
        if parts[0] == "self" and cls_qn:
            if len(parts) == 2:
                t = self.lookup_method(cls_qn, parts[1])
                if t:
                    out.append(t)
            elif len(parts) == 3:
                for c in self.attr_classes(cls_qn, parts[1]):
                    t = self.lookup_method(c, parts[2])
                    if t:
                        out.append(t)
            return out
        # a name or Class.method visible in the module
        try:
            t = self.project.resolve_symbol(module, parts[0])
        except Exception:
            t = None
        if t and t[0] == "func" and len(parts) == 1:
            out.append(t[1])
        elif t and t[0] == "cls" and len(parts) == 2:
            m = self.lookup_method(t[1], parts[1])
            if m:
                out.append(m)
        elif t and t[0] == "mod" and len(parts) == 2:
            t2 = self.project.resolve_symbol(t[1], parts[1])
            if t2 and t2[0] == "func":
                out.append(t2[1])
        return out

    # ---------------------------------------------------------------- extraction
    def run(self) -> Extraction:
        owner = self._find_owner()
        fields = owner.fields
        field_names = list(fields)
        self.fields = fields
        self.tracked = set(fields)  # attribute names whose writes on a result count as "set"
        targets = self._model_worker_targets()
        worker_modules = {qn.rsplit(".", 1)[0] for t in targets for qn in self.mro(t)}
        self.worker_modules = worker_modules

        files = self._scope_files(targets)
        rx = re.compile(
            r"\.(?:" + "|".join(map(re.escape, field_names)) + r")\b|\b" + re.escape(self.owner_name) + r"\b"
        )
        wanted = {rel: [s for s in self.store.spans(rel) if rx.search(s.text)] for rel in files}
        wanted = {rel: spans for rel, spans in wanted.items() if spans}
        all_facts = self.store.facts_many(wanted)
        for rel, flist in all_facts.items():
            mod = module_of_rel(rel)
            for f in flist:
                self._func_index.setdefault(f"{mod}.{f.qualname}", (rel, f))

        self._owner_returning_names = self._owner_returning_function_names(all_facts)
        reads, scheduler_writes = [], set()
        producers = []
        holder_calls: set[str] = set()
        for rel, flist in sorted(all_facts.items()):
            mod = module_of_rel(rel)
            side = self.side_of(rel, mod)
            for f in flist:
                holders, calls = self._holders(mod, f)
                holder_calls |= {c for c in calls if c.startswith(f"self.{POLYMORPHIC_ATTR}.")}
                reads.extend(self._reads(rel, mod, side, f, holders))
                producers.extend(self._producers(rel, mod, side, f, holders))
                if side == "scheduler" and any(why.startswith(f"returned by self.{POLYMORPHIC_ATTR}.") for why in holders.values()):
                    for w in f.writes:
                        if w.root in holders and len(w.attrs) == 1 and w.attrs[0] in fields and w.value.get("kind") != "none":
                            scheduler_writes.add(w.attrs[0])
        _dedupe_ids(reads)
        _dedupe_ids(producers)

        methods = sorted({c.split(".")[2] for c in holder_calls}) or ["forward_batch_generation"]
        selection = self._selection_conditions(targets)
        paths: list[ReturnPath] = []
        for t in targets:
            for meth in methods:
                fq = self.lookup_method(t, meth)
                if fq:
                    paths.extend(self._return_paths_of(t, fq))
        violations = self._violations(reads, paths, selection, scheduler_writes)
        producer_paths = self._named_producer_paths()
        if self.assumptions_used:
            self.notes.append("assumptions used to rule out violations: " + ", ".join(sorted(self.assumptions_used))
                              + " (contracts/catalog/assumptions.toml)")
        if scheduler_writes:
            self.notes.append(
                "fields the scheduler side sets itself on a result (not checked against workers): "
                + ", ".join(sorted(scheduler_writes))
            )
        self.store.save()
        if self.project is not None:
            try:
                self.project.save()
            except Exception:
                pass
        return Extraction(
            source=self.source.describe(),
            version=self.source.version,
            root=str(self.root),
            owner=self.owner_name,
            owner_file=owner.file,
            owner_line=owner.line,
            owner_fields=[asdict(v) for v in fields.values()],
            polymorphic={
                POLYMORPHIC_ATTR: {
                    "targets": targets,
                    "selection": {t: C.render_dnf(selection.get(t)) for t in targets},
                    "methods": methods,
                }
            },
            reads=[asdict(r) for r in sorted(reads, key=lambda r: (r.file, r.line, r.col, r.field))],
            producers=[asdict(p) for p in sorted(producers, key=lambda p: (p.file, p.line))],
            return_paths=[asdict(p) for p in paths],
            violations=[asdict(v) for v in violations],
            producer_paths=producer_paths,
            notes=self.notes,
            stats={"files": len(files), "functions_parsed": self.store.parsed, "functions_reused": self.store.reused},
        )

    # -- owner and scope
    def _find_owner(self) -> DataclassInfo:
        candidates = self.find_class(self.owner_name)
        rels = [self.rel_of_module(qn.rsplit(".", 1)[0]) for qn in candidates]
        if not rels:
            pattern = re.compile(rf"^class\s+{re.escape(self.owner_name)}\b", re.M)
            rels = [r for r in self.all_files() if pattern.search(self.store.text(r))]
        for rel in rels:
            if rel is None:
                continue
            info = find_dataclass(self.store.text(rel), self.owner_name, rel)
            if info is not None:
                return info
        raise SpectraceError(f"no dataclass {self.owner_name} in {self.source.describe()}")

    def _scheduler_class(self) -> str | None:
        found = [c for c in self.find_class(SCHEDULER_CLASS) if c.endswith(f"srt.managers.scheduler.{SCHEDULER_CLASS}")]
        return found[0] if found else (self.find_class(SCHEDULER_CLASS) or [None])[0]

    def _model_worker_targets(self) -> list[str]:
        sched = self._scheduler_class()
        if sched is None:
            self.notes.append("no Scheduler class found: the worker side falls back to WORKER_PACKAGES")
            return []
        self.scheduler_qn = sched
        targets = set(self.attr_classes(sched, POLYMORPHIC_ATTR))
        # adapter: the classes reached by tracing the assignments to self.model_worker (the same
        # mechanism that yields the selection conditions), qualified through the index
        self._sources = self._attr_sources(sched, POLYMORPHIC_ATTR, 0)
        sched_module = sched.rsplit(".", 1)[0]
        for _conds, short in self._sources:
            if not short:
                continue
            cands = self.find_class(short)
            # prefer the srt tree the scheduler lives in
            near = [c for c in cands if c.split(".")[:3] == sched_module.split(".")[:3]]
            targets.update(near or cands)
        if not targets:
            self.notes.append(f"no class resolved for Scheduler.{POLYMORPHIC_ATTR}")
        return sorted(targets)

    def _raw(self, rel: str) -> bytes:
        if self.project is not None:
            return self.project.file_bytes(module_of_rel(rel))
        try:
            return (self.root / rel).read_bytes()
        except OSError:
            return b""

    def _scope_files(self, targets: list[str]) -> list[str]:
        word = self.owner_name.encode()
        pattern = re.compile(rb"\b" + re.escape(word) + rb"\b")

        def mentioning():
            return [rel for rel in self.all_files()
                    if word in (data := self._raw(rel)) and pattern.search(data)]

        named = self.project.cached_scan(f"mentions-{self.owner_name}", mentioning) if self.project is not None else mentioning()
        files = set(named)
        for rel in self.all_files():
            if rel.startswith(self.scope_packages):
                files.add(rel)
        for t in targets:
            for c in self.mro(t):
                rel = self.rel_of_module(c.rsplit(".", 1)[0])
                if rel:
                    files.add(rel)
        sched = getattr(self, "scheduler_qn", None)
        if sched:
            for c in self.mro(sched):
                rel = self.rel_of_module(c.rsplit(".", 1)[0])
                if rel:
                    files.add(rel)
        return sorted(files)

    def side_of(self, rel: str, module: str) -> str:
        if module in self.worker_modules or rel.startswith(self.worker_packages):
            return "worker"
        return "scheduler"

    # -- holders
    def _owner_returning_function_names(self, all_facts) -> set[str]:
        names = set()
        for flist in all_facts.values():
            for f in flist:
                if _mentions(f.returns_annotation, self.owner_name):
                    names.add(f.name)
        return names

    def _call_returns_owner(self, module: str, facts: FunctionFacts, callee: str) -> bool:
        targets = self.resolve_callee(module, facts, callee)
        for t in targets:
            if self._function_returns_owner(t):
                return True
        if targets:
            return False
        return callee.split(".")[-1] in self._owner_returning_names

    def _function_returns_owner(self, func_qn: str) -> bool:
        if self.project is not None:
            info = self.project.func(func_qn)
            if info is not None and info.returns is not None:
                from spectrace.tracer.index import ir_text

                if _mentions(ir_text(info.returns), self.owner_name):
                    return True
            try:
                return any(t and t[1].endswith(f".{self.owner_name}") for t in self.project.return_types(func_qn))
            except Exception:
                return False
        return False

    def _holders(self, module: str, f: FunctionFacts) -> tuple[dict, set]:
        """name -> how it comes to hold the owner; plus the callees seen producing holders."""
        holders: dict[str, str] = {}
        calls: set[str] = set()
        for name, ann in f.params:
            if _mentions(ann, self.owner_name):
                holders[name] = f"parameter annotated {ann}"
        changed = True
        rounds = 0
        while changed and rounds < 4:
            changed, rounds = False, rounds + 1
            for b in f.bindings:
                if b.target in holders:
                    continue
                why = None
                if _mentions(b.annotation, self.owner_name):
                    why = f"annotated {b.annotation}"
                else:
                    why = self._value_holds(module, f, b.value, holders, calls)
                if why:
                    holders[b.target] = why
                    changed = True
        return holders, calls

    def _value_holds(self, module, f, desc, holders, calls) -> str | None:
        kind = desc.get("kind")
        if kind == "name" and desc["name"] in holders:
            return f"alias of {desc['name']}"
        if kind == "call":
            callee = desc["callee"]
            if callee.split(".")[-1] == self.owner_name:
                return "constructed"
            if self._call_returns_owner(module, f, callee):
                calls.add(callee)
                return f"returned by {callee}(...)"
        if kind == "ifexp":
            return self._value_holds(module, f, desc["body"], holders, calls) or self._value_holds(
                module, f, desc["orelse"], holders, calls)
        return None

    # -- reads
    def _reads(self, rel, module, side, f: FunctionFacts, holders: dict) -> list[FieldRead]:
        out = []
        aliases: dict[str, tuple] = {}  # alias name -> (field, read)
        tested = set(f.none_tested)
        for r in f.reads:
            if r.root not in holders or not r.attrs or r.attrs[0] not in self.fields:
                continue
            field_name = r.attrs[0]
            path = r.attrs[:2]
            if len(r.attrs) == 2 and r.called:
                path = r.attrs[:1]
            guards = [asdict(g) for g in r.guards2]
            for v in r.bound_to:
                aliases[v] = (field_name, r)
                if v in tested:
                    guards.append({"kind": "alias-check", "text": f"{v} tested for None/truthiness", "line": r.line})
            deref = len(r.attrs) > 1 or self._stored_then_dereferenced(f, r)
            out.append(self._make_read(rel, module, side, f, r, field_name, path, guards,
                                       "getattr" if r.via_getattr else "direct", deref=deref, holder=holders[r.root]))
        for r in f.reads:
            if r.root in aliases and r.root not in holders and r.attrs:
                field_name, origin = aliases[r.root]
                if r.line < origin.line:
                    continue
                path = [field_name] + ([r.attrs[0]] if not (len(r.attrs) == 1 and r.called) else [])
                guards = [asdict(g) for g in r.guards1]
                out.append(self._make_read(rel, module, side, f, r, field_name, path, guards,
                                           f"alias {r.root}", deref=True, holder=holders[origin.root]))
        return out

    @staticmethod
    def _stored_then_dereferenced(f: FunctionFacts, r) -> bool:
        """`batch.spec_info = result.f` followed by `batch.spec_info.x` in the same function."""
        if not r.stored_to:
            return False
        prefix = r.stored_to + "."
        later = [".".join([x.root, *x.attrs]) for x in f.reads if x.line > r.line] + \
            [".".join([w.root, *w.attrs]) for w in f.writes if w.line > r.line]
        return any(t.startswith(prefix) for t in later)

    def _make_read(self, rel, module, side, f, r, field_name, path, guards, via, deref, holder="") -> FieldRead:
        fld = self.fields[field_name]
        if r.in_test:
            kind = "check"
        elif guards:
            kind = "guarded-read"
        else:
            kind = "unconditional-read"
        rid = read_id(field_name, f.qualname, r.shape, path)
        del fld
        return FieldRead(
            id=rid,
            field=field_name,
            owner=self.owner_name,
            attribute_path=path,
            file=rel,
            line=r.line,
            col=r.col,
            consumer=f.qualname,
            module=module,
            side=side,
            guarded=bool(guards) or r.in_test,
            guards=guards,
            path_condition=C.render(r.conds),
            conditions=[list(c) for c in r.conds],
            early_exits=list(r.exits),
            shape=r.shape,
            via=via,
            deref=deref,
            in_test=r.in_test,
            kind=kind,
            holder=holder,
        )

    # -- producers
    def _producers(self, rel, module, side, f: FunctionFacts, holders: dict) -> list[Producer]:
        out = []
        for c in f.calls:
            if c.callee.split(".")[-1] != self.owner_name:
                continue
            set_fields = sorted(k for k, v in c.keywords.items() if v.get("kind") != "none" and k in self.fields)
            none_fields = sorted(k for k, v in c.keywords.items() if v.get("kind") == "none")
            shape = f"{c.callee}({', '.join(sorted(c.keywords))})"
            out.append(Producer(
                id=producer_id("construct", f.qualname, shape), kind="construct", owner=self.owner_name,
                fields=set_fields, none_fields=none_fields, file=rel, line=c.line, function=f.qualname,
                module=module, side=side, path_condition=C.render(c.conds), shape=shape,
            ))
        for w in f.writes:
            if w.root in holders and len(w.attrs) == 1 and w.attrs[0] in self.fields:
                is_none = w.value.get("kind") == "none"
                out.append(Producer(
                    id=producer_id("assign", f.qualname, w.shape), kind="assign", owner=self.owner_name,
                    fields=[] if is_none else [w.attrs[0]], none_fields=[w.attrs[0]] if is_none else [],
                    file=rel, line=w.line, function=f.qualname, module=module, side=side,
                    path_condition=C.render(w.conds), shape=w.shape,
                ))
        return out

    # -- return paths of named producers (catalog kind "producer-sets")
    def _named_producer_paths(self) -> dict:
        extra = {name for names in self.producers.values() for name in names}
        self.tracked = set(self.fields) | extra
        out = {}
        for name in sorted(self.producers):
            cls_name, meth = name.rsplit(".", 1)
            found = []
            for cls_qn in self.find_class(cls_name):
                func_qn = self.lookup_method(cls_qn, meth) or f"{cls_qn}.{meth}"
                got = self.function_facts(func_qn)
                if got is None:
                    continue
                rel, f = got
                found.append({"function": func_qn, "file": rel, "line": f.line,
                              "paths": [asdict(p) for p in self._return_paths_of(cls_qn, func_qn)]})
            out[name] = found
        self.tracked = set(self.fields)
        return out

    # -- return paths of the workers
    def _defaults_set(self) -> set[str]:
        return {n for n, fi in self.fields.items() if fi.default_set}

    def _return_paths_of(self, worker_qn: str, func_qn: str) -> list[ReturnPath]:
        got = self.function_facts(func_qn)
        if got is None:
            return []
        rel, f = got
        module = module_of_rel(rel)
        out = []
        for ret in f.returns:
            own = list(ret.conds) + [(e, False) for e in ret.exits]
            for sets, via, unresolved, inner in self._value_sets(module, f, ret.value, ret.line, ret.blocks, 0, (func_qn,)):
                if sets == "not-a-result":
                    continue
                conds = own + inner
                out.append(ReturnPath(
                    worker=worker_qn, method=f.qualname, file=rel, line=ret.line, shape=ret.shape,
                    path_condition=C.render(conds), conditions=[list(c) for c in conds],
                    sets=None if sets is None else sorted(sets), via=via, unresolved=unresolved,
                ))
        return out

    def _value_sets(self, module, f: FunctionFacts, desc: dict, line: int, blocks: list, depth: int, seen: tuple):
        """[(fields set | None unknown | "not-a-result", via, unresolved reason, helper conditions)]."""
        kind = desc.get("kind")
        if depth > MAX_HOPS:
            return [(None, [], "too many hops", [])]
        if kind == "none":
            return [("not-a-result", [], None, [])]
        if kind == "ifexp":
            return [(s_, v, u, [(desc["test"], True)] + c) for s_, v, u, c in self._value_sets(module, f, desc["body"], line, blocks, depth, seen)] + \
                [(s_, v, u, [(desc["test"], False)] + c) for s_, v, u, c in self._value_sets(module, f, desc["orelse"], line, blocks, depth, seen)]
        if kind == "call":
            callee = desc["callee"]
            if callee.split(".")[-1] == self.owner_name:
                sets = {k for k, v in desc["kw"].items() if v.get("kind") != "none" and k in self.fields}
                return [(sets | self._defaults_set(), [], None, [])]
            targets = self.resolve_callee(module, f, callee)
            if not targets:
                return [(None, [], f"unresolved call {callee}(...)", [])]
            out = []
            for t in targets:
                if t in seen:
                    continue
                got = self.function_facts(t)
                if got is None:
                    out.append((None, [t], f"no source for {t}", []))
                    continue
                rel2, f2 = got
                mod2 = module_of_rel(rel2)
                for ret in f2.returns:
                    own = list(ret.conds) + [(e, False) for e in ret.exits]
                    for sets, via, unres, inner in self._value_sets(mod2, f2, ret.value, ret.line, ret.blocks, depth + 1, seen + (t,)):
                        out.append((sets, [f"{f2.qualname}:{ret.line}"] + via, unres, own + inner))
            return out or [(None, [], f"recursive call {callee}", [])]
        if kind == "name":
            name = desc["name"]
            binds = [b for b in f.bindings if b.target == name and b.line < line and _dominates(b.blocks, blocks)]
            if not binds:
                return [(None, [], f"{name} not bound before the return", [])]
            b = max(binds, key=lambda b: b.line)
            base = self._value_sets(module, f, b.value, b.line, b.blocks, depth, seen)
            writes = [w for w in f.writes if w.root == name and len(w.attrs) == 1 and w.attrs[0] in self.tracked
                      and b.line < w.line <= line and _dominates(w.blocks, blocks)]
            # fields written on every branch of an if/else between the binding and the return
            branch_writes = [w for w in f.writes if w.root == name and len(w.attrs) == 1 and w.attrs[0] in self.tracked
                             and b.line < w.line <= line and not _dominates(w.blocks, blocks)
                             and w.value.get("kind") != "none"]
            covered = {fld for fld in {w.attrs[0] for w in branch_writes}
                       if _covers([w.blocks for w in branch_writes if w.attrs[0] == fld], list(blocks))}
            out = []
            for sets, via, unres, inner in base:
                if isinstance(sets, set):
                    sets = set(sets) | covered
                    for w in sorted(writes, key=lambda w: w.line):
                        if w.value.get("kind") == "none":
                            sets.discard(w.attrs[0])
                        else:
                            sets.add(w.attrs[0])
                out.append((sets, via, unres, inner))
            return out
        return [(None, [], f"returns {desc.get('text', kind)}", [])]

    # -- how model_worker comes to be each class
    def _selection_conditions(self, targets: list[str]) -> dict:
        """class qn -> list of alternatives, each a list of (condition text, positive)."""
        sched = getattr(self, "scheduler_qn", None)
        if not sched:
            return {}
        found = getattr(self, "_sources", None) or self._attr_sources(sched, POLYMORPHIC_ATTR, 0)
        by_short: dict[str, list] = {}
        for alt, cls_name in found:
            if cls_name:
                by_short.setdefault(cls_name, []).append(alt)
        # `self.x is None` in a selection condition: replace it by the conditions under which the
        # scheduler assigns None to x (e.g. draft_worker: spec off, or a non-last PP+spec stage)
        none_conds: dict[str, str] = {}

        def expand_none(text: str) -> str:
            def sub(m):
                attr = m.group(1)
                if attr not in none_conds:
                    alts = [c for c, name in self._attr_sources(sched, attr, 1) if name is None]
                    none_conds[attr] = " or ".join(f"({C.render(a) or 'True'})" for a in alts) if alts else ""
                return f"({none_conds[attr]})" if none_conds[attr] else m.group(0)
            return re.sub(r"\bself\.(\w+) is None\b", sub, text)

        for short, alts in by_short.items():
            by_short[short] = [[(expand_none(t), pos) for t, pos in alt] for alt in alts]
        out = {}
        for t in targets:
            short = t.rsplit(".", 1)[-1]
            if short in by_short:
                out[t] = by_short[short]
            else:
                self.notes.append(f"how {POLYMORPHIC_ATTR} becomes {short} was not traced: treated as always possible")
                out[t] = [[]]
        return out

    def _attr_writes(self, class_qn: str, attr: str):
        pat = re.compile(rf"\bself\.{re.escape(attr)}\s*(?::[^=]*)?=[^=]")
        for c in self.mro(class_qn):
            mod, _, cls = c.rpartition(".")
            rel = self.rel_of_module(mod)
            if rel is None:
                continue
            spans = [s for s in self.store.spans(rel) if s.cls == cls and pat.search(s.text)]
            for f in self.store.facts(rel, spans):
                for w in f.writes:
                    if w.root == "self" and w.attrs == [attr]:
                        yield module_of_rel(rel), f, w

    def _attr_sources(self, class_qn: str, attr: str, depth: int):
        """[(conditions, class short name or None)] for every way ``self.attr`` gets its value."""
        if depth > 4:
            return []
        out = []
        for module, f, w in self._attr_writes(class_qn, attr):
            conds = list(w.conds) + [(e, False) for e in w.exits]
            out.extend((conds + c2, name) for c2, name in self._value_classes(class_qn, module, f, w.value, w.line, depth))
        return out

    def _value_classes(self, class_qn, module, f, desc, line, depth):
        kind = desc.get("kind")
        if kind == "none":
            return [([], None)]
        if kind == "chain" and desc["root"] == "self" and len(desc["attrs"]) == 1:
            return self._attr_sources(class_qn, desc["attrs"][0], depth + 1)
        if kind == "ifexp":
            return [([(desc["test"], True)] + c, n) for c, n in self._value_classes(class_qn, module, f, desc["body"], line, depth)] + \
                [([(desc["test"], False)] + c, n) for c, n in self._value_classes(class_qn, module, f, desc["orelse"], line, depth)]
        if kind == "call":
            callee = desc["callee"]
            head = callee.split(".")[0]
            local = [b for b in f.bindings if b.target == head and b.line < line]
            if local and "." not in callee:
                b = max(local, key=lambda b: b.line)
                return self._class_values(module, f, b.value, depth)
            return [([], callee.split(".")[-1])]
        return []

    def _class_values(self, module, f, desc, depth):
        """Class objects a value can be: a class name, or the returns of a factory call."""
        kind = desc.get("kind")
        if kind == "name":
            return [([], desc["name"])]
        if kind == "call":
            out = []
            for t in self.resolve_callee(module, f, desc["callee"]) or self._resolve_via_attr_type(module, f, desc["callee"]):
                got = self.function_facts(t)
                if got is None:
                    continue
                rel2, f2 = got
                for ret in f2.returns:
                    conds = list(ret.conds) + [(e, False) for e in ret.exits]
                    if ret.value.get("kind") == "name":
                        out.append((conds, ret.value["name"]))
            return out
        return []

    def _resolve_via_attr_type(self, module, f, callee):
        return []

    # -- violations
    def _contexts(self, reads) -> dict:
        """Where each checked consumer gets its result from the polymorphic call.

        ``{(module, consumer): [(extra conditions, rename map, how)]}``: the direct consumer (the
        function that binds ``self.model_worker.<m>(...)``) with no extra condition, and each
        function it passes that result to, one level down, under the call site's condition; a callee
        on a composed object (``self.future_map.store_to_map``) gets its ``self.<attr>`` names mapped
        to the scheduler's through the object's constructor call (``FutureMap(..., self.spec_algorithm)``
        stored as ``self.spec_algo``).
        """
        prefix = f"returned by self.{POLYMORPHIC_ATTR}."
        direct = {(r.module, r.consumer) for r in reads if r.holder.startswith(prefix)}
        out: dict = {key: [([], {}, "direct")] for key in direct}
        for module, consumer in sorted(direct):
            got = self._func_index.get(f"{module}.{consumer}")
            if got is None:
                continue
            _, f = got
            holders, _ = self._holders(module, f)
            poly = {h for h, why in holders.items() if why.startswith(prefix)}
            for c in f.calls:
                passed = [i for i, a in enumerate(c.args) if a.get("kind") == "name" and a["name"] in poly]
                passed_kw = [k for k, a in c.keywords.items() if a.get("kind") == "name" and a["name"] in poly]
                if not passed and not passed_kw:
                    continue
                for target in self.resolve_callee(module, f, c.callee):
                    got2 = self.function_facts(target)
                    if got2 is None:
                        continue
                    rel2, g = got2
                    key = (module_of_rel(rel2), g.qualname)
                    rename = self._constructor_renames(module, f, c.callee)
                    out.setdefault(key, []).append((list(c.conds), rename, f"called from {consumer}:{c.line}"))
        return out

    def _constructor_renames(self, module, f, callee) -> dict:
        """``self.a.m`` called on a composed object: {attr of the object: attr of the scheduler}."""
        parts = callee.split(".")
        if len(parts) != 3 or parts[0] != "self" or not f.cls:
            return {}
        cls_qn = f"{module}.{f.cls}"
        renames: dict = {}
        for wmod, wf, w in self._attr_writes(cls_qn, parts[1]):
            if w.value.get("kind") != "call":
                continue
            for obj_cls in self.attr_classes(cls_qn, parts[1]):
                init = self.lookup_method(obj_cls, "__init__")
                got = self.function_facts(init) if init else None
                if got is None:
                    continue
                params = [p for p, _ in got[1].params if p != "self"]
                passed = {params[i]: a for i, a in enumerate(w.value.get("args", [])) if i < len(params)}
                passed.update(w.value.get("kw", {}))
                for iw in got[1].writes:
                    if iw.root == "self" and len(iw.attrs) == 1 and iw.value.get("kind") == "name":
                        arg = passed.get(iw.value["name"])
                        if arg and arg.get("kind") == "chain" and arg["root"] == "self" and len(arg["attrs"]) == 1:
                            renames[iw.attrs[0]] = arg["attrs"][0]
        return renames

    def _violations(self, reads, paths, selection, scheduler_writes) -> list[Violation]:
        out = []
        contexts = self._contexts(reads)
        checked = [r for r in reads if r.side == "scheduler" and r.kind == "unconditional-read" and r.deref
                   and self.fields[r.field].may_be_none and r.field not in scheduler_writes
                   and (r.module, r.consumer) in contexts]
        expanders: dict = {}
        for r in checked:
            expand = expanders.setdefault((r.module, r.consumer), self._expander(r.module, r.consumer))
            local = [tuple(c) for c in r.conditions] + [(e, False) for e in r.early_exits]
            for extra, rename, how in contexts[(r.module, r.consumer)]:
                renamed = [(_rename_self_attrs(t, rename), pos) for t, pos in local]
                read_f = C.conjunction(renamed + [tuple(c) for c in extra], expand)
                for p in paths:
                    if p.sets is None or r.field in p.sets:
                        continue
                    alts = selection.get(p.worker, [[]])
                    p_f = C.conjunction([tuple(c) for c in p.conditions])
                    for alt in alts:
                        sel_f = C.conjunction(alt)
                        if not C.satisfiable(read_f, sel_f, p_f):
                            continue
                        relevant = [a for a in self.assumptions
                                    if C.atoms(C.parse(a["when"])) & C.atoms(("and", [read_f, sel_f, p_f]))]
                        if relevant and not C.satisfiable(read_f, sel_f, p_f,
                                                          *[C.implication(a["when"], a["implies"]) for a in self.assumptions]):
                            self.assumptions_used.update(a["id"] for a in self.assumptions)
                            continue
                        vid = "V-" + _stable_id("V", r.id, p.worker, p.method, p.shape)
                        if any(v.id == vid for v in out):
                            break
                        out.append(Violation(
                            id=vid, field=r.field, owner=self.owner_name,
                            read={"id": r.id, "file": r.file, "line": r.line, "consumer": r.consumer,
                                  "shape": r.shape, "path_condition": r.path_condition, "context": how},
                            producer={"worker": p.worker, "method": p.method, "file": p.file, "line": p.line,
                                      "shape": p.shape, "path_condition": p.path_condition, "via": p.via},
                            worker_selection=C.render(alt) or "always",
                            message=(f"{r.consumer} reads {self.owner_name}.{r.field} unconditionally "
                                     f"({r.file}:{r.line}) but {p.worker.rsplit('.', 1)[-1]}.{p.method.rsplit('.', 1)[-1]} "
                                     f"can return without setting it ({p.file}:{p.line})"),
                        ))
                        break
        return out

    def _expander(self, module: str, consumer: str):
        """Inline boolean properties of the receiver's class (``batch.is_spec_v2``)."""
        fq = f"{module}.{consumer}"
        got = self._func_index.get(fq) or self.function_facts(fq)
        if got is None or self.project is None:
            return None
        rel, f = got
        types: dict[str, list[str]] = {}
        for name, ann in f.params:
            if name == "self" and f.cls:
                types[name] = [f"{module}.{f.cls}"]
            elif ann:
                short = re.findall(r"[A-Za-z_][A-Za-z0-9_]*", ann)
                cands = []
                for s in short:
                    if s[:1].isupper() and s not in ("Optional", "Union", "List", "Dict", "Tuple"):
                        cands.extend(self.find_class(s))
                types[name] = cands
        memo: dict = {}

        def expand(root: str, attr: str) -> str | None:
            key = (root, attr)
            if key in memo:
                return memo[key]
            memo[key] = None
            for cqn in types.get(root, []):
                m = self.lookup_method(cqn, attr)
                if not m:
                    continue
                info = self.project.func(m)
                if info is None or info.kind != "property":
                    continue
                got2 = self.function_facts(m)
                if got2 is None:
                    continue
                rets = [r for r in got2[1].returns if r.value.get("kind") != "none"]
                if len(rets) != 1:
                    continue
                value = rets[0].value
                if value.get("kind") == "name":  # `ret = <expr>; ...; return ret`
                    binds = [b for b in got2[1].bindings if b.target == value["name"] and b.line < rets[0].line]
                    if len(binds) == 1:
                        value = binds[0].value
                if value.get("text"):
                    memo[key] = value["text"]
                    break
            return memo[key]

        return expand


def read_id(field_name: str, consumer: str, shape: str, path: list) -> str:
    """Stable across line moves: field, module-free consumer, the statement's normalised shape."""
    return f"R-{field_name}-" + _stable_id("R", field_name, consumer, re.sub(r"\s+", "", shape), ".".join(path))


def producer_id(kind: str, function: str, shape: str) -> str:
    return f"P-{kind}-" + _stable_id("P", kind, function, re.sub(r"\s+", "", shape))


def _dedupe_ids(items) -> None:
    """The same statement twice in one function: suffix the later ones (#2, #3) in source order."""
    seen: dict[str, int] = {}
    for it in sorted(items, key=lambda i: (i.file, i.line, getattr(i, "col", 0))):
        n = seen.get(it.id, 0) + 1
        seen[it.id] = n
        if n > 1:
            it.id = f"{it.id}#{n}"


def follow_producers(extraction: Extraction, producers: dict[str, list[str]]) -> dict:
    """``producer_paths`` for producers an Extraction was made without (read from its tree again;
    the facts are cached, so this parses at most the producers' own functions)."""
    from spectrace.source import from_path

    ex = Extractor(from_path(extraction.root), owner=extraction.owner, producers=producers)
    ex.fields = ex._find_owner().fields
    return ex._named_producer_paths()


def extract(source: SglangSource, owner: str = DEFAULT_OWNER, project=None, use_cache: bool = True,
            jobs: int | None = None, producers: dict[str, list[str]] | None = None) -> Extraction:
    """``producers``: {"Class.method": [extra attribute names]} whose return paths to add in
    ``Extraction.producer_paths`` (the catalog's producer-sets contracts; see check.py)."""
    return Extractor(source, owner=owner, project=project, use_cache=use_cache, jobs=jobs, producers=producers).run()
