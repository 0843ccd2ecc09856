"""The condition under which a consumer function is entered, from the places the tree calls it.

An event loop reads nothing of the worker's configuration itself: the function that dispatches to
it does (``elif server_args.pp_size > 1: scheduler.event_loop_pp() ... else:
scheduler.event_loop_normal()``), so a read on ``event_loop_normal``'s way that a worker path
makes unsafe only on pipeline stages is safe. The entry condition of a function is the disjunction,
over every call of its name in the tree, of the branch conditions at the call (and the early exits
before it, false there), written as the calling function's text; its atoms are compared
receiver-free as every condition is (conditions.py).

Nothing is assumed (None) where the tree does not say it all: a function called nowhere in the
tree (entered from outside), a use of its name that is no call (``loop = scheduler.event_loop_pp``,
``getattr(scheduler, name)`` cannot be seen, but a reference handed on can), a call outside any
function, or a call the facts do not show.
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass

from spectrace.contracts import conditions as C
from spectrace.contracts.code_text import code_text
from spectrace.contracts.facts import Cond
from spectrace.contracts.symbols import Symbols


# in the key of the cached uses: 2, a file that names them in its comments and strings alone is
# not read, and one that does not parse leaves unknown only the names it holds
USES_VERSION = 2


@dataclass(frozen=True)
class NameUses:
    """Where a tree uses a name: the calls of it, (file, line) each, and whether it is used otherwise."""
    calls: tuple[tuple[str, int], ...]
    other: bool  # the name read, not called: the function may be entered where it is called later


@dataclass(frozen=True)
class EntryCall:
    file: str
    line: int
    caller: str  # the calling function's qualified name (module-free)
    conds: tuple[Cond, ...]  # the branch conditions at the call and the early exits before it (false)


@dataclass(frozen=True)
class EntryCondition:
    name: str
    calls: tuple[EntryCall, ...]

    @property
    def formula(self) -> C.Formula:
        return C.Or(tuple(C.conjunction(c.conds) for c in self.calls))

    def render(self) -> str:
        return " or ".join(f"({C.render(c.conds) or 'True'})" for c in self.calls)


def _uses_in(tree: ast.AST, names: set[str]) -> dict[str, tuple[list[int], bool]]:
    """name -> (the lines of its calls, whether it is used otherwise), in one walk: a call is met
    before its callee (the walk goes down level by level)."""
    called: dict[int, int] = {}
    out: dict[str, tuple[list[int], bool]] = {}
    for n in ast.walk(tree):
        if isinstance(n, ast.Call):
            called[id(n.func)] = n.lineno
            continue
        name = n.attr if isinstance(n, ast.Attribute) else n.id if isinstance(n, ast.Name) else None
        if name not in names:
            continue
        lines, other = out.get(name, ([], False))
        if id(n) in called:
            lines.append(called[id(n)])
        else:
            other = True
        out[name] = (lines, other)
    return out


def name_uses(symbols: Symbols, names: set[str]) -> dict[str, NameUses]:
    """Every use of these names as an attribute or a bare name in the tree's code (comments and
    strings are no use), cached with the tree's other whole-tree scans. Each name's uses are its
    own: asked for more names, the answer for each is the same."""
    key = f"entry-uses-v{USES_VERSION}-" + ",".join(sorted(names))

    def scan() -> dict[str, NameUses]:
        literals = [n.encode() for n in sorted(names)]
        word = re.compile(rb"\b(?:" + b"|".join(re.escape(n) for n in literals) + rb")\b")
        found: dict[str, tuple[list, bool]] = {n: ([], False) for n in names}
        project = symbols.project
        for mod, rel in sorted(project.files.items(), key=lambda kv: kv[1]):
            data = project.file_bytes(mod)
            # the literals first: the regex alone takes twenty times as long over a whole tree
            if not any(n in data for n in literals) or not word.search(data):
                continue
            code = code_text(data)
            if code is not None and not word.search(code):
                continue  # named in its comments and strings only
            try:
                tree = ast.parse(data)
            except (SyntaxError, ValueError):  # a file that does not parse may call them: nothing is known
                named = {m.group().decode() for m in word.finditer(data if code is None else code)}
                found = {n: (calls, other or n in named) for n, (calls, other) in found.items()}
                continue
            for name, (lines, other) in _uses_in(tree, names).items():
                calls, seen_other = found[name]
                found[name] = (calls + [(rel, line) for line in lines], seen_other or other)
        return {n: NameUses(tuple(sorted(calls)), other) for n, (calls, other) in found.items()}

    return symbols.project.cached_scan(key, scan) if names else {}


def _call_conditions(symbols: Symbols, rel: str, line: int, name: str) -> EntryCall | None:
    spans = [s for s in symbols.facts.spans(rel) if s.start <= line <= s.end]
    if not spans:
        return None  # module-level code: its conditions are not collected
    calls = [(f, c) for f in symbols.facts.facts(rel, spans) for c in f.calls
             if c.line == line and c.callee.rsplit(".", 1)[-1] == name]
    if not calls:
        return None
    # nested functions come with their parent: the innermost that holds the call states its conditions
    f, c = max(calls, key=lambda fc: fc[0].line)
    if len({id(x) for _, x in calls if _ is f}) != 1:
        return None  # two calls of the name on one line: which condition goes with which is not known
    return EntryCall(rel, line, f.qualname, (*c.conds, *(Cond(e, False) for e in c.exits)))


def entry_condition(symbols: Symbols, name: str, uses: dict[str, NameUses]) -> EntryCondition | None:
    """The condition under which a function called ``name`` is entered; None where not known."""
    u = uses.get(name)
    if u is None or u.other or not u.calls:
        return None
    calls = []
    for rel, line in u.calls:
        call = _call_conditions(symbols, rel, line, name)
        if call is None:
            return None
        calls.append(call)
    return EntryCondition(name, tuple(calls))
