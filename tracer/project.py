"""A source tree as a queryable program: modules, classes, MROs, attribute types, calls.

``Project`` parses lazily (a module is summarised when a query first needs it) or all at
once (``index_all``, in parallel). Types are inferred just far enough to resolve calls:

* ``self.m()`` through the class's whole MRO (mixins in other modules included),
* ``self.x.m()`` where ``self.x`` is typed by *every* assignment to ``x`` in the class and
  its MRO (``__init__``, helpers called from it, any method), by class-level and inline
  annotations, by properties' return annotations, and by constructor calls,
* values returned by functions (annotations, else the returned expressions): a factory
  that returns class objects (``return EAGLEWorkerV2``) yields those classes, and calling
  its result yields their instances.

An attribute with several possible types makes a polymorphic call: one edge per target.
"""

from __future__ import annotations

import hashlib
import json
import os
import pickle
import re
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Iterable

from spectrace.source import SglangSource
from spectrace.tracer.index import (
    ClassInfo,
    FuncInfo,
    ModuleSummary,
    SummaryCache,
    _summarize_worker,
    atomic_write_bytes,
    ir_text,
    module_name_for,
    summarize_file,
)

# Type tags: ("inst", class_qn) ("cls", class_qn) ("func", func_qn) ("mod", name) ("ext", dotted)
Type = tuple

TYPING_WRAPPERS = {"Optional", "Union", "Annotated", "Final", "ClassVar", "InitVar"}
TYPE_OF = {"Type", "type"}
MAX_DEPTH = 48  # semantic hops (attribute and return lookups); cycles are caught by _memo
_IN_PROGRESS = object()


@dataclass
class ResolvedCall:
    line: int
    col: int
    text: str
    targets: list  # function/class qualnames (sglang) or external dotted names
    resolution: str  # self, super, local, import, attr-type, constructor, polymorphic, external, unresolved
    external: bool = False
    via: dict = field(default_factory=dict)  # target -> receiver classes (inherited methods)


@dataclass
class Project:
    source: SglangSource
    use_cache: bool = True
    _modules: dict = field(default_factory=dict)  # module name -> ModuleSummary
    _files: dict | None = None  # module name -> relpath
    _pack: dict | None = None
    _pack_dirty: bool = False
    errors: list = field(default_factory=list)

    def __post_init__(self):
        self.root = Path(self.source.root)
        self.cache = SummaryCache(self.use_cache)
        self._mro_cache: dict = {}
        self._attr_cache: dict = {}
        self._ret_cache: dict = {}
        self._cycle_hits = 0
        self._subclass_cache: dict = {}
        self._name_cache: dict = {}
        self._locals_cache: dict = {}
        self._texts: dict | None = None
        self._fingerprint: str | None = None
        self._class_index: dict | None = None
        self._active = 0

    # ------------------------------------------------------------------ files and modules
    @property
    def files(self) -> dict:
        if self._files is None:
            files = {}
            pkg = self.root / "sglang"
            for dirpath, dirnames, filenames in os.walk(pkg):
                dirnames[:] = sorted(d for d in dirnames if not d.startswith((".", "__pycache__")))
                rel_dir = os.path.relpath(dirpath, self.root).replace(os.sep, "/")
                for fn in filenames:
                    if fn.endswith(".py"):
                        rel = f"{rel_dir}/{fn}"
                        files[module_name_for(rel)[0]] = rel
            self._files = files
        return self._files

    def _load_pack(self):
        if self._pack is None:
            self._pack = self.cache.load_pack(self.root)

    def module(self, name: str) -> ModuleSummary | None:
        if name in self._modules:
            return self._modules[name]
        rel = self.files.get(name)
        if rel is None:
            self._modules[name] = None
            return None
        summary = self._from_pack(rel)
        if summary is None:
            key, summary = summarize_file(self.root, rel, self.cache)
            self._remember(rel, key, summary)
        self._adopt(summary)
        return summary

    def _from_pack(self, rel: str):
        self._load_pack()
        entry = self._pack.get(rel)
        if entry is None:
            return None
        size, mtime, _key, blob = entry
        try:
            st = os.stat(self.root / rel)
        except OSError:
            return None
        if st.st_size == size and st.st_mtime_ns == mtime:
            return pickle.loads(blob)
        return None

    def _remember(self, rel, key, summary):
        self._load_pack()
        try:
            st = os.stat(self.root / rel)
        except OSError:
            return
        # Each module is kept as its own pickle inside the pack: a lazy map unpickles only the
        # modules it reaches, not the whole package an earlier `index` stored.
        self._pack[rel] = (st.st_size, st.st_mtime_ns, key, pickle.dumps(summary, pickle.HIGHEST_PROTOCOL))
        self._pack_dirty = True

    def _adopt(self, summary: ModuleSummary):
        self._modules[summary.module] = summary
        if summary.error:
            self.errors.append(summary.error)

    def save(self):
        """Write the per-tree pack (warm start for the next process)."""
        if self._pack_dirty and self._pack is not None:
            self.cache.save_pack(self.root, self._pack)
            self._pack_dirty = False

    def index_all(self, jobs: int | None = None, progress: Callable[[int, int], None] | None = None):
        """Summarise every module: from the pack when unchanged, else in parallel."""
        self._load_pack()
        todo = []
        for mod, rel in self.files.items():
            if mod in self._modules:
                continue
            summary = self._from_pack(rel)
            if summary is not None:
                self._adopt(summary)
            else:
                todo.append(rel)
        total = len(todo)
        if progress:
            progress(0, total)
        if not todo:
            return
        jobs = jobs or min(os.cpu_count() or 1, 8)
        if jobs <= 1 or total < 40:
            results = (
                (rel, summarize_file(self.root, rel, self.cache)) for rel in todo
            )
            for i, (rel, (key, summary)) in enumerate(results, 1):
                self._remember(rel, key, summary)
                self._adopt(summary)
                if progress:
                    progress(i, total)
        else:
            args = [(str(self.root), rel, self.cache.enabled) for rel in todo]
            with ProcessPoolExecutor(max_workers=jobs) as pool:
                for i, (rel, (key, summary)) in enumerate(pool.map(_summarize_worker, args, chunksize=16), 1):
                    self._remember(rel, key, summary)
                    self._adopt(summary)
                    if progress:
                        progress(i, total)
        self.save()

    def loaded_modules(self) -> Iterable[ModuleSummary]:
        return (m for m in self._modules.values() if m is not None)

    # ------------------------------------------------------------------ names
    def split(self, qualname: str):
        """``pkg.mod.Class.meth`` -> (module summary, "Class.meth"), longest module prefix wins."""
        parts = qualname.split(".")
        for i in range(len(parts), 0, -1):
            mod = ".".join(parts[:i])
            if mod in self.files:
                return self.module(mod), ".".join(parts[i:])
        return None, qualname

    def cls(self, qualname: str) -> ClassInfo | None:
        mod, local = self.split(qualname)
        return mod.classes.get(local) if mod is not None else None

    def func(self, qualname: str) -> FuncInfo | None:
        mod, local = self.split(qualname)
        return mod.functions.get(local) if mod is not None else None

    def module_of(self, qualname: str) -> ModuleSummary | None:
        return self.split(qualname)[0]

    def _grep(self, pattern: bytes, literal: bytes = b"") -> list[str]:
        """Modules whose text matches: a cheap pre-filter before parsing (lazy mode).

        ``literal`` must occur in a matching file; testing it first skips the regex on most files.
        """
        rx = re.compile(pattern, re.M)
        return [mod for mod, data in self._all_texts().items() if literal in data and rx.search(data)]

    def fingerprint(self) -> str:
        """A digest of every file's path, size and mtime: changes whenever any file does."""
        if self._fingerprint is None:
            h = hashlib.blake2b(digest_size=12)
            for rel in sorted(self.files.values()):
                try:
                    st = os.stat(self.root / rel)
                except OSError:
                    continue
                h.update(f"{rel}\0{st.st_size}\0{st.st_mtime_ns}\n".encode())
            self._fingerprint = h.hexdigest()
        return self._fingerprint

    def cached_scan(self, name: str, compute: Callable[[], object]):
        """A whole-tree text scan (JSON-able result) cached until any file of the tree changes."""
        path = self.cache.pack_path(self.root).with_name(f"scan-{self.fingerprint()}-{name}.json")
        if self.cache.enabled:
            try:
                return json.loads(path.read_text())
            except (OSError, ValueError):
                pass
        result = compute()
        if self.cache.enabled:
            atomic_write_bytes(path, json.dumps(result).encode())
        return result

    def file_bytes(self, module: str) -> bytes:
        """A module's source, read once per process and shared by every text scan."""
        return self._all_texts().get(module, b"")

    def _all_texts(self) -> dict:
        if self._texts is None:
            texts = {}
            for mod, rel in self.files.items():
                try:
                    texts[mod] = (self.root / rel).read_bytes()
                except OSError:
                    continue
            self._texts = texts
        return self._texts

    def class_name_index(self) -> dict:
        """Class name -> the modules that define a class of that name (at any nesting).

        One text pass over the tree, cached per tree fingerprint: a warm run reads no file for it.
        """
        if self._class_index is None:
            rx = re.compile(rb"^[ \t]*class[ \t]+(\w+)", re.M)

            def scan():
                found: dict = {}
                for mod, data in self._all_texts().items():
                    for name in sorted({m.group(1).decode() for m in rx.finditer(data)}):
                        found.setdefault(name, []).append(mod)
                return found

            self._class_index = self.cached_scan("class-index", scan)
        return self._class_index

    def find_classes(self, name: str) -> list[str]:
        found = []
        for mod in sorted(self.class_name_index().get(name, [])):
            summary = self.module(mod)
            if summary is None:
                continue
            for qn, c in summary.classes.items():
                if c.name == name:
                    found.append(f"{summary.module}.{qn}")
        return sorted(found)

    def find_functions(self, spec: str) -> list[str]:
        """Roots as ``Class.method``, ``module:Class.method``, ``func`` or a fully qualified name."""
        if ":" in spec:
            mod, local = spec.split(":", 1)
            summary = self.module(mod)
            if summary is None:
                return []
            if local in summary.functions:
                return [f"{mod}.{local}"]
            if local in summary.classes:
                return [f"{mod}.{local}"]
            return []
        mod, local = self.split(spec)
        if mod is not None and local and (local in mod.functions or local in mod.classes):
            return [f"{mod.module}.{local}"]
        parts = spec.split(".")
        found = []
        if len(parts) >= 2:
            cls_name, meth = parts[-2], parts[-1]
            for cqn in self.find_classes(cls_name):
                target = self.lookup_method(cqn, meth)
                if target and target not in found:
                    found.append(target)
        else:
            for m in self._grep(rb"^\s*(async\s+)?def\s+" + re.escape(spec.encode()) + rb"\b", spec.encode()):
                summary = self.module(m)
                for qn, f in (summary.functions.items() if summary else ()):
                    if f.name == spec and f.cls is None and f.parent is None:
                        found.append(f"{summary.module}.{qn}")
        return sorted(found)

    def close_matches(self, spec: str, limit: int = 8) -> list[str]:
        import difflib

        last = spec.split(".")[-1].split(":")[-1]
        candidates = set()
        for m in self._grep(rb"def\s+\w*" + re.escape(last[:4].encode()), last[:4].encode()):
            summary = self.module(m)
            for qn, f in (summary.functions.items() if summary else ()):
                candidates.add(qn)
        wanted = spec.split(":")[-1]
        return difflib.get_close_matches(wanted, sorted(candidates), n=limit, cutoff=0.5)

    # ------------------------------------------------------------------ symbol resolution
    def resolve_symbol(self, module: str, name: str, _seen=None) -> Type | None:
        """What ``name`` means at the top level of ``module``."""
        _seen = _seen or set()
        if (module, name) in _seen:
            return None
        _seen.add((module, name))
        summary = self.module(module)
        if summary is None:
            return ("ext", f"{module}.{name}")
        if name in summary.classes:
            return ("cls", f"{module}.{name}")
        if name in summary.functions and summary.functions[name].cls is None:
            return ("func", f"{module}.{name}")
        if name in summary.imports:
            return self.resolve_import(summary.imports[name], _seen)
        sub = f"{module}.{name}"
        if summary.is_package and sub in self.files:
            return ("mod", sub)
        if name in summary.globals:
            return ("global", module, name)
        return None

    def resolve_import(self, target, _seen=None) -> Type | None:
        if target[0] == "mod":
            mod = target[1]
            return ("mod", mod) if mod in self.files or mod.split(".")[0] == "sglang" else ("ext", mod)
        _, mod, name = target
        if mod in self.files:
            return self.resolve_symbol(mod, name, _seen)
        if f"{mod}.{name}" in self.files:
            return ("mod", f"{mod}.{name}")
        return ("ext", f"{mod}.{name}")

    # ------------------------------------------------------------------ classes
    def mro(self, class_qn: str) -> list[str]:
        """C3 linearisation over the bases the index can resolve (unresolved bases skipped)."""
        if class_qn in self._mro_cache:
            return self._mro_cache[class_qn]
        self._mro_cache[class_qn] = [class_qn]  # cycle guard
        info = self.cls(class_qn)
        if info is None:
            return [class_qn]
        mod = self.module_of(class_qn)
        bases = []
        for b in info.bases:
            t = self.type_of_expr_static(mod.module, b)
            if t and t[0] == "cls" and t[1] != class_qn:
                bases.append(t[1])
        seqs = [list(self.mro(b)) for b in bases] + [list(bases)]
        result = [class_qn]
        while True:
            seqs = [s for s in seqs if s]
            if not seqs:
                break
            for s in seqs:
                head = s[0]
                if not any(head in other[1:] for other in seqs):
                    break
            else:  # inconsistent hierarchy: fall back to depth-first order
                head = seqs[0][0]
            result.append(head)
            for s in seqs:
                if s and s[0] == head:
                    s.pop(0)
        self._mro_cache[class_qn] = result
        return result

    def type_of_expr_static(self, module: str, ir) -> Type | None:
        """Resolve a dotted name at module level (bases, decorators, annotations)."""
        if ir[0] == "n":
            return self.resolve_symbol(module, ir[1])
        if ir[0] == "a":
            base = self.type_of_expr_static(module, ir[1])
            if base is None:
                return None
            if base[0] == "mod":
                return self.resolve_symbol(base[1], ir[2]) if base[1] in self.files else ("ext", f"{base[1]}.{ir[2]}")
            if base[0] == "ext":
                return ("ext", f"{base[1]}.{ir[2]}")
            if base[0] == "cls":
                inner = f"{base[1]}.{ir[2]}"
                if self.cls(inner):
                    return ("cls", inner)
        if ir[0] == "s":  # Generic[T] bases and the like
            return self.type_of_expr_static(module, ir[1])
        return None

    def lookup_method(self, class_qn: str, name: str, start_after: str | None = None) -> str | None:
        mro = self.mro(class_qn)
        if start_after is not None and start_after in mro:
            mro = mro[mro.index(start_after) + 1:]
        for c in mro:
            info = self.cls(c)
            if info is not None and name in info.methods:
                mod = self.module_of(c)
                return f"{mod.module}.{info.methods[name]}"
        return None

    def subclasses(self, class_qn: str) -> list[str]:
        """Classes that have ``class_qn`` in their MRO (found by a text pre-filter, then parsed)."""
        if class_qn in self._subclass_cache:
            return self._subclass_cache[class_qn]
        self._subclass_cache[class_qn] = []
        name = class_qn.rsplit(".", 1)[-1]
        out = []
        for mod in self._grep(rb"^\s*class\s+\w+\s*\([^)]*\b" + re.escape(name.encode()) + rb"\b", name.encode()):
            summary = self.module(mod)
            for qn in (summary.classes if summary else ()):
                full = f"{summary.module}.{qn}"
                if full != class_qn and class_qn in self.mro(full):
                    out.append(full)
        self._subclass_cache[class_qn] = sorted(out)
        return self._subclass_cache[class_qn]

    def attr_types(self, class_qn: str, attr: str, depth: int = 0) -> set:
        """Every type ``self.<attr>`` can hold, from all assignments across the class's MRO."""
        return self._memo(self._attr_cache, (class_qn, attr), lambda: self._attr_types(class_qn, attr, depth))

    def _memo(self, cache: dict, key, compute):
        """Memoise a recursive query; a result that met a cycle is cached only at the outermost level.

        Inside a cycle the inner query sees an empty answer; caching that partial answer would make
        it permanent (e.g. ``self.model_worker`` typed without the draft workers).
        """
        hit = cache.get(key, None)
        if hit is _IN_PROGRESS:
            self._cycle_hits += 1
            return set()
        if hit is not None:
            return hit
        cache[key] = _IN_PROGRESS
        self._active += 1
        before = self._cycle_hits
        try:
            result = compute()
        finally:
            self._active -= 1
        if self._cycle_hits == before or self._active == 0:
            cache[key] = result
        else:
            del cache[key]
        return result

    def _attr_types(self, class_qn: str, attr: str, depth: int) -> set:
        types: set = set()
        if depth > MAX_DEPTH:
            return types
        for c in self.mro(class_qn):
            info = self.cls(c)
            if info is None:
                continue
            mod = self.module_of(c)
            if attr in info.methods:
                f = mod.functions[info.methods[attr]]
                fq = f"{mod.module}.{f.qualname}"
                if f.kind == "property":
                    types |= self.return_types(fq, depth + 1)
                else:
                    types.add(("func", fq))
                break
            if attr in info.annotations:
                types |= self.annotation_types(mod.module, info.annotations[attr])
            if attr in info.assigns:
                types |= self.expr_types_in(mod.module, None, info.assigns[attr], depth + 1)
            for mname, fqn in info.methods.items():
                f = mod.functions.get(fqn)
                if f is None:
                    continue
                for target, value, annot, _line in f.assigns:
                    if target[0] == "a" and target[1] == ("n", "self") and target[2] == attr:
                        if annot is not None:
                            types |= self.annotation_types(mod.module, annot, f)
                        types |= self.expr_types_in(mod.module, f, value, depth + 1)
        types.discard(("none",))
        if not types and self._is_mixin(class_qn):
            # `self` inside a mixin is whatever class mixes it in: ask those classes.
            for sub in self.subclasses(class_qn):
                types |= self.attr_types(sub, attr, depth + 1)
        return types

    def _is_mixin(self, class_qn: str) -> bool:
        """A class that defines no __init__ of its own anywhere in its MRO (e.g. Scheduler*Mixin)."""
        return self.lookup_method(class_qn, "__init__") is None

    # ------------------------------------------------------------------ annotations
    def annotation_types(self, module: str, ir, func: FuncInfo | None = None) -> set:
        tag = ir[0]
        if tag == "k":
            if isinstance(ir[1], str):
                import ast as _ast

                from spectrace.tracer.index import expr_ir

                try:
                    return self.annotation_types(module, expr_ir(_ast.parse(ir[1], mode="eval").body), func)
                except SyntaxError:
                    return set()
            return set()
        if tag == "|":
            return self.annotation_types(module, ir[1], func) | self.annotation_types(module, ir[2], func)
        if tag == "s":
            head = ir[1]
            head_name = head[1] if head[0] == "n" else (head[2] if head[0] == "a" else None)
            if head_name in TYPING_WRAPPERS:
                items = ir[2] if head_name != "Annotated" else ir[2][:1]
                out = set()
                for i in items:
                    out |= self.annotation_types(module, i, func)
                return out
            if head_name in TYPE_OF:
                return {("cls", t[1]) for i in ir[2] for t in self.annotation_types(module, i, func) if t[0] == "inst"}
            return set()  # containers: List[X] is not an X
        t = self._resolve_name_in(module, func, ir) if func else self.type_of_expr_static(module, ir)
        if t is None:
            return set()
        if t[0] == "cls":
            return {("inst", t[1])}
        return set()

    def _resolve_name_in(self, module: str, func: FuncInfo, ir):
        if ir[0] == "n":
            f = func
            while f is not None:
                if ir[1] in f.imports:
                    return self.resolve_import(f.imports[ir[1]])
                f = self.module(module).functions.get(f.parent) if f.parent else None
        return self.type_of_expr_static(module, ir)

    # ------------------------------------------------------------------ expressions
    def return_types(self, func_qn: str, depth: int = 0) -> set:
        return self._memo(self._ret_cache, func_qn, lambda: self._return_types(func_qn, depth))

    def _return_types(self, func_qn: str, depth: int) -> set:
        mod, local = self.split(func_qn)
        f = mod.functions.get(local) if mod else None
        if f is None or depth > MAX_DEPTH:
            return set()
        inferred: set = set()
        for r in f.return_exprs:
            inferred |= self.expr_types_in(mod.module, f, r, depth + 1)
        inferred.discard(("none",))
        annotated = self.annotation_types(mod.module, f.returns, f) if f.returns is not None else set()
        # A factory annotated with a base class (Type[BaseSpecWorker]) returns its concrete
        # subclasses: prefer what the returns say whenever they say something.
        result = inferred if inferred else annotated
        if f.name == "__init__":
            result = set()
        return result

    def _local_assigns(self, f: FuncInfo, name: str):
        table = self._locals_cache.get(id(f))
        if table is None:
            table = {}
            for target, value, annot, _line in f.assigns:
                if target[0] == "n":
                    table.setdefault(target[1], []).append((value, annot))
            self._locals_cache[id(f)] = table
        return table.get(name, ())

    def expr_types_in(self, module: str, f: FuncInfo | None, ir, depth: int = 0) -> set:
        if depth > MAX_DEPTH:
            return set()
        tag = ir[0]
        if tag == "k":
            return {("none",)} if ir[1] is None else set()
        if tag == "t|":
            out = set()
            for i in ir[1]:
                out |= self.expr_types_in(module, f, i, depth + 1)
            return out
        if tag == "n":
            return self._name_types(module, f, ir[1], depth)
        if tag == "a":
            out = set()
            for base in self.expr_types_in(module, f, ir[1], depth + 1):
                out |= self._member_types(base, ir[2], depth + 1)
            return out
        if tag == "c":
            out = set()
            callee = ir[1]
            if callee == ("n", "super"):
                return set()
            for t in self.expr_types_in(module, f, callee, depth + 1):
                out |= self._call_result(t, depth + 1)
            return out
        if tag == "s":
            return set()
        return set()

    def _name_types(self, module: str, f: FuncInfo | None, name: str, depth: int) -> set:
        if f is None:
            return self._scope_name_types(module, f, name, depth)
        # locals are re-asked for every call site that mentions them: memoise per function
        return self._memo(self._name_cache, (module, f.qualname, name),
                          lambda: self._scope_name_types(module, f, name, depth))

    def _scope_name_types(self, module: str, f: FuncInfo | None, name: str, depth: int) -> set:
        summary = self.module(module)
        scope = f
        while scope is not None:
            if name == "self" and scope.cls is not None and scope.kind != "staticmethod":
                cq = f"{module}.{scope.cls}"
                return {("cls", cq)} if scope.kind == "classmethod" else {("inst", cq)}
            if name == "cls" and scope.cls is not None:
                return {("cls", f"{module}.{scope.cls}")}
            for pname, pann in scope.params:
                if pname == name:
                    return self.annotation_types(module, pann, scope) if pann is not None else set()
            local = self._local_assigns(scope, name)
            if local:
                out = set()
                for value, annot in local:
                    if annot is not None:
                        out |= self.annotation_types(module, annot, scope)
                    out |= self.expr_types_in(module, scope, value, depth + 1)
                return out
            if name in scope.nested:
                return {("func", f"{module}.{scope.qualname}.{name}")}
            if name in scope.imports:
                t = self.resolve_import(scope.imports[name])
                return {t} if t else set()
            scope = summary.functions.get(scope.parent) if scope.parent else None
        t = self.resolve_symbol(module, name)
        if t is None:
            return set()
        if t[0] == "global":
            return self.expr_types_in(t[1], None, self.module(t[1]).globals[t[2]], depth + 1)
        return {t}

    def _member_types(self, base: Type, attr: str, depth: int) -> set:
        kind = base[0]
        if kind == "inst":
            return self.attr_types(base[1], attr, depth)
        if kind == "cls":
            m = self.lookup_method(base[1], attr)
            if m:
                return {("func", m)}
            inner = f"{base[1]}.{attr}"
            if self.cls(inner):
                return {("cls", inner)}
            for c in self.mro(base[1]):
                ci = self.cls(c)
                if ci and attr in ci.assigns:
                    if ci.bases and any(b[0] in "na" and ir_text(b).endswith("Enum") for b in ci.bases):
                        return {("inst", c)}
                    return self.expr_types_in(self.module_of(c).module, None, ci.assigns[attr], depth + 1)
            return set()
        if kind == "mod":
            t = self.resolve_symbol(base[1], attr) if base[1] in self.files else ("ext", f"{base[1]}.{attr}")
            if t and t[0] == "global":
                return self.expr_types_in(t[1], None, self.module(t[1]).globals[t[2]], depth + 1)
            return {t} if t else set()
        if kind == "ext":
            return {("ext", f"{base[1]}.{attr}")}
        return set()

    def _call_result(self, t: Type, depth: int) -> set:
        if t[0] == "cls":
            return {("inst", t[1])}
        if t[0] == "func":
            return self.return_types(t[1], depth)
        if t[0] == "ext":  # an object made outside SGLang: its methods are external calls too
            return {("ext", t[1] + "()")}
        return set()

    # ------------------------------------------------------------------ calls
    def calls(self, func_qn: str) -> list[ResolvedCall]:
        mod, local = self.split(func_qn)
        f = mod.functions.get(local) if mod else None
        if f is None:
            return []
        out = []
        for line, col, callee, _kw in f.calls:
            out.append(self.resolve_call(mod.module, f, callee, line, col))
        return out

    def resolve_call(self, module: str, f: FuncInfo, callee, line: int, col: int) -> ResolvedCall:
        text = ir_text(callee) + "()"
        # super().m(...)
        if callee[0] == "a" and callee[1] == ("c", ("n", "super"), ()) and f.cls:
            cq = f"{module}.{f.cls}"
            target = self.lookup_method(cq, callee[2], start_after=cq)
            if target:
                return ResolvedCall(line, col, text, [target], "super")
            return ResolvedCall(line, col, text, [], "unresolved")
        via: dict = {}  # target method -> the receiver classes it is reached through
        if callee[0] == "a":
            types = set()
            for base in self.expr_types_in(module, f, callee[1]):
                found = self._member_types(base, callee[2], 0)
                types |= found
                if base[0] == "inst":
                    for t in found:
                        if t[0] == "func":
                            via.setdefault(t[1], set()).add(base[1])
        else:
            types = self.expr_types_in(module, f, callee)
        targets, external = [], []
        constructor = False
        for t in sorted(types):
            if t[0] == "func":
                targets.append(t[1])
            elif t[0] == "cls":
                constructor = True
                init = self.lookup_method(t[1], "__init__")
                targets.append(t[1] if init is None else init)
            elif t[0] == "ext":
                external.append(t[1])
        targets = list(dict.fromkeys(targets))
        if targets:
            if len(targets) > 1:
                how = "polymorphic"
            elif constructor:
                how = "constructor"
            elif callee[0] == "a" and callee[1] == ("n", "self"):
                how = "self"
            elif callee[0] == "a":
                how = "attr-type"
            elif callee[0] == "n" and callee[1] in f.nested:
                how = "local"
            else:
                how = "import"
            return ResolvedCall(line, col, text, targets, how,
                                via={t: sorted(via[t]) for t in targets if t in via})
        if external:
            return ResolvedCall(line, col, text, sorted(set(external)), "external", external=True)
        if callee[0] == "n" and callee[1] in BUILTINS:
            return ResolvedCall(line, col, text, [f"builtins.{callee[1]}"], "external", external=True)
        return ResolvedCall(line, col, text, [], "unresolved")


import builtins as _builtins

BUILTINS = set(dir(_builtins))
