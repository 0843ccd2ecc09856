"""Context managers that may swallow what their ``with`` body raises.

``with m:`` runs ``m.__exit__(type, value, tb)`` when the body raises, and goes on after the
statement when that returns a true value: the body may then stop at any of its statements, as a
``try`` whose handler passes (``contextlib.suppress`` is one, which the facts mark themselves). A
file's facts only record each ``with`` (``WithManager``); this module decides its managers against
the tree and gives the function's facts the blocks that say so (``{line}t``, as a try body's):

- a class of the tree whose ``__exit__`` (or ``__aexit__``), found through its MRO, has a
  ``return`` of anything but ``None`` or ``False`` may swallow; one that returns nothing does not;
- a function of the tree decorated ``@contextmanager``/``@asynccontextmanager`` swallows when a
  ``yield`` stands in a ``try`` body with a handler that does not end by raising;
- a class of the tree that takes ``__exit__`` from a class of ``contextlib`` is decided by that
  class: ``suppress`` swallows, ``AbstractContextManager``, ``ContextDecorator``, ``nullcontext``,
  ``closing`` and the redirections do not; from ``ExitStack`` (whose exit callbacks decide) or any
  other class outside the tree it is undecided, and the function's facts name the ``with``
  (``undecided_withs``) so that what its body does counts as ``unknown`` after it;
- a manager the tree does not resolve to a class or such a function is taken as it is written:
  not swallowing (as a decorator from outside the tree leaves a method as it is).
"""

from __future__ import annotations

import ast
import copy
import dataclasses
import re

from spectrace.contracts.facts import FunctionFacts, WithManager
from spectrace.contracts.values import Name, NoneValue

_DOTTED_CALL = re.compile(r"^([A-Za-z_][\w.]*)\s*\(.*\)$", re.S)
_DOTTED = re.compile(r"^[A-Za-z_][\w.]*$")
_GENERATOR_DECORATORS = ("contextmanager", "asynccontextmanager")
# classes outside the tree whose __exit__ a subclass may take: what it returns
_SWALLOWING_BASES = frozenset({"contextlib.suppress"})
_LETTING_GO_BASES = frozenset({
    "contextlib.AbstractContextManager", "contextlib.AbstractAsyncContextManager", "contextlib.ContextDecorator",
    "contextlib.AsyncContextDecorator", "contextlib.nullcontext", "contextlib.closing", "contextlib.aclosing",
    "contextlib.redirect_stdout", "contextlib.redirect_stderr", "contextlib.chdir", "abc.ABC",
})


class ManagerExits:
    """Whether the managers of a function's ``with`` statements may swallow, memoised per target."""

    def __init__(self, symbols):
        self.symbols = symbols
        self._by_target: dict[str, bool | str] = {}

    def resolved(self, module: str, f: FunctionFacts) -> FunctionFacts:
        """``f`` itself when none of its ``with`` statements swallows or is undecided, else a copy
        whose records in the body of each one that swallows stand in a block of that statement,
        and which names those undecided (``undecided_withs``)."""
        swallowing, undecided = [], []
        for w in f.withs:
            verdicts = [self.swallows(module, f, m) for m in w.managers]
            if True in verdicts:
                swallowing.append(w)
            elif any(isinstance(v, str) for v in verdicts):
                undecided.append((w, next(v for v in verdicts if isinstance(v, str))))
        if not swallowing and not undecided:
            return f
        out = copy.copy(f)
        for name in ("reads", "writes", "computed_writes", "bindings", "returns", "calls"):
            setattr(out, name, [_inside(r, swallowing) for r in getattr(f, name)])
        out.undecided_withs = undecided
        return out

    def swallows(self, module: str, f: FunctionFacts, manager: str) -> bool | str:
        """Whether ``manager`` may swallow what the body raises; a str says why that is undecided."""
        m = _DOTTED_CALL.match(manager)
        called, name = (True, m.group(1)) if m else (False, manager)
        if not _DOTTED.match(name):
            return False
        verdicts = [self._target_swallows(t) for t in self._targets(module, f, name, called)]
        return True if True in verdicts else next((v for v in verdicts if isinstance(v, str)), False)

    def _targets(self, module: str, f: FunctionFacts, name: str, called: bool) -> list[str]:
        """The classes (an instance used as the manager) and functions (called to make it) ``name``
        stands for, fully qualified."""
        symbols = self.symbols
        parts = name.split(".")
        cls_qn = f"{module}.{f.cls}" if f.cls else None
        if parts[0] == "self" and cls_qn:
            if len(parts) == 2 and called:
                t = symbols.lookup_method(cls_qn, parts[1])
                return [t] if t else []
            if len(parts) == 2:
                return symbols.attr_classes(cls_qn, parts[1])
            return []
        t = symbols.project.resolve_symbol(module, parts[0])
        for attr in parts[1:]:
            if t and t[0] == "mod":
                t = symbols.project.resolve_symbol(t[1], attr)
            else:
                return []
        if t and t[0] == "cls" and called:
            return [t[1]]
        if t and t[0] == "func" and called:
            return [t[1]]
        return []

    def _target_swallows(self, qn: str) -> bool | str:
        if qn not in self._by_target:
            self._by_target[qn] = self._decide(qn)
        return self._by_target[qn]

    def _decide(self, qn: str) -> bool | str:
        symbols = self.symbols
        info = symbols.project.func(qn)
        if info is not None:  # a function called to make the manager
            got = symbols.function_facts(qn)
            if got is None or not any(d.split("(")[0].split(".")[-1] in _GENERATOR_DECORATORS for d in got[1].decorators):
                return False
            return _generator_swallows(symbols, got[0], got[1])
        exits = [e for e in (symbols.lookup_method(qn, m) for m in ("__exit__", "__aexit__")) if e]
        for exit_qn in exits:
            got = symbols.function_facts(exit_qn)
            if got is not None and any(not _false(r.value) for r in got[1].returns):
                return True
        if exits:
            return False
        outside = symbols.project.symbols.external_bases(qn)  # __exit__ comes from one of these, if any
        if _SWALLOWING_BASES & set(outside):
            return True
        left = [b for b in outside if b not in _LETTING_GO_BASES]
        if not left:
            return False
        return (f"`with {qn.rsplit('.', 1)[-1]}(...)`: its __exit__ comes from {', '.join(left)}, outside the tree, "
                "which may swallow what the body raises")


def _false(value) -> bool:
    return isinstance(value, NoneValue) or (isinstance(value, Name) and value.name in ("None", "False"))


def _generator_swallows(symbols, rel: str, f: FunctionFacts) -> bool:
    """A ``yield`` in a try body whose handler does not end by raising: the exception thrown into
    the generator at the yield is caught there, and the ``with`` goes on after its body."""
    span = next((s for s in symbols.facts.spans(rel) if s.start <= f.line <= s.end), None)
    if span is None:
        return False
    text = f"class _Owner:\n{span.text}" if span.cls else span.text
    try:
        tree = ast.parse(text)
    except SyntaxError:
        return False
    for node in ast.walk(tree):
        if isinstance(node, ast.Try) and any(isinstance(n, (ast.Yield, ast.YieldFrom))
                                             for s in node.body for n in ast.walk(s)):
            if any(not (h.body and isinstance(h.body[-1], ast.Raise)) for h in node.handlers):
                return True
    return False


def _inside(record, withs: list[WithManager]):
    """``record`` with the block of each swallowing ``with`` whose body holds it (and the loop it
    runs before leaving, where a with's body holds that loop)."""
    blocks = _with_blocks(record.blocks, record.line, withs)
    exit_ = getattr(record, "loop_exit", None)
    if exit_ is not None:
        exit_ = dataclasses.replace(exit_, blocks=_with_blocks(exit_.blocks, exit_.end_line, withs))
    if blocks == record.blocks and exit_ == getattr(record, "loop_exit", None):
        return record
    return dataclasses.replace(record, blocks=blocks, **({"loop_exit": exit_} if exit_ is not None else {}))


def _with_blocks(blocks: list[str], line: int, withs: list[WithManager]) -> list[str]:
    blocks = list(blocks)
    for w in sorted(withs, key=lambda w: len(w.blocks), reverse=True):
        depth = len(w.blocks)
        if w.body_line <= line <= w.end_line and blocks[:depth] == w.blocks:
            blocks.insert(depth, f"{w.line}t")
    return blocks
