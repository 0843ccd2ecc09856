"""The symbol table every extraction pass reads: the tracer's index of the tree (``Project``:
files, classes, MROs, attribute types, symbol resolution) joined with the facts of the
functions (``FactsCache``), parsed on demand and indexed by qualified name."""

from __future__ import annotations

import re
from collections.abc import Iterator

from spectrace.contracts.class_bindings import ClassBindings, MethodBinding
from spectrace.contracts.facts import AttrWrite, FunctionFacts
from spectrace.contracts.facts_cache import FactsCache
from spectrace.contracts.managers import ManagerExits
from spectrace.contracts.predicate_methods import PredicateMethods
from spectrace.source import module_name
from spectrace.tracer.project import Project


class Symbols:
    def __init__(self, project: Project, facts: FactsCache):
        self.project = project
        self.facts = facts
        self._functions: dict[str, tuple[str, FunctionFacts]] = {}  # module.qualname -> (rel, facts)
        self.managers = ManagerExits(self)
        self.classes = ClassBindings(self)
        self.predicate_methods = PredicateMethods(self)

    # -- files and modules
    def files(self) -> list[str]:
        return sorted(self.project.files.values())

    def file_of_module(self, module: str) -> str | None:
        return self.project.files.get(module)

    @staticmethod
    def module_of_file(rel: str) -> str:
        return module_name(rel)[0]

    # -- classes
    def find_class(self, name: str) -> list[str]:
        """Qualified names of the top-level classes called ``name`` (the index's cached class-name map)."""
        return [qn for qn in self.project.find_classes(name) if self.project.split(qn)[1] == name]

    def mro(self, class_qn: str) -> list[str]:
        return self.project.mro(class_qn)

    def attr_classes(self, class_qn: str, attr: str) -> list[str]:
        """The classes ``self.attr`` can be an instance of."""
        return sorted({t[1] for t in self.project.attr_types(class_qn, attr) if t and t[0] == "inst"})

    def lookup_method(self, class_qn: str, name: str) -> str | None:
        return self.project.lookup_method(class_qn, name)

    def method_bindings(self, class_qn: str, name: str) -> list[MethodBinding]:
        """What ``instance.name(...)`` may run: aliases, conditional definitions and instance
        rebindings included (``class_bindings.py``)."""
        return self.classes.bindings(class_qn, name)

    def is_property(self, func_qn: str) -> bool:
        info = self.project.func(func_qn)
        return info is not None and info.kind == "property"

    # -- function facts
    def add(self, rel: str, functions: list[FunctionFacts]) -> list[FunctionFacts]:
        """Index facts parsed in bulk; a name already indexed keeps its first definition. Returns
        them as the passes read them: with the blocks of ``with`` statements whose manager may
        swallow what the body raises (``managers.py``)."""
        module = self.module_of_file(rel)
        out = []
        for f in functions:
            f = self.managers.resolved(module, f) if f.withs else f
            self._functions.setdefault(f"{module}.{f.qualname}", (rel, f))
            out.append(f)
        return out

    def indexed(self, func_qn: str) -> tuple[str, FunctionFacts] | None:
        """Facts of a function already parsed (no parse)."""
        return self._functions.get(func_qn)

    def function_facts(self, func_qn: str) -> tuple[str, FunctionFacts] | None:
        """Facts of a fully qualified function (parsed on demand)."""
        if func_qn in self._functions:
            return self._functions[func_qn]
        mod, local = self.project.split(func_qn)
        if mod is None:
            return None
        rel = mod.path
        for span in self.facts.spans(rel):
            name = f"{span.cls}.{span.name}" if span.cls else span.name
            if local == name or local.startswith(name + "."):
                for f in self.facts.facts(rel, [span]):
                    key = f"{mod.module}.{f.qualname}"
                    self._functions[key] = (rel, f)  # first, so that a manager deciding on it ends
                    if f.withs:
                        self._functions[key] = (rel, self.managers.resolved(mod.module, f))
        return self._functions.get(func_qn)

    def attr_writes(self, class_qn: str, attr: str) -> Iterator[tuple[str, FunctionFacts, AttrWrite]]:
        """(module, function, write) for every ``self.attr = ...`` in the class and its bases."""
        pat = re.compile(rf"\bself\.{re.escape(attr)}\s*(?::[^=]*)?=[^=]")
        literal = f"self.{attr}"
        for c in self.mro(class_qn):
            mod, _, cls = c.rpartition(".")
            rel = self.file_of_module(mod)
            if rel is None:
                continue
            spans = [s for s in self.facts.spans(rel) if s.cls == cls and literal in s.text and pat.search(s.text)]
            for f in self.facts.facts(rel, spans):
                for w in f.writes:
                    if w.root == "self" and w.attrs == [attr]:
                        yield self.module_of_file(rel), f, w

    def resolve_callee(self, module: str, facts: FunctionFacts, callee: str) -> list[str]:
        """Fully qualified targets of ``callee`` called inside ``facts`` (self.m, self.a.m, Cls.m, f)."""
        parts = callee.split(".")
        cls_qn = f"{module}.{facts.cls}" if facts.cls else None
        out: list[str] = []
        nested = f"{module}.{facts.qualname}.<locals>.{callee}"
        if len(parts) == 1 and self.indexed(nested) is not None:  # a local function shadows the module's names
            return [nested]
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
        t = self.project.resolve_symbol(module, parts[0])
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
