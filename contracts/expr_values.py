"""What the fact collectors make of expressions: an attribute chain, a call's arguments in source
order, and the record of what a value is (values.py; the facts, facts.py, hold only these)."""

from __future__ import annotations

import ast
from dataclasses import dataclass

from spectrace.contracts.snippet import DottedName, Snippet, singleton_name
from spectrace.contracts.values import AttrOf, BoolOp, CallValue, Chain, IfExp, LambdaValue, Name, NoneValue, Opaque, TupleValue, Value


def chain_of(node: ast.AST) -> tuple[str, list[str]] | None:
    """``a.b.c`` -> ("a", ["b", "c"]); None for anything that is not Name(.attr)* (a walrus or a
    literal getattr on the way read as the chain they spell)."""
    if isinstance(node, DottedName):
        return node.root, list(node.attrs)
    attrs: list[str] = []
    while True:
        if isinstance(node, ast.Attribute):
            attrs.append(node.attr)
            node = node.value
        elif isinstance(node, ast.NamedExpr):  # `(d := a.b).c` reads a.b.c
            node = node.value
        elif _literal_getattr(node):  # `getattr(a, "b").c` reads a.b.c
            attrs.append(node.args[1].value)
            node = node.args[0]
        else:
            break
    if isinstance(node, ast.Name):
        return node.id, list(reversed(attrs))
    name = singleton_name(node)
    return (name, list(reversed(attrs))) if name else None


def _literal_getattr(node: ast.AST) -> bool:
    """``getattr(x, "name")``: no default, so it is ``x.name`` (one with a default may give it)."""
    return isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "getattr" \
        and len(node.args) == 2 and not node.keywords and isinstance(node.args[1], ast.Constant) \
        and isinstance(node.args[1].value, str) and node.args[1].value.isidentifier()


def is_none(node: ast.AST | None) -> bool:
    return isinstance(node, ast.Constant) and node.value is None


def none_on_the_right(test: ast.Compare) -> tuple[ast.expr, ast.expr]:
    """The two sides of a one-operator comparison, None second (`None is not x` tests x as
    `x is not None` does)."""
    left, right = test.left, test.comparators[0]
    if is_none(left) and not is_none(right):
        return right, left
    return left, right


@dataclass
class Arg:
    keyword: str | None
    star: str  # "", "*" or "**"
    value: ast.expr


def call_args(node: ast.Call) -> list[Arg]:
    """The arguments of a call as written, positional, starred and keyword ones in source order."""
    args = [Arg(None, "*", a.value) if isinstance(a, ast.Starred) else Arg(None, "", a) for a in node.args]
    kws = [Arg(k.arg, "" if k.arg else "**", k.value) for k in node.keywords]
    if kws and args and (node.keywords[0].lineno, node.keywords[0].col_offset) < (node.args[-1].lineno, node.args[-1].col_offset):
        return sorted(args + kws, key=lambda a: (a.value.lineno, a.value.col_offset))
    return args + kws


def describe(src: Snippet, node: ast.AST | None) -> Value:
    """The record of what an expression is, as far as the flow analysis tells kinds apart (values.py)."""
    if node is None:
        return NoneValue()
    text = src.code(node)
    if is_none(node):
        return NoneValue(text[:300])
    if isinstance(node, ast.Name):
        return Name(node.id, text[:300])
    if isinstance(node, (ast.Subscript, ast.Call)) and (item := src.item_of(node)) is not None:
        return Name(item.spelled, text[:300])  # a local container's item: the root its display binds
    name = singleton_name(node)
    if name:
        return Name(name, text[:300])
    if isinstance(node, ast.Attribute):
        ch = chain_of(node)
        if ch:
            return Chain(ch[0], tuple(ch[1]), text)
        if isinstance(node.value, ast.Call):
            return AttrOf(node.attr, describe(src, node.value), text[:300])
    if isinstance(node, ast.Await) and isinstance(node.value, ast.Call):
        # `await f(...)`: the call, taken for what an in-tree coroutine f returns (return_paths)
        call = describe(src, node.value)
        if isinstance(call, CallValue):
            return CallValue(call.callee, call.keywords, call.args, call.spread, text[:200], awaited=True)
    if isinstance(node, ast.Call):
        args = call_args(node)
        kws = {a.keyword: describe(src, a.value) for a in args if a.keyword is not None}
        positional = tuple(describe(src, a.value) for a in args if a.keyword is None and not a.star)
        spread = any(a.star for a in args)  # *args or **kwargs: which parameters it fills is not known
        return CallValue(src.code(node.func), kws, positional, spread, text[:200])
    if isinstance(node, ast.IfExp):
        return IfExp(src.code(node.test), describe(src, node.body), describe(src, node.orelse), text[:300])
    if isinstance(node, (ast.Tuple, ast.List)):
        return TupleValue(tuple(describe(src, e.value if isinstance(e, ast.Starred) else e) for e in node.elts), text[:300],
                          starred=any(isinstance(e, ast.Starred) for e in node.elts))
    if isinstance(node, ast.Lambda):
        # a callable passed on: the flow analysis follows its body where it is called
        a = node.args
        params = tuple(p.arg for p in [*a.posonlyargs, *a.args, *a.kwonlyargs])
        return LambdaValue(params, describe(src, node.body), text[:200])
    if isinstance(node, ast.BoolOp):
        # binary, as written left to right: a or b or c is (a or b) or c
        n = len(node.values)
        return BoolOp("and" if isinstance(node.op, ast.And) else "or",
                      describe(src, src.prefix(node, n - 1)), describe(src, node.values[-1]), text[:300])
    return Opaque(text[:200])
