"""The return-paths pass: for a producer method, each ``return`` with the owner fields it leaves
set non-None, following helper calls (through the index), conditional expressions and local
bindings with the writes between them and the return.

Used for every ``model_worker`` class's scheduler-called method, and for the catalog's named
producers (``producer-sets`` contracts), which may track extra attribute names.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field

from spectrace.contracts import conditions as C
from spectrace.contracts.analysis import Analysis
from spectrace.contracts.facts import FunctionFacts
from spectrace.contracts.records import ReturnPath

MAX_HOPS = 6


@dataclass
class Outcome:
    """One way a returned value turns out."""
    sets: set[str] | None  # fields set non-None; None: could not be followed
    via: list[str] = field(default_factory=list)  # helpers followed, "qualname:line", outermost first
    unresolved: str | None = None  # why ``sets`` is None
    conds: list = field(default_factory=list)  # conditions inside the helpers
    not_a_result: bool = False  # the path returns None, not an owner instance


def _dominates(earlier_blocks: list, later_blocks: list) -> bool:
    return later_blocks[: len(earlier_blocks)] == earlier_blocks


def _covers(write_blocks: list[list[str]], prefix: list[str]) -> bool:
    """Do writes at these block paths happen on every path through the blocks below ``prefix``?"""
    if any(wb == prefix for wb in write_blocks):
        return True
    below = [wb for wb in write_blocks if wb[: len(prefix)] == prefix and len(wb) > len(prefix)]
    ifs = {wb[len(prefix)][:-1] for wb in below if wb[len(prefix)].endswith(("b", "e"))}
    return any(_covers(below, prefix + [f"{line}b"]) and _covers(below, prefix + [f"{line}e"]) for line in ifs)


class ReturnPathFinder:
    def __init__(self, analysis: Analysis, tracked: set[str]):
        self.symbols = analysis.symbols
        self.owner_name = analysis.owner_name
        self.fields = analysis.fields
        self.tracked = tracked  # attribute names whose writes on a result count as "set"
        self.defaults_set = {n for n, fi in self.fields.items() if fi.default_set}

    def paths_of(self, worker_qn: str, func_qn: str) -> list[ReturnPath]:
        got = self.symbols.function_facts(func_qn)
        if got is None:
            return []
        rel, f = got
        module = self.symbols.module_of_file(rel)
        out = []
        for ret in f.returns:
            own = list(ret.conds) + [(e, False) for e in ret.exits]
            for o in self._outcomes(module, f, ret.value, ret.line, ret.blocks, 0, (func_qn,)):
                if o.not_a_result:
                    continue
                conds = own + o.conds
                out.append(ReturnPath(
                    worker=worker_qn, method=f.qualname, file=rel, line=ret.line, shape=ret.shape,
                    path_condition=C.render(conds), conditions=[list(c) for c in conds],
                    sets=None if o.sets is None else sorted(o.sets), via=o.via, unresolved=o.unresolved,
                ))
        return out

    def _outcomes(self, module: str, f: FunctionFacts, desc: dict, line: int, blocks: list, depth: int,
                  seen: tuple) -> list[Outcome]:
        kind = desc.get("kind")
        if depth > MAX_HOPS:
            return [Outcome(None, unresolved="too many hops")]
        if kind == "none":
            return [Outcome(None, not_a_result=True)]
        if kind == "ifexp":
            return [Outcome(o.sets, o.via, o.unresolved, [(desc["test"], True)] + o.conds, o.not_a_result)
                    for o in self._outcomes(module, f, desc["body"], line, blocks, depth, seen)] + \
                [Outcome(o.sets, o.via, o.unresolved, [(desc["test"], False)] + o.conds, o.not_a_result)
                 for o in self._outcomes(module, f, desc["orelse"], line, blocks, depth, seen)]
        if kind == "call":
            return self._call_outcomes(module, f, desc, depth, seen)
        if kind == "name":
            return self._name_outcomes(module, f, desc["name"], line, blocks, depth, seen)
        return [Outcome(None, unresolved=f"returns {desc.get('text', kind)}")]

    def _call_outcomes(self, module: str, f: FunctionFacts, desc: dict, depth: int, seen: tuple) -> list[Outcome]:
        callee = desc["callee"]
        if callee.split(".")[-1] == self.owner_name:
            sets = {k for k, v in desc["kw"].items() if v.get("kind") != "none" and k in self.fields}
            return [Outcome(sets | self.defaults_set)]
        targets = self.symbols.resolve_callee(module, f, callee)
        if not targets:
            return [Outcome(None, unresolved=f"unresolved call {callee}(...)")]
        out = []
        for t in targets:
            if t in seen:
                continue
            got = self.symbols.function_facts(t)
            if got is None:
                out.append(Outcome(None, [t], f"no source for {t}"))
                continue
            rel2, f2 = got
            mod2 = self.symbols.module_of_file(rel2)
            for ret in f2.returns:
                own = list(ret.conds) + [(e, False) for e in ret.exits]
                for o in self._outcomes(mod2, f2, ret.value, ret.line, ret.blocks, depth + 1, seen + (t,)):
                    out.append(Outcome(o.sets, [f"{f2.qualname}:{ret.line}"] + o.via, o.unresolved, own + o.conds,
                                       o.not_a_result))
        return out or [Outcome(None, unresolved=f"recursive call {callee}")]

    def _name_outcomes(self, module: str, f: FunctionFacts, name: str, line: int, blocks: list, depth: int,
                       seen: tuple) -> list[Outcome]:
        binds = [b for b in f.bindings if b.target == name and b.line < line and _dominates(b.blocks, blocks)]
        if not binds:
            return [Outcome(None, unresolved=f"{name} not bound before the return")]
        b = max(binds, key=lambda b: b.line)
        base = self._outcomes(module, f, b.value, b.line, b.blocks, depth, seen)
        between = [w for w in f.writes if w.root == name and len(w.attrs) == 1 and w.attrs[0] in self.tracked
                   and b.line < w.line <= line]
        writes = [w for w in between if _dominates(w.blocks, blocks)]
        # fields written on every branch of an if/else between the binding and the return
        branch_writes = [w for w in between if not _dominates(w.blocks, blocks) and w.value.get("kind") != "none"]
        covered = {fld for fld in {w.attrs[0] for w in branch_writes}
                   if _covers([w.blocks for w in branch_writes if w.attrs[0] == fld], list(blocks))}
        out = []
        for o in base:
            sets = o.sets
            if sets is not None and not o.not_a_result:
                sets = set(sets) | covered
                for w in sorted(writes, key=lambda w: w.line):
                    if w.value.get("kind") == "none":
                        sets.discard(w.attrs[0])
                    else:
                        sets.add(w.attrs[0])
            out.append(Outcome(sets, o.via, o.unresolved, o.conds, o.not_a_result))
        return out


def worker_return_paths(analysis: Analysis, targets: list[str], methods: list[str]) -> list[ReturnPath]:
    """Return paths of each method in ``methods`` of each ``model_worker`` class."""
    finder = ReturnPathFinder(analysis, set(analysis.fields))
    paths: list[ReturnPath] = []
    for t in targets:
        for meth in methods:
            fq = analysis.symbols.lookup_method(t, meth)
            if fq:
                paths.extend(finder.paths_of(t, fq))
    return paths


def named_producer_paths(analysis: Analysis, producers: dict[str, list[str]]) -> dict:
    """``{"Class.method": [{"function", "file", "line", "paths"}]}``, one entry per class of that
    name that has the method; ``producers`` maps each to the extra attribute names it may set."""
    extra = {name for names in producers.values() for name in names}
    finder = ReturnPathFinder(analysis, set(analysis.fields) | extra)
    symbols = analysis.symbols
    out = {}
    for name in sorted(producers):
        cls_name, meth = name.rsplit(".", 1)
        found = []
        for cls_qn in symbols.find_class(cls_name):
            func_qn = symbols.lookup_method(cls_qn, meth) or f"{cls_qn}.{meth}"
            got = symbols.function_facts(func_qn)
            if got is None:
                continue
            rel, f = got
            found.append({"function": func_qn, "file": rel, "line": f.line,
                          "paths": [asdict(p) for p in finder.paths_of(cls_qn, func_qn)]})
        out[name] = found
    return out
