"""The summary walk of ``tracer/index.py`` is written by hand, node kind by node kind; here it is
held to a plain recursion over every child ``ast`` knows of (``ast.iter_child_nodes``), on real
SGLang modules: every call and every attribute read or written where the summary's rules say it
is recorded must be in the summary. A child field the walk forgot would lose its calls."""

from __future__ import annotations

import ast

import pytest

from spectrace.tracer.index import summarize_source

from conftest import RECENT

MODULES = (
    "sglang/srt/managers/scheduler.py",
    "sglang/srt/managers/schedule_batch.py",
    "sglang/srt/model_executor/model_runner.py",
    "sglang/srt/speculative/eagle_worker_v2.py",
    "sglang/srt/server_args.py",
)


class _Reference:
    """What the summary records, by the rules ``_Extractor`` documents, found by visiting every
    child: calls where a function, a lambda or module-level code (not a class body inside a
    function) runs them; attribute uses inside functions (a lambda's are its function's). A
    function's parameters (defaults, annotations) and a class's bases are not walked."""

    def __init__(self, tree: ast.Module):
        self.calls: set = set()
        self.attrs: set = set()
        self._walk(tree, in_func=False, hidden=False, in_lambda=False)

    def _walk(self, node, in_func: bool, hidden: bool, in_lambda: bool) -> None:
        t = type(node)
        if t in (ast.FunctionDef, ast.AsyncFunctionDef):
            for d in node.decorator_list:
                self._walk(d, in_func, hidden, in_lambda)
            for stmt in node.body:
                self._walk(stmt, True, hidden, False)
            return
        if t is ast.ClassDef:
            hidden = hidden or in_func
            for stmt in node.decorator_list + node.body:
                self._walk(stmt, False, hidden, False)
            return
        if t is ast.Call and (in_func or in_lambda or not hidden):
            self.calls.add((node.lineno, node.col_offset))
        if t is ast.Attribute and in_func:
            self.attrs.add((node.attr, node.lineno))
        in_lambda = in_lambda or t is ast.Lambda
        for child in ast.iter_child_nodes(node):
            self._walk(child, in_func, hidden, in_lambda)


@pytest.mark.parametrize("relpath", MODULES)
def test_the_walk_reaches_every_call_and_attribute(sglang_source, relpath):
    source = (sglang_source(RECENT).root / relpath).read_bytes()
    summary = summarize_source(source, relpath)
    assert summary.error is None
    calls = {(line, col) for f in summary.functions.values() for line, col, _func, _kw in f.calls}
    attrs = {(attr, line) for f in summary.functions.values() for book in (f.reads, f.writes)
             for attr, lines in book.items() for line in lines}
    ref = _Reference(ast.parse(source))
    assert len(ref.calls) > 100 and len(ref.attrs) > 100
    assert ref.calls - calls == set()
    assert ref.attrs - attrs == set()


def test_a_forgotten_child_would_be_seen():
    """The reference sees what a walk skipping a call's keyword values would miss."""
    source = b"def f(x):\n    g(key=h(x.a))\n"
    ref = _Reference(ast.parse(source))
    assert (2, 10) in ref.calls and ("a", 2) in ref.attrs
    summary = summarize_source(source, "m.py")
    assert (2, 10) in {(line, col) for line, col, _f, _k in summary.functions["f"].calls}
