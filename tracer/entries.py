"""What a dict's entry holds where it is read: the writes to the dict replayed in source order.

A dict is held by a name (a local of a function, or a global). Its writes are the name's binds
(``d = {...}``), entry writes (``d[k] = v``, ``d[k1][k2] = v``) and ``d.update(...)``, each an
``EntryWrite``: the path of keys it writes under (empty for a bind) and the value.

* A write of the reading scope before the read, in its straight-line code (no compound statement
  around it), replaces what the path held; inside an ``if``, a loop or a ``try`` it may not run, so
  it adds to it; one after the read adds only where a compound statement holds both (a loop may
  run it first).
* A write of another scope (a function writing a global, a closure) runs at a time not known:
  it adds, as does every write where the read's position is not known, and ``d.setdefault(k, v)``
  (``k`` may hold something already).
* A key not known (a parameter, a call) matches every key; a bind or write above the path
  (``d["a"] = {"b": f}`` for ``d["a"]["b"]``) is read into: a display by its keys, any other
  value through a subscript of it (typed where it is asked).
"""

from __future__ import annotations

from dataclasses import dataclass

from spectrace.tracer.index import FuncInfo


@dataclass(frozen=True)
class EntryWrite:
    """One write to the dict a name holds."""
    line: int
    path: tuple  # key IRs from the holder's name: () binds the name, UNKNOWN a key not known
    value: tuple  # IR of the value written, typed in ``scope`` of ``module`` (None: at module level)
    module: str
    scope: FuncInfo | None
    ordered: bool  # a write of the reading scope, which the read's position orders


@dataclass(frozen=True)
class HeldValue:
    """One value an entry may hold: ``ir`` typed in ``scope`` of ``module`` (None: at module level)."""
    ir: tuple
    module: str
    scope: FuncInfo | None


def same_key(a, b) -> bool:
    """Constant keys equal as Python compares them for a dict (``1`` and ``"1"`` apart)."""
    return type(a[1]) is type(b[1]) and a[1] == b[1]


def _shares_branch(branches: list, a: int, b: int) -> bool:
    return any(start <= a <= end and start <= b <= end for start, end in branches)


def _in_branch(branches: list, line: int) -> bool:
    return any(start <= line <= end for start, end in branches)


def read_into(value, rest: tuple) -> list:
    """The IRs of what ``value`` holds under the keys ``rest``: a display's entries by key (the
    last written wins; one of unknown key may be any), either value's, any other value as its
    subscript."""
    if not rest:
        return [value]
    if value[0] == "t|":  # either value (a global's binds and entries in no order)
        return [ir for v in value[1] for ir in read_into(v, rest)]
    if value[0] == "d":
        out: list = []
        for k, v in zip(value[1], value[2]):
            if k[0] == "k" and rest[0][0] == "k":
                if same_key(k, rest[0]):
                    out = read_into(v, rest[1:])
            else:
                out += read_into(v, rest[1:])
        return out
    for key in rest:
        value = ("s", value, (key,))
    return [value]


def _written(w: EntryWrite, path: tuple) -> tuple[list, bool] | None:
    """What ``w`` writes at ``path`` and whether it replaces it (every key of its path known);
    None where it writes elsewhere (another key, or inside the value at ``path``)."""
    if len(w.path) > len(path):
        return None
    exact = True
    for mine, asked in zip(w.path, path):
        if mine[0] != "k" or asked[0] != "k":
            exact = False
        elif not same_key(mine, asked):
            return None
    return read_into(w.value, path[len(w.path):]), exact


def entry_values(writes: list[EntryWrite], path: tuple, line: int | None, branches: list) -> list[HeldValue]:
    """Every value the entry at ``path`` (UNKNOWN for a key not known) may hold when read at
    ``line`` (None: a position not known) of the scope whose compound statements span ``branches``."""
    held: list[HeldValue] = []
    for w in sorted((w for w in writes if w.ordered), key=lambda w: w.line):
        before = line is not None and w.line < line
        if not (before or line is None or _shares_branch(branches, w.line, line)):
            continue
        got = _written(w, path)
        if got is None:
            continue
        irs, exact = got
        found = [HeldValue(ir, w.module, w.scope) for ir in irs]
        if before and exact and not _in_branch(branches, w.line):
            held = found
        else:
            held += found
    for w in writes:
        if not w.ordered:
            got = _written(w, path)
            held += [HeldValue(ir, w.module, w.scope) for ir in got[0]] if got is not None else []
    return held


def entry_path(ir) -> tuple[tuple, tuple] | None:
    """(root name IR, key IRs) of a chain of subscripts ``d[k1]...[kn]`` written as such; else None."""
    keys = []
    while ir[0] == "s" and len(ir[2]) == 1:
        keys.append(ir[2][0])
        ir = ir[1]
    if ir[0] != "n" or not keys:
        return None
    return ir, tuple(reversed(keys))
