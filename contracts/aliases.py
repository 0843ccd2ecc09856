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
