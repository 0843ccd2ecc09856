"""Which names of a function hold an owner instance, and how each comes to hold it: parameters
and locals annotated with the owner, results of calls that return it (resolved through the index,
else by the names of the scanned functions annotated to return it), aliases, constructors."""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from spectrace.contracts.analysis import Analysis
from spectrace.contracts.facts import FunctionFacts
from spectrace.tracer.index import ir_text


def mentions(text: str | None, name: str) -> bool:
    return bool(text) and re.search(rf"\b{re.escape(name)}\b", text) is not None


@dataclass
class Holders:
    why: dict[str, str] = field(default_factory=dict)  # name -> how it comes to hold the owner
    calls: set[str] = field(default_factory=set)  # callees seen returning the owner

    def __contains__(self, name: str) -> bool:
        return name in self.why


@dataclass
class Inbound:
    why: str
    caller: str  # Class.method that passes the result
    site: str  # file:line of the call
    conds: list  # the call's path condition in the caller, [(text, positive)]


class HolderFinder:
    def __init__(self, analysis: Analysis, scanned: dict[str, list[FunctionFacts]]):
        self.analysis = analysis
        self.owner_name = analysis.owner_name
        self.symbols = analysis.symbols
        # fallback for calls the index cannot resolve: functions of the scope annotated to return the owner
        self.owner_returning_names = {f.name for flist in scanned.values() for f in flist
                                      if mentions(f.returns_annotation, self.owner_name)}
        # (module, qualname) -> {param: Inbound}: unannotated parameters that a receiving function
        # passes its worker result to (a relay moved into a helper keeps its identity)
        self.inbound: dict[tuple[str, str], dict[str, Inbound]] = {}

    def calls_passing(self, module: str, f, names: set):
        """(call, callee's file, callee's facts, the callee's (param, annotation) that receive one of
        ``names``) for each call in ``f`` that passes one of them, per resolved callee; a call of
        the owner's own method on one of them (``result.copy_to_cpu()``) passes it as ``self``."""
        for c in f.calls:
            method = self._owner_method(c.callee, names)
            if method is not None:
                yield c, *method, [("self", "")]
                continue
            pos = [i for i, a in enumerate(c.args) if a.get("kind") == "name" and a["name"] in names]
            kws = [k for k, a in c.keywords.items() if a.get("kind") == "name" and a["name"] in names]
            if not pos and not kws:
                continue
            for target in self.symbols.resolve_callee(module, f, c.callee):
                got = self.symbols.function_facts(target)
                if got is None:
                    continue
                rel2, g = got
                params = [p for p in g.params if not (g.cls and p[0] in ("self", "cls"))]
                yield c, rel2, g, [params[i] for i in pos if i < len(params)] + [p for p in params if p[0] in kws]

    def _owner_method(self, callee: str, names: set) -> tuple[str, FunctionFacts] | None:
        """(file, facts) of the owner's method that ``callee`` (``holder.m``) calls."""
        parts = callee.split(".")
        if not self.analysis.roles.owner_methods or len(parts) != 2 or parts[0] not in names:
            return None
        owner = self.analysis.owner
        module = self.symbols.module_of_file(owner.file)
        target = self.symbols.lookup_method(f"{module}.{owner.name}", parts[1]) if module else None
        return self.symbols.function_facts(target) if target else None

    def of(self, module: str, f: FunctionFacts) -> Holders:
        holders = Holders()
        for name, ann in f.params:
            if mentions(ann, self.owner_name):
                holders.why[name] = f"parameter annotated {ann}"
        for name, inbound in self.inbound.get((module, f.qualname), {}).items():
            holders.why.setdefault(name, inbound.why)
        changed = True
        rounds = 0
        while changed and rounds < 4:
            changed, rounds = False, rounds + 1
            for b in f.bindings:
                if b.target in holders:
                    continue
                if mentions(b.annotation, self.owner_name):
                    why = f"annotated {b.annotation}"
                else:
                    why = self._value_holds(module, f, b.value, holders)
                if why:
                    holders.why[b.target] = why
                    changed = True
        return holders

    def _value_holds(self, module: str, f: FunctionFacts, desc: dict, holders: Holders) -> str | None:
        kind = desc.get("kind")
        if kind == "name" and desc["name"] in holders:
            return f"alias of {desc['name']}"
        if kind == "call":
            callee = desc["callee"]
            if callee.split(".")[-1] == self.owner_name:
                return "constructed"
            if self._call_returns_owner(module, f, callee):
                holders.calls.add(callee)
                return f"returned by {callee}(...)"
        if kind == "ifexp":
            return self._value_holds(module, f, desc["body"], holders) or self._value_holds(module, f, desc["orelse"], holders)
        return None

    def _call_returns_owner(self, module: str, f: FunctionFacts, callee: str) -> bool:
        targets = self.symbols.resolve_callee(module, f, callee)
        if any(self._function_returns_owner(t) for t in targets):
            return True
        if targets:
            return False
        return callee.split(".")[-1] in self.owner_returning_names

    def _function_returns_owner(self, func_qn: str) -> bool:
        project = self.symbols.project
        info = project.func(func_qn)
        if info is not None and info.returns is not None and mentions(ir_text(info.returns), self.owner_name):
            return True
        return any(t and t[1].endswith(f".{self.owner_name}") for t in project.return_types(func_qn))

    def propagate(self, receivers: list[tuple[str, str, FunctionFacts]], prefix: str) -> None:
        """Bind the parameters of the functions that each receiver (a function holding a result
        ``returned by <prefix>...``) passes that result to, one call down: ``self._helper(batch_result)``.
        Only unannotated parameters: an annotation naming another type says the argument is not a result."""
        for module, rel, f in receivers:
            holders = self.of(module, f)
            poly = {h for h, why in holders.why.items() if why.startswith(prefix)}
            if not poly:
                continue
            for c, rel2, g, names in self.calls_passing(module, f, poly):
                for name, ann in names:
                    if ann and not mentions(ann, self.owner_name):
                        continue
                    key = (self.symbols.module_of_file(rel2), g.qualname)
                    self.inbound.setdefault(key, {}).setdefault(name, Inbound(
                        why=f"parameter {name}, passed the result by {f.qualname} ({rel}:{c.line})",
                        caller=f.qualname, site=f"{rel}:{c.line}", conds=[tuple(x) for x in c.conds]))
