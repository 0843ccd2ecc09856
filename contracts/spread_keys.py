"""The keys a call's ``**name`` spreads can give, where the function builds that dict from literal
keys only: a worker call's parameters it may fill, a constructor's fields it may set."""

from __future__ import annotations

import ast

from spectrace.contracts.expr_values import describe
from spectrace.contracts.snippet import Snippet
from spectrace.contracts.values import IfExp, TupleValue, Value, is_name


def spread_keys(f, call) -> set[str] | None:
    """The keys that a call's ``**name`` spreads can hold, when ``f`` builds each such local dict from
    literal keys only (``fwd_kwargs = {}`` then ``fwd_kwargs["on_publish"] = ...``) and hands it to
    nothing else; None when a key is not known (a ``*args`` spread among them, a computed key, an
    ``update``, the dict passed on)."""
    keys: set[str] = set()
    for spread in call.spread:
        name = spread[2:]
        if not spread.startswith("**") or not name.isidentifier():
            return None
        binds = [b for b in f.bindings if b.target == name]
        written = f.keyed_writes.get(name, [])
        if not binds or None in written:
            return None
        for b in binds:
            literal = _literal_keys(b.value)
            if literal is None:
                return None
            keys |= literal
        for c in f.calls:
            if c.callee.startswith(f"{name}.") or any(is_name(a, name) for a in [*c.args, *c.keywords.values()]):
                return None
        keys |= set(written)
    return keys


def _literal_keys(desc: Value) -> set[str] | None:
    """The keys of a dict display or ``dict()`` written with literal string keys."""
    if isinstance(desc, IfExp):
        body, orelse = _literal_keys(desc.body), _literal_keys(desc.orelse)
        return None if body is None or orelse is None else body | orelse
    try:
        node = ast.parse(desc.text, mode="eval").body
    except SyntaxError:
        return None
    if isinstance(node, ast.Dict) and all(isinstance(k, ast.Constant) and isinstance(k.value, str) for k in node.keys):
        return {k.value for k in node.keys}
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "dict" and not node.args:
        return {k.arg for k in node.keywords} if all(k.arg for k in node.keywords) else None
    return None


def spread_item(f, call, key: str):
    """(binding, value) of ``key`` in the one ``**name`` a call spreads, where ``name`` is bound once
    to a dict display that gives the key and no later write sets it; None otherwise."""
    if len(call.spread) != 1 or not call.spread[0].startswith("**"):
        return None
    name = call.spread[0][2:]
    binds = [b for b in f.bindings if b.target == name]
    if len(binds) != 1 or key in f.keyed_writes.get(name, []) or None in f.keyed_writes.get(name, []):
        return None
    try:
        src = Snippet(binds[0].value.text, 0)
    except SyntaxError:
        return None
    node = src.tree.body[0].value if src.tree.body and isinstance(src.tree.body[0], ast.Expr) else None
    if not isinstance(node, ast.Dict):
        return None
    for k, v in zip(node.keys, node.values):
        if isinstance(k, ast.Constant) and k.value == key:
            return binds[0], describe(src, v)
    return None


def star_items(f, call, text: str):
    """The positional arguments, in order, of a call (``text``: as written) whose one spread is
    ``*name``, where ``name`` is bound once, to a tuple or list display without a starred item, and
    nothing else uses it (no method of it, no store of an item, not handed on): (the binding, the
    values the call's positions get, each with whether the binding gives it); None otherwise."""
    if len(call.spread) != 1 or call.spread[0].startswith("**"):
        return None
    name = call.spread[0][1:]
    binds = [b for b in f.bindings if b.target == name]
    if not name.isidentifier() or len(binds) != 1 or name in f.keyed_writes:
        return None
    display = binds[0].value
    if not isinstance(display, TupleValue) or display.starred:
        return None
    if any(c.callee.startswith(f"{name}.") or any(is_name(a, name) for a in [*c.args, *c.keywords.values()])
           for c in f.calls):
        return None
    try:
        src = Snippet(text, 0)
    except SyntaxError:
        return None
    written = src.tree.body[0].value if len(src.tree.body) == 1 and isinstance(src.tree.body[0], ast.Expr) else None
    if not isinstance(written, ast.Call):
        return None
    values = []
    for a in written.args:
        if isinstance(a, ast.Starred):
            if not (isinstance(a.value, ast.Name) and a.value.id == name):
                return None
            values.extend((True, v) for v in display.items)
        else:
            values.append((False, describe(src, a)))
    return binds[0], values
