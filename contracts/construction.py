"""Where a class's instances come from. A method of a class that the tree constructs only by
calling the class, each call under a condition (``self.tp_worker = MlxTpModelWorker(...)`` under
``use_mlx()``), runs only where one of those conditions held: a worker return path that goes
through such a method (the dynamic-disable step's ``self.worker.target_worker.forward_batch_generation``
reaching MlxTpModelWorker's) holds under them too. A class named anywhere else than at its
definition, an import and those calls (a subclass, ``isinstance``, a factory returning it, ...) has
no such condition."""

from __future__ import annotations

import ast
import re

from spectrace.contracts import conditions as C
from spectrace.contracts.facts import Cond
from spectrace.contracts.records import ReturnPath
from spectrace.contracts.symbols import Symbols

Alternative = list  # [Cond]


class Constructions:
    def __init__(self, symbols: Symbols):
        self.symbols = symbols
        self._memo: dict[str, list[Alternative] | None] = {}

    def condition(self, class_qn: str) -> list[Alternative] | None:
        """The alternatives under which the tree constructs ``class_qn``; None when it is not known
        to be constructed under a condition only."""
        if class_qn not in self._memo:
            self._memo[class_qn] = self._condition(class_qn)
        return self._memo[class_qn]

    def _condition(self, class_qn: str) -> list[Alternative] | None:
        name = class_qn.rsplit(".", 1)[1]
        project = self.symbols.project
        word = re.compile(rb"\b" + re.escape(name.encode()) + rb"\b")
        sites = project.cached_scan(f"constructions-of-{name}", lambda: _construction_sites(project, name, word))
        if not sites:
            return None
        out = []
        for rel, line in sites:
            conds = self._call_conditions(rel, line, name)
            if conds is None or not conds:
                return None  # not found, or constructed unconditionally
            out.append(conds)
        return out

    def _call_conditions(self, rel: str, line: int, name: str) -> list | None:
        spans = [s for s in self.symbols.facts.spans(rel) if s.start <= line <= s.end]
        for f in self.symbols.facts.facts(rel, spans[:1]):
            for c in f.calls:
                if c.line == line and c.callee.split(".")[-1] == name:
                    return list(c.conds)
        return None

    def conditioned(self, paths: list[ReturnPath]) -> None:
        """Add to each path the construction condition of the classes whose methods it goes through."""
        for p in paths:
            extra = []
            for step in p.via:
                cls = step.split(":", 1)[0].split(".")[0]
                found = self.symbols.find_class(cls)
                alternatives = self.condition(found[0]) if len(found) == 1 else None
                if alternatives:
                    extra.append(Cond(C.render_dnf(alternatives), True))
            if extra:
                p.conditions = [*p.conditions, *[list(x) for x in extra]]
                p.path_condition = C.render([Cond(*c) for c in p.conditions])


def _construction_sites(project, name: str, word) -> list[tuple[str, int]] | None:
    """(file, line) of every call of the class ``name``, when the tree names it nowhere else but at
    its definition and in imports; None otherwise."""
    sites = []
    for module, rel in sorted(project.files.items(), key=lambda kv: kv[1]):
        data = project.file_bytes(module)
        if name.encode() not in data or not word.search(data):
            continue
        try:
            tree = ast.parse(data)
        except SyntaxError:
            return None
        calls = {id(n.func) for n in ast.walk(tree) if isinstance(n, ast.Call)}
        for n in ast.walk(tree):
            if isinstance(n, ast.Name) and n.id == name:
                if id(n) not in calls:
                    return None  # a base class, an isinstance, a value passed on
                sites.append((rel, n.lineno))
            elif isinstance(n, ast.Attribute) and n.attr == name:
                return None  # module.Name: not followed
    return sites
