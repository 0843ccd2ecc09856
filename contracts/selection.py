"""Which classes ``Scheduler.model_worker`` can be, and under which conditions it is each one.

Traced from the assignments to ``self.model_worker`` in the scheduler's MRO: each assigned value
is followed through ``self.<attr>`` copies, conditional expressions, local factory bindings and the
factory's ``return <Class>`` statements, collecting the conditions (and earlier early exits) on
the way. The result is, per worker class, a list of alternatives, each a list of
``(condition text, positive)``.
"""

from __future__ import annotations

import re

from spectrace.contracts import conditions as C
from spectrace.contracts.analysis import Analysis
from spectrace.contracts.facts import Cond, FunctionFacts, path_conditions
from spectrace.contracts.values import CallValue, Chain, IfExp, Name, NoneValue, Value

Alternative = list  # [Cond]


class WorkerSelection:
    def __init__(self, analysis: Analysis):
        self.analysis = analysis
        self.symbols = analysis.symbols
        self._sources: list[tuple[Alternative, str | None]] | None = None

    def sources(self) -> list[tuple[Alternative, str | None]]:
        """[(conditions, class short name or None)] for every value ``self.model_worker`` gets."""
        if not self._sources:
            self._sources = self._attr_sources(self.analysis.scheduler_qn, self.analysis.worker_attr, 0)
        return self._sources

    def targets(self) -> list[str]:
        """Qualified names of the classes ``model_worker`` can be (needs ``analysis.scheduler_qn``)."""
        sched = self.analysis.scheduler_qn
        targets = set(self.symbols.attr_classes(sched, self.analysis.worker_attr))
        # besides the index's attribute types: the classes reached by tracing the assignments (the
        # same tracing that yields the selection conditions), qualified through the index
        sched_module = sched.rsplit(".", 1)[0]
        for _conds, short in self.sources():
            if not short:
                continue
            cands = self.symbols.find_class(short)
            # prefer the srt tree the scheduler lives in
            near = [c for c in cands if c.split(".")[:3] == sched_module.split(".")[:3]]
            targets.update(near or cands)
        if not targets:
            self.analysis.notes.append(f"no class resolved for {self.analysis.roles.consumer}.{self.analysis.worker_attr}")
        return sorted(targets)

    def conditions(self, targets: list[str]) -> dict[str, list[Alternative]]:
        """class qn -> list of alternatives, each a list of (condition text, positive)."""
        sched = self.analysis.scheduler_qn
        if not sched:
            return {}
        by_short: dict[str, list] = {}
        for alt, cls_name in self.sources():
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
            by_short[short] = [[Cond(expand_none(t), pos) for t, pos in alt] for alt in alts]
        out = {}
        for t in targets:
            short = t.rsplit(".", 1)[-1]
            if short in by_short:
                out[t] = by_short[short]
            else:
                self.analysis.notes.append(f"how {self.analysis.worker_attr} becomes {short} was not traced: treated as always possible")
                out[t] = [[]]
        return out

    def _attr_sources(self, class_qn: str, attr: str, depth: int):
        """[(conditions, class short name or None)] for every way ``self.attr`` gets its value."""
        if depth > 4:
            return []
        out = []
        for module, f, w in self.symbols.attr_writes(class_qn, attr):
            conds = path_conditions(w)
            out.extend((conds + c2, name) for c2, name in self._value_classes(class_qn, module, f, w.value, w.line, depth))
        return out

    def _value_classes(self, class_qn: str, module: str, f: FunctionFacts, desc: Value, line: int, depth: int):
        match desc:
            case NoneValue():
                return [([], None)]
            case Chain(root="self", attrs=(attr,)):
                return self._attr_sources(class_qn, attr, depth + 1)
            case IfExp(test=test, body=body, orelse=orelse):
                return [([Cond(test, True)] + c, n) for c, n in self._value_classes(class_qn, module, f, body, line, depth)] + \
                    [([Cond(test, False)] + c, n) for c, n in self._value_classes(class_qn, module, f, orelse, line, depth)]
            case CallValue(callee=callee):
                head = callee.split(".")[0]
                local = [b for b in f.bindings if b.target == head and b.line < line]
                if local and "." not in callee:
                    b = max(local, key=lambda b: b.line)
                    return self._class_values(module, f, b.value)
                return [([], callee.split(".")[-1])]
        return []

    def _class_values(self, module: str, f: FunctionFacts, desc: Value):
        """Class objects a value can be: a class name, or the returns of a factory call."""
        match desc:
            case Name(name=name):
                return [([], name)]
            case CallValue(callee=callee):
                out = []
                for t in self.symbols.resolve_callee(module, f, callee):
                    got = self.symbols.function_facts(t)
                    if got is None:
                        continue
                    for ret in got[1].returns:
                        conds = path_conditions(ret)
                        if isinstance(ret.value, Name):
                            out.append((conds, ret.value.name))
                return out
        return []
