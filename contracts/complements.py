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
    found = []
    for cls, methods in by_class.items():
        for name, (how, what) in methods.items():
            comp = None
            if how == "not" and what in defined[cls] and what != name:
                comp = what
            elif how == "!=":
                comp = next((n for n, v in methods.items() if v == ("==", what)), None)
            if comp is not None:
                found.append((name, comp))
    return _undisputed(found)


def _undisputed(found) -> dict:
    """{name: value} of the (name, value) pairs found, less the names given two values (by two
    classes: which one a call means is not known)."""
    out: dict = {}
    disputed: set[str] = set()
    for name, value in found:
        if out.get(name, value) != value:
            disputed.add(name)
        out[name] = value
    return {k: v for k, v in out.items() if k not in disputed}


# ------------------------------------------------------------------ predicates of an enum

_PREDICATE = re.compile(r"return\s*\(?\s*(?:self\s*(?:==|\bis\b|\bin\b)|self\.\w+\(\s*\)|not\b|\w+\s+and\b)")


class _Members:
    """The members of a class a predicate method of it is true for, read from its one return:
    ``self == Cls.X``, ``self is Cls.X``, ``self in (Cls.X, Cls.Y)``, ``or``/``and`` of those, a
    parameter at its boolean default, another such method of the class called on ``self``. None
    for anything else (``not``, a comparison with something that is not a member of the class)."""

    def __init__(self, cls: str, methods: dict[str, ast.FunctionDef]):
        self.cls = cls
        self.methods = methods
        self._done: dict[str, frozenset | None] = {}

    def of(self, name: str) -> frozenset | None:
        if name not in self._done:
            self._done[name] = None  # a method calling itself decides nothing
            self._done[name] = self._method(self.methods[name])
        return self._done[name]

    def _method(self, fn: ast.FunctionDef) -> frozenset | None:
        a = fn.args
        params = [p.arg for p in a.posonlyargs + a.args]
        if params[:1] != ["self"] or a.vararg or a.kwarg or fn.decorator_list:
            return None
        positional = params[1:]
        defaults = dict(zip(positional[len(positional) - len(a.defaults):], a.defaults))
        defaults.update({p.arg: d for p, d in zip(a.kwonlyargs, a.kw_defaults) if d is not None})
        if len(defaults) != len(positional) + len(a.kwonlyargs):
            return None  # a parameter without a default: `x.m()` cannot be the call
        env = {k: v.value for k, v in defaults.items() if isinstance(v, ast.Constant) and isinstance(v.value, bool)}
        body = [s for s in fn.body if not (isinstance(s, ast.Expr) and isinstance(s.value, ast.Constant))]
        if len(body) != 1 or not isinstance(body[0], ast.Return) or body[0].value is None:
            return None
        got = self._value(body[0].value, env)
        return got if isinstance(got, frozenset) else None

    def _member(self, node: ast.expr) -> str | None:
        if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id == self.cls:
            return f"{self.cls}.{node.attr}"
        return None

    def _value(self, node: ast.expr, env: dict):
        """A frozenset of members, a bool (a parameter at its default), or None."""
        if isinstance(node, ast.Constant) and isinstance(node.value, bool):
            return node.value
        if isinstance(node, ast.Name):
            return env.get(node.id)
        if isinstance(node, ast.Compare) and len(node.ops) == 1 and isinstance(node.left, ast.Name) \
                and node.left.id == "self":
            op, right = node.ops[0], node.comparators[0]
            if isinstance(op, (ast.Eq, ast.Is)):
                m = self._member(right)
                return frozenset({m}) if m else None
            if isinstance(op, ast.In) and isinstance(right, (ast.Tuple, ast.List, ast.Set)):
                ms = [self._member(e) for e in right.elts]
                return frozenset(ms) if all(ms) else None
            return None
        if isinstance(node, ast.Call) and not node.args and not node.keywords \
                and isinstance(node.func, ast.Attribute) and isinstance(node.func.value, ast.Name) \
                and node.func.value.id == "self" and node.func.attr in self.methods:
            return self.of(node.func.attr)
        if isinstance(node, ast.IfExp):
            test = self._value(node.test, env)
            return self._value(node.body if test else node.orelse, env) if isinstance(test, bool) else None
        if isinstance(node, ast.BoolOp):
            parts = [self._value(v, env) for v in node.values]
            if any(p is None for p in parts):
                return None
            sets = [p for p in parts if isinstance(p, frozenset)]
            flags = [p for p in parts if isinstance(p, bool)]
            if isinstance(node.op, ast.Or):
                if any(flags):
                    return None  # true for every member: not a set of some of them
                return frozenset().union(*sets) if sets else False
            if not all(flags):
                return frozenset()
            return frozenset.intersection(*sets) if sets else True
        return None


def predicates_in(spans: list[FunctionSpan]) -> dict[str, frozenset]:
    """{method: the members of its class it is true for} for the predicate methods of each class
    of ``spans`` (``is_decode`` -> {ForwardMode.DECODE}, ``is_extend`` -> {ForwardMode.EXTEND,
    ForwardMode.MIXED, ...}); names two classes disagree on are left out."""
    by_class: dict[str, dict[str, ast.FunctionDef]] = {}
    for s in spans:
        if not s.cls or not _PREDICATE.search(s.text):
            continue
        try:
            tree = ast.parse(textwrap.dedent(s.text))
        except SyntaxError:
            continue
        fn = tree.body[0] if tree.body and isinstance(tree.body[0], (ast.FunctionDef, ast.AsyncFunctionDef)) else None
        if fn is not None:
            by_class.setdefault(s.cls, {})[fn.name] = fn
    found = []
    for cls, methods in by_class.items():
        members = _Members(cls, methods)
        found += [(name, got) for name in methods if (got := members.of(name)) is not None]
    return _undisputed(found)
