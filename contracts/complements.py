"""Complementary predicates read from the method bodies: ``is_some()`` is ``not is_none()`` when
one returns ``self != X`` and the other ``self == X`` (or one returns ``not self.other()``), so a
condition written with one excludes the other (conditions.py ``with_complements``)."""

from __future__ import annotations

import ast
import re
import textwrap

from spectrace.contracts.facts import FunctionSpan

_CANDIDATE = re.compile(r"return\s+(?:not\s+self\.\w+\(\)|self\s*[!=]=)")


def _returned(span: FunctionSpan) -> ast.expr | None:
    """The one returned expression of a method taking only ``self``."""
    try:
        tree = ast.parse(textwrap.dedent(span.text))
    except SyntaxError:
        return None
    fn = tree.body[0] if tree.body and isinstance(tree.body[0], (ast.FunctionDef, ast.AsyncFunctionDef)) else None
    if fn is None or [a.arg for a in fn.args.args] != ["self"] or fn.decorator_list:
        return None
    body = [s for s in fn.body if not (isinstance(s, ast.Expr) and isinstance(s.value, ast.Constant))]
    if len(body) != 1 or not isinstance(body[0], ast.Return) or body[0].value is None:
        return None
    return body[0].value


def complements_in(spans: list[FunctionSpan]) -> dict[str, str]:
    """{method: its complement} for the methods of each class of ``spans``, the negative one
    mapped to the positive (``is_some`` -> ``is_none``); names two classes disagree on are left out."""
    by_class: dict[str, dict[str, tuple[str, str]]] = {}
    defined: dict[str, set[str]] = {}
    for s in spans:
        if s.cls:
            defined.setdefault(s.cls, set()).add(s.name)
        if not s.cls or not _CANDIDATE.search(s.text):
            continue
        e = _returned(s)
        if isinstance(e, ast.UnaryOp) and isinstance(e.op, ast.Not) and isinstance(e.operand, ast.Call) \
                and not e.operand.args and isinstance(e.operand.func, ast.Attribute) \
                and ast.unparse(e.operand.func.value) == "self":
            by_class.setdefault(s.cls, {})[s.name] = ("not", e.operand.func.attr)
        elif isinstance(e, ast.Compare) and len(e.ops) == 1 and isinstance(e.ops[0], (ast.Eq, ast.NotEq)) \
                and ast.unparse(e.left) == "self":
            by_class.setdefault(s.cls, {})[s.name] = ("==" if isinstance(e.ops[0], ast.Eq) else "!=",
                                                      ast.unparse(e.comparators[0]))
    out: dict[str, str] = {}
    disputed: set[str] = set()
    for cls, methods in by_class.items():
        for name, (how, what) in methods.items():
            comp = None
            if how == "not" and what in defined[cls] and what != name:
                comp = what
            elif how == "!=":
                comp = next((n for n, v in methods.items() if v == ("==", what)), None)
            if comp is None:
                continue
            if out.get(name, comp) != comp:
                disputed.add(name)
            out[name] = comp
    return {k: v for k, v in out.items() if k not in disputed}
