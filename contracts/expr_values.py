"""What the fact collectors make of expressions: an attribute chain, a call's arguments in source
order, and a small serialisable descriptor of a value (the facts, facts.py, hold only these)."""

from __future__ import annotations

import ast
from dataclasses import dataclass

from spectrace.contracts.snippet import DottedName, Snippet, singleton_name


def chain_of(node: ast.AST) -> tuple[str, list[str]] | None:
    """``a.b.c`` -> ("a", ["b", "c"]); None for anything that is not Name(.attr)*."""
    if isinstance(node, DottedName):
        return node.root, list(node.attrs)
    attrs: list[str] = []
    while isinstance(node, ast.Attribute):
        attrs.append(node.attr)
        node = node.value
    if isinstance(node, ast.Name):
        return node.id, list(reversed(attrs))
    name = singleton_name(node)
    return (name, list(reversed(attrs))) if name else None


def is_none(node: ast.AST | None) -> bool:
    return isinstance(node, ast.Constant) and node.value is None


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


def describe(src: Snippet, node: ast.AST | None) -> dict:
    """A small serialisable descriptor of an expression (what the flow analysis needs)."""
    desc = _describe(src, node)
    if node is not None and "text" not in desc:
        desc["text"] = src.code(node)[:300]
    return desc


def _describe(src: Snippet, node: ast.AST | None) -> dict:
    if node is None or is_none(node):
        return {"kind": "none"}
    if isinstance(node, ast.Name):
        return {"kind": "name", "name": node.id}
    name = singleton_name(node)
    if name:
        return {"kind": "name", "name": name}
    if isinstance(node, ast.Attribute):
        ch = chain_of(node)
        if ch:
            return {"kind": "chain", "root": ch[0], "attrs": ch[1], "text": src.code(node)}
    if isinstance(node, ast.Call):
        args = call_args(node)
        kws = {a.keyword: describe(src, a.value) for a in args if a.keyword is not None}
        positional = [describe(src, a.value) for a in args if a.keyword is None and not a.star]
        spread = any(a.star for a in args)  # *args or **kwargs: which parameters it fills is not known
        return {"kind": "call", "callee": src.code(node.func), "kw": kws, "npos": len(positional), "args": positional,
                "spread": spread, "text": src.code(node)[:200]}
    if isinstance(node, ast.IfExp):
        return {"kind": "ifexp", "test": src.code(node.test), "body": describe(src, node.body),
                "orelse": describe(src, node.orelse)}
    if isinstance(node, (ast.Tuple, ast.List)):
        return {"kind": "tuple", "items": [describe(src, e.value if isinstance(e, ast.Starred) else e) for e in node.elts]}
    if isinstance(node, ast.Lambda):
        # a callable passed on: the flow analysis follows its body where it is called
        a = node.args
        params = [p.arg for p in [*a.posonlyargs, *a.args, *a.kwonlyargs]]
        return {"kind": "lambda", "params": params, "body": describe(src, node.body), "text": src.code(node)[:200]}
    if isinstance(node, ast.BoolOp):
        # binary, as written left to right: a or b or c is (a or b) or c
        n = len(node.values)
        return {"kind": "boolop", "op": "and" if isinstance(node.op, ast.And) else "or",
                "left": describe(src, src.prefix(node, n - 1)), "right": describe(src, node.values[-1])}
    return {"kind": "expr", "text": src.code(node)[:200]}
