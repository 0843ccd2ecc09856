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
        # file -> its tree (None: it does not parse), for every class asked about: the files that
        # name one worker class mostly name the others
        self._trees: dict[str, ast.Module | None] = {}

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
        sites = project.cached_scan(f"constructions-of-{name}", lambda: _construction_sites(project, name, word, self._trees))
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


def _construction_sites(project, name: str, word, trees: dict) -> list[tuple[str, int]] | None:
    """(file, line) of every call of the class ``name``, when the tree names it nowhere else but at
    its definition and in imports; None otherwise. One file that names it otherwise decides, so the
    files likeliest to are parsed first (the sites are still listed in file order)."""
    literal = name.encode()
    candidates = []
    for module, rel in sorted(project.files.items(), key=lambda kv: kv[1]):
        data = project.file_bytes(module)
        if literal in data and word.search(data):
            candidates.append((rel, data))
    uncalled = re.compile(rb"\b" + re.escape(literal) + rb"\b(?![ \t]*\()")
    found = {}
    for rel, data in sorted(candidates, key=lambda c: (not _named_uncalled(c[1], uncalled), len(c[1]))):
        if rel not in trees:
            trees[rel] = _parsed(data)
        sites = _sites_in(trees[rel], name)
        if sites is None:
            return None
        found[rel] = [(rel, line) for line in sites]
    return [site for rel, _ in candidates for site in found[rel]]


def _named_uncalled(data: bytes, uncalled) -> bool:
    """Does the text name the class other than by a call, outside an import or its class statement
    (by the text alone: a guess at which files to parse first)?"""
    for m in uncalled.finditer(data):
        line = data[data.rfind(b"\n", 0, m.start()) + 1:m.start()].lstrip()
        if not line.startswith((b"from ", b"import ", b"class ")):
            return True
    return False


def _parsed(data: bytes) -> ast.Module | None:
    try:
        return ast.parse(data)
    except SyntaxError:
        return None


def _sites_in(tree: ast.Module | None, name: str) -> list[int] | None:
    """The lines of the calls of ``name`` in one file's tree; None where the file names it
    otherwise (or does not parse)."""
    if tree is None:
        return None
    lines = []
    calls = set()
    # one walk: it yields a call before its function, so the call's function is known by then
    for n in ast.walk(tree):
        if isinstance(n, ast.Call):
            calls.add(id(n.func))
        elif isinstance(n, ast.Name) and n.id == name:
            if id(n) not in calls:
                return None  # a base class, an isinstance, a value passed on
            lines.append(n.lineno)
        elif isinstance(n, ast.Attribute) and n.attr == name:
            return None  # module.Name: not followed
    return lines
