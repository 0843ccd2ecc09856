"""Locals that stand for an attribute chain in a function's conditions.

``mode = batch.forward_mode; if mode.is_decode(): ...`` tests what ``batch.forward_mode.is_decode()``
tests: a condition's text is written with the chain in place of the local, so that its atom is the
one the worker's ``batch.forward_mode.is_idle()`` relates to (enum predicates, complements).

A local counts as an alias only where Python leaves no other value for it: it is bound exactly
once in the function (no other assignment, loop target, ``with ... as``, walrus, ``del``, import,
parameter, handler or pattern name, and no ``global``/``nonlocal`` of it anywhere inside), by a
plain ``name = root.a.b``; the chain's root is bound at most once itself (a parameter or one
assignment), and nothing in the function assigns or deletes an attribute along the chain. A use
runs after the one binding (otherwise Python raises UnboundLocalError), so the local holds the
chain's value; the chain is then read as a condition atom like any written directly, which the
conditions take as one value over the function (conditions.py).

The items of a local dict given literal keys (``held = {"r": result}``, ``held["r"] = result``) are
looked up as written (``held["r"]``, ``held.get("r")``), a root of the chains read through them that
the display or store binds (``dict_items``); unless the dict is sealed, such a root is unsure.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass

from spectrace.contracts.expr_values import chain_of
from spectrace.contracts.snippet import NoneTest, Snippet, normalise


@dataclass(frozen=True)
class Alias:
    name: str
    chain: str  # the chain's text, `batch.forward_mode`
    line: int  # of the binding


@dataclass
class _Bindings:
    """What one walk over a function finds: how often each name is bound (nested scopes counted
    too, which only ever disqualifies), the names declared ``global``/``nonlocal`` anywhere inside,
    the attribute chains assigned or deleted (``batch.forward_mode = ...``), and the plain
    ``name = root.a.b`` assignments, in the walk's order."""
    counts: dict[str, int]
    declared: set[str]
    written: list[str]
    candidates: list[ast.Assign]


def _bindings(fn: ast.AST) -> _Bindings:
    found = _Bindings({}, set(), [], [])
    counts = found.counts

    def bind(name: str) -> None:
        counts[name] = counts.get(name, 0) + 1

    for node in ast.walk(fn):
        if isinstance(node, ast.Name):
            if isinstance(node.ctx, (ast.Store, ast.Del)):
                bind(node.id)
        elif isinstance(node, ast.Attribute):
            if isinstance(node.ctx, (ast.Store, ast.Del)):
                ch = chain_of(node)
                if ch:
                    found.written.append(".".join([ch[0], *ch[1]]))
        elif isinstance(node, ast.Assign):
            if len(node.targets) == 1 and isinstance(node.targets[0], ast.Name) and isinstance(node.value, ast.Attribute):
                found.candidates.append(node)
        elif isinstance(node, ast.arg):
            bind(node.arg)
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            for a in node.names:
                bind((a.asname or a.name).split(".")[0])
        elif isinstance(node, ast.ExceptHandler) and node.name:
            bind(node.name)
        elif isinstance(node, (ast.MatchAs, ast.MatchStar)) and node.name:
            bind(node.name)
        elif isinstance(node, ast.MatchMapping) and node.rest:
            bind(node.rest)
        elif isinstance(node, (ast.Global, ast.Nonlocal)):
            found.declared.update(node.names)
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) and node is not fn:
            bind(node.name)
    return found


def binding_counts(fn: ast.AST) -> dict[str, int]:
    """How often each name is bound in ``fn``, nested scopes counted too."""
    return _bindings(fn).counts


def local_aliases(src: Snippet, fn: ast.FunctionDef | ast.AsyncFunctionDef) -> dict[str, Alias]:
    b = _bindings(fn)
    counts, declared, written = b.counts, b.declared, b.written
    found: dict[str, Alias] = {}
    for node in b.candidates:
        name = node.targets[0].id
        base = node.value
        while isinstance(base, ast.Attribute):
            base = base.value
        ch = chain_of(node.value) if isinstance(base, ast.Name) else None
        if ch is None or not ch[1] or counts.get(name) != 1 or name in declared:
            continue
        root, chain = ch[0], ".".join([ch[0], *ch[1]])
        if counts.get(root, 0) > 1 or root in declared or root == name:
            continue
        if any(w == chain or chain.startswith(w + ".") or w.startswith(chain + ".") for w in written):
            continue
        found[name] = Alias(name, chain, src.line(node))
    return found


def with_aliases(src: Snippet, node: ast.expr, aliases: dict[str, Alias]) -> str:
    """``src.code(node)`` with each load of an alias written as its chain."""
    if isinstance(node, NoneTest):  # no text of its own: its subject's, spelled as the test
        return node.spelled(with_aliases(src, node.left, aliases))
    text = src.code(node)
    if not aliases:
        return text
    names = [n for n in ast.walk(node) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load) and n.id in aliases]
    if not names:
        return text
    start = src.span(node)[0]
    whole = src.text[start:src.span(node)[1]]
    for n in sorted(names, key=lambda n: src.span(n)[0], reverse=True):
        a, b = src.span(n)
        whole = whole[:a - start] + aliases[n.id].chain + whole[b - start:]
    return normalise(whole)


@dataclass(frozen=True)
class DictItem:
    """``held["k"]`` or ``held.get("k")`` of a local dict given that key as a literal (a display
    ``held = {"k": v}`` or a store ``held["k"] = v``), or ``items[0]`` of a local list or tuple
    display: spelled as written, the root of the chains read through it, bound where the item is
    given (``dict_items``)."""
    spelled: str
    name: str
    key: str | int  # a dict's literal key, or a display's index counted from its start
    # why the item may be another value than one it was given where it is looked up ("" for a
    # sealed container: its one display gives it, and nothing uses it but lookups of its keys)
    unsure: str = ""


def display_items(src: Snippet, value: ast.expr) -> list[tuple[str | int, ast.expr]] | None:
    """The (key, value) pairs a dict display with literal keys or a list or tuple display without
    a starred item gives: a dict's string keys, a sequence's indices; None for another value."""
    if isinstance(value, ast.Dict):
        return [(k.value, v) for k, v in zip(value.keys, value.values) if k is not None and src.is_simple_string(k)]
    if isinstance(value, (ast.List, ast.Tuple)) and not any(isinstance(e, ast.Starred) for e in value.elts):
        return list(enumerate(value.elts))
    return None


def literal_index(node: ast.expr) -> int | None:
    """The value of an integer literal index (``0``, ``-1``), else None."""
    negative = isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub)
    inner = node.operand if negative else node
    if isinstance(inner, ast.Constant) and type(inner.value) is int:
        return -inner.value if negative else inner.value
    return None


def dict_items(src: Snippet, fn: ast.FunctionDef | ast.AsyncFunctionDef) -> dict[int, DictItem]:
    """The item lookups of the local dicts of ``fn`` given literal keys, and of its local list and
    tuple displays by literal index, {id(lookup node): item}; only for containers an item of which
    is read through (``held["k"].x``), bound to a name or returned.

    A container is sealed when ``held = {"k": v, ...}`` (``items = [v, ...]``) is the name's one
    binding (counted as for an alias, nested scopes too), with literal keys and no ``**`` or ``*``,
    and every use of the name anywhere in the function is ``held["k"]`` (a load) or
    ``held.get("k")`` of one of its keys (``items[i]`` of one of its indices). Any other (another
    binding, a store or ``del`` of an item, a method, the container handed on or iterated) may
    change what it holds: its lookups are unsure, naming the first such use."""
    given: dict[str, set] = {}  # name -> the keys its displays and stores give
    displays: dict[str, list[ast.Assign]] = {}
    sizes: dict[str, int] = {}  # name -> the length of its list or tuple display
    read_through: set[str] = set()  # the names an item of which is used as a value (`held["k"].x`)
    for node in ast.walk(fn):
        if isinstance(node, (ast.Subscript, ast.Call)) and _used_as_value(src, node):
            name, _ = _lookup_base(node)
            if name:
                read_through.add(name)
        if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name) \
                and (items := display_items(src, node.value)) is not None:
            name = node.targets[0].id
            displays.setdefault(name, []).append(node)
            given.setdefault(name, set()).update(k for k, _ in items)
            if not isinstance(node.value, ast.Dict):
                sizes[name] = len(items)
        elif isinstance(node, ast.Assign):
            for t in node.targets:
                if isinstance(t, ast.Subscript) and isinstance(t.value, ast.Name) and src.is_simple_string(t.slice):
                    given.setdefault(t.value.id, set()).add(t.slice.value)
    given = {name: keys for name, keys in given.items() if keys and name in read_through}
    if not given:
        return {}
    b = _bindings(fn)
    spoiled: dict[str, str] = {}
    for name in given:
        shown = displays.get(name, [])
        if len(shown) != 1 or b.counts.get(name) != 1 or name in b.declared:
            spoiled[name] = f"{name} is bound more than once or by other than one display"
        elif isinstance(shown[0].value, ast.Dict) and \
                any(k is None or not src.is_simple_string(k) for k in shown[0].value.keys):
            spoiled[name] = f"`{src.code(shown[0].value)[:80]}` gives {name} keys that are no literal"
    found: dict[int, tuple[ast.expr, str, str | int]] = {}
    for node in ast.walk(fn):
        if not (isinstance(node, ast.Name) and node.id in given):
            continue
        lookup, key = _lookup(src, node, sizes.get(node.id))
        if lookup is not None and key in given[node.id]:
            found[id(lookup)] = (lookup, node.id, key)
        elif isinstance(node.ctx, ast.Load) and node.id not in spoiled:
            use = src.parent(node)
            while not hasattr(use, "lineno"):  # a comprehension's or a with item's part: its expression
                use = src.parent(use)
            spoiled[node.id] = f"`{src.code(use)[:80]}` at line {src.line(use)} may change what {node.id} holds"
    out = {}
    for k, (lookup, name, key) in found.items():
        text = src.code(lookup)
        # one spelling per item (`items[-1]` is `items[1]` of two, `held.get("r")` is `held["r"]`
        # where the dict is sealed), so that a test of one guards a read through the other
        spelled = f"{name}[{key}]" if isinstance(key, int) else f'{name}["{key}"]' if '"' not in key and "\\" not in key \
            and name not in spoiled else text
        out[k] = DictItem(spelled, name, key, f"`{text}` may be another value than one given it ({spoiled[name]})"
                          if name in spoiled else "")
    return out


def _used_as_value(src: Snippet, node: ast.expr) -> bool:
    """Is ``node`` read through (``node.x``), bound to a name, returned, yielded or handed to a call,
    as it is or as a side of a conditional expression or of ``and``/``or``?"""
    parent, where = src.parent(node), src.field(node)
    while isinstance(parent, ast.BoolOp) or isinstance(parent, ast.IfExp) and where in ("body", "orelse"):
        node, parent, where = parent, src.parent(parent), src.field(parent)
    if isinstance(parent, ast.Attribute):
        return True
    if isinstance(parent, ast.Assign) and where == "value":
        return all(isinstance(t, ast.Name) for t in parent.targets)
    if isinstance(parent, ast.Call):
        return where == "args"
    return isinstance(parent, (ast.Return, ast.Yield, ast.keyword))


def _lookup_base(node: ast.expr) -> tuple[str | None, ast.expr | None]:
    """The name and key node of ``name[key]`` or ``name.get(key)`` (a string literal key, or an
    integer literal index), else None."""
    if isinstance(node, ast.Subscript):
        base, key = node.value, node.slice
        if isinstance(base, ast.Name) and literal_index(key) is not None:
            return base.id, key
    elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "get" \
            and len(node.args) == 1:
        base, key = node.func.value, node.args[0]
    else:
        return None, None
    if isinstance(base, ast.Name) and isinstance(key, ast.Constant) and isinstance(key.value, str):
        return base.id, key
    return None, None


def _lookup(src: Snippet, name: ast.Name, size: int | None = None) -> tuple[ast.expr | None, str | int | None]:
    """The lookup ``name["k"]`` (a load) or ``name.get("k")`` that ``name`` is the object of, and its
    key; for a sequence of ``size`` items, ``name[i]`` with ``i`` counted from the start."""
    parent, where = src.parent(name), src.field(name)
    if size is not None:
        i = literal_index(parent.slice) if isinstance(parent, ast.Subscript) and where == "value" \
            and isinstance(parent.ctx, ast.Load) else None
        return (parent, i + size if i < 0 else i) if i is not None and -size <= i < size else (None, None)
    if isinstance(parent, ast.Subscript) and where == "value" and isinstance(parent.ctx, ast.Load) \
            and src.is_simple_string(parent.slice):
        return parent, parent.slice.value
    if isinstance(parent, ast.Attribute) and parent.attr == "get" and isinstance(parent.ctx, ast.Load):
        call = src.parent(parent)
        if isinstance(call, ast.Call) and src.field(parent) == "func" and len(call.args) == 1 and not call.keywords \
                and src.is_simple_string(call.args[0]):
            return call, call.args[0].value
    return None, None
