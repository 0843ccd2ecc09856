"""The symbol table: what a qualified name or a module-level name denotes, and class hierarchies.

Answers come from module summaries (``ModuleStore``), loaded as the queries reach them; text
scans (``SourceTexts``) pick the few modules worth parsing for searches by name.

A resolved name is a type tag (plain tuples: cheap to build, hash and sort; contracts read them):

* ``("inst", class_qn)``  an instance of an SGLang class
* ``("cls", class_qn)``   the class object itself
* ``("func", func_qn)``   a function or method
* ``("mod", name)``       a module
* ``("ext", dotted)``     something outside the tree (stdlib, torch, ...)
* ``("global", module, name)``  a module-level variable, typed by its value on demand
* ``("none",)``           the value None
"""

from __future__ import annotations

import difflib
import re

from spectrace.tracer.index import ClassInfo, FuncInfo, ModuleSummary
from spectrace.tracer.modules import ModuleStore
from spectrace.tracer.texts import SourceTexts

Type = tuple


class SymbolTable:
    def __init__(self, store: ModuleStore, texts: SourceTexts):
        self.store = store
        self.texts = texts
        self._mro: dict[str, list[str]] = {}
        self._subclasses: dict[str, list[str]] = {}

    # -- qualified names
    def split(self, qualname: str) -> tuple[ModuleSummary | None, str]:
        """``pkg.mod.Class.meth`` -> (module summary, "Class.meth"), longest module prefix wins."""
        parts = qualname.split(".")
        for i in range(len(parts), 0, -1):
            mod = ".".join(parts[:i])
            if mod in self.store.files:
                return self.store.module(mod), ".".join(parts[i:])
        return None, qualname

    def cls(self, qualname: str) -> ClassInfo | None:
        mod, local = self.split(qualname)
        return mod.classes.get(local) if mod is not None else None

    def func(self, qualname: str) -> FuncInfo | None:
        mod, local = self.split(qualname)
        return mod.functions.get(local) if mod is not None else None

    def module_of(self, qualname: str) -> ModuleSummary | None:
        return self.split(qualname)[0]

    # -- names at module level
    def resolve_symbol(self, module: str, name: str, _seen=None) -> Type | None:
        """What ``name`` means at the top level of ``module``."""
        _seen = _seen or set()
        if (module, name) in _seen:
            return None  # an import cycle: the name means nothing we can find
        _seen.add((module, name))
        summary = self.store.module(module)
        if summary is None:
            return ("ext", f"{module}.{name}")
        if name in summary.classes:
            return ("cls", f"{module}.{name}")
        if name in summary.functions and summary.functions[name].cls is None:
            return ("func", f"{module}.{name}")
        if name in summary.imports:
            return self.resolve_import(summary.imports[name], _seen)
        sub = f"{module}.{name}"
        if summary.is_package and sub in self.store.files:
            return ("mod", sub)
        if name in summary.globals:
            return ("global", module, name)
        for star in reversed(summary.star_imports):  # `from m import *`: the last one with the name wins
            if star in self.store.files:
                t = self.resolve_symbol(star, name, _seen)
                if t is not None and not name.startswith("_"):
                    return t
        return None

    def resolve_import(self, target, _seen=None) -> Type | None:
        """What an import binds: ``("mod", m)`` for ``import m``, ``("from", m, n)`` for ``from m import n``."""
        files = self.store.files
        if target[0] == "mod":
            mod = target[1]
            return ("mod", mod) if mod in files or mod.split(".")[0] in self.store.packages else ("ext", mod)
        _, mod, name = target
        if mod in files:
            return self.resolve_symbol(mod, name, _seen)
        if f"{mod}.{name}" in files:
            return ("mod", f"{mod}.{name}")
        return ("ext", f"{mod}.{name}")

    def type_of_expr_static(self, module: str, ir) -> Type | None:
        """Resolve a dotted name at module level (bases, decorators, annotations)."""
        if ir[0] == "n":
            return self.resolve_symbol(module, ir[1])
        if ir[0] == "a":
            base = self.type_of_expr_static(module, ir[1])
            if base is None:
                return None
            if base[0] == "mod":
                if base[1] in self.store.files:
                    return self.resolve_symbol(base[1], ir[2])
                return ("ext", f"{base[1]}.{ir[2]}")
            if base[0] == "ext":
                return ("ext", f"{base[1]}.{ir[2]}")
            if base[0] == "cls":
                inner = f"{base[1]}.{ir[2]}"
                if self.cls(inner):
                    return ("cls", inner)
        if ir[0] == "s":  # Generic[T] bases and the like
            return self.type_of_expr_static(module, ir[1])
        return None

    # -- class hierarchy
    def mro(self, class_qn: str) -> list[str]:
        """C3 linearisation over the bases the index can resolve (unresolved bases skipped)."""
        if class_qn in self._mro:
            return self._mro[class_qn]
        self._mro[class_qn] = [class_qn]  # cycle guard
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
        self._mro[class_qn] = result
        return result

    def lookup_method(self, class_qn: str, name: str, start_after: str | None = None) -> str | None:
        """The method ``name`` resolves to on ``class_qn`` (after ``start_after`` in the MRO: super())."""
        mro = self.mro(class_qn)
        if start_after is not None and start_after in mro:
            mro = mro[mro.index(start_after) + 1:]
        for c in mro:
            info = self.cls(c)
            if info is not None and name in info.methods:
                return f"{self.module_of(c).module}.{info.methods[name]}"
        return None

    def external_bases(self, class_qn: str) -> list[str]:
        """Dotted names of the bases from outside the tree that ``class_qn``'s MRO reaches."""
        out = []
        for c in self.mro(class_qn):
            info = self.cls(c)
            mod = self.module_of(c)
            for b in (info.bases if info is not None else ()):
                t = self.type_of_expr_static(mod.module, b)
                if t and t[0] == "ext" and t[1] not in ("builtins.object", "typing.Generic") and t[1] not in out:
                    out.append(t[1])
        return out

    def subclasses(self, class_qn: str) -> list[str]:
        """Classes that have ``class_qn`` in their MRO, grandchildren included (found through the
        class-bases index, then parsed)."""
        if class_qn in self._subclasses:
            return self._subclasses[class_qn]
        self._subclasses[class_qn] = []  # cycle guard
        name = class_qn.rsplit(".", 1)[-1]
        out = set()
        modules = self.texts.base_name_index().get(name, [])
        self.store.expect(modules)
        for mod in modules:
            summary = self.store.module(mod)
            for qn in (summary.classes if summary else ()):
                full = f"{summary.module}.{qn}"
                if full != class_qn and full not in out and class_qn in self.mro(full):
                    out.add(full)
                    out.update(self.subclasses(full))
        self._subclasses[class_qn] = sorted(out)
        return self._subclasses[class_qn]

    # -- searches by name
    def find_classes(self, name: str) -> list[str]:
        found = []
        modules = sorted(self.texts.class_name_index().get(name, []))
        self.store.expect(modules)
        for mod in modules:
            summary = self.store.module(mod)
            if summary is None:
                continue
            found += [f"{summary.module}.{qn}" for qn, _c in self.store.classes_named(summary, name)]
        return sorted(found)

    def find_functions(self, spec: str) -> list[str]:
        """Roots as ``Class.method``, ``module:Class.method``, ``func`` or a fully qualified name."""
        if ":" in spec:
            mod, local = spec.split(":", 1)
            summary = self.store.module(mod)
            if summary is None:
                return []
            if local in summary.functions or local in summary.classes:
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
            pattern = rb"^\s*(async\s+)?def\s+" + re.escape(spec.encode()) + rb"\b"
            for m in self.texts.grep(pattern, spec.encode()):
                summary = self.store.module(m)
                for qn, f in (summary.functions.items() if summary else ()):
                    if f.name == spec and f.cls is None and f.parent is None:
                        found.append(f"{summary.module}.{qn}")
        return sorted(found)

    def close_matches(self, spec: str, limit: int = 8) -> list[str]:
        """Function qualnames that look like ``spec`` (for "did you mean" hints)."""
        name = spec.split(".")[-1].split(":")[-1]
        defined = self.texts.defined_names(name[:4])
        # only the modules defining a name close to the one asked for are parsed (a short name
        # shares its first letters with thousands of functions)
        near = difflib.get_close_matches(name, sorted(defined), n=limit * 4, cutoff=0.5)
        candidates = set()
        for m in sorted({m for n in near for m in defined[n]}):
            summary = self.store.module(m)
            candidates.update(summary.functions if summary else ())
        wanted = spec.split(":")[-1]
        return difflib.get_close_matches(wanted, sorted(candidates), n=limit, cutoff=0.5)
