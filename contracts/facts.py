"""Per-function facts: attribute reads, writes, bindings, calls and returns.

This module holds the fact records (the values they name are the records of ``values.py``); ``facts_visitors.py`` collects
them and ``node_context.py`` says where each node sits (conditions, blocks, guards).

The facts are independent of which dataclass is being traced, so that they can be cached per
function source (``facts_cache.py``) and re-used by every analysis (the passes of ``extract.py``
decide which names hold a ``GenerationBatchResult`` and which reads are contract sites).

Only functions that can matter are looked at: ``function_spans`` cuts a file into its functions,
and each one is parsed alone from its source segment with the stdlib ``ast`` (``snippet.py`` gives
its nodes parents and their texts as written), with its line numbers shifted back to the file's.
libcst gave the same facts about nine times slower (its position metadata costs ~0.3 ms per line).

Every read carries:
- ``conds``: the enclosing if/elif/else/while/ternary/short-circuit conditions, innermost last,
  each a ``Cond(text, positive)``; the path condition is their conjunction (else-branches negated);
- guard facts for the read's first two chain prefixes (``root`` and ``root.field``): conditions
  that establish the prefix is not None, hasattr/getattr, try/except AttributeError, an early
  return/raise/continue on ``prefix is None``, or an ``assert``.
"""

from __future__ import annotations

import ast
import hashlib
import re
from dataclasses import dataclass, field
from typing import NamedTuple

from spectrace.contracts.blocks import dominates
from spectrace.contracts.kinds import GuardKind
from spectrace.contracts.values import Value


FACTS_VERSION = 50  # bump when the facts change shape: invalidates caches

# ---------------------------------------------------------------- fact records


class Cond(NamedTuple):
    """One condition a statement runs under: its text as written, and whether it holds there
    (False on an else branch, or for an earlier early exit that did not fire)."""
    text: str
    positive: bool


def path_conditions(fact) -> list[Cond]:
    """The conditions a fact (a write, binding or return) runs under: its enclosing ones, then
    its earlier early exits, which did not fire."""
    return [*fact.conds, *(Cond(e, False) for e in fact.exits)]


@dataclass
class Guard:
    kind: GuardKind
    text: str  # the guarding source, normalised
    line: int


@dataclass
class ChainRead:
    root: str
    attrs: list[str]
    line: int
    col: int
    shape: str  # the enclosing statement, normalised
    conds: list[Cond]
    blocks: list[str]  # enclosing block ids (for dominance)
    exits: list[str]  # tests of earlier `if test: return/raise/continue` in enclosing blocks (hold false here)
    guards1: list[Guard]  # guards establishing `root` is not None
    guards2: list[Guard]  # guards establishing `root.attrs[0]` is not None
    in_test: bool  # the read is (part of) an if/while/ternary/bool-op condition
    called: bool  # the full chain is called: root.a.b(...)
    bound_to: list[str] = field(default_factory=list)  # `v = root.a` / tuple unpack targets
    stored_to: str | None = None  # `obj.attr = root.a` (target text)
    via_getattr: bool = False  # getattr(root, "a", default)
    operand: bool = False  # the value is subscripted, iterated, or an operand of arithmetic or an order test


@dataclass(frozen=True)
class LoopExit:
    """A loop left only through its ``break``s (a ``while True``, or an ``else`` that raises or
    returns), each of which a statement in its body runs before: that statement has run before
    whatever follows the loop, which stands at ``blocks`` after ``end_line``."""
    end_line: int
    blocks: list[str]


def runs_before(fact, line: int, blocks: list[str]) -> bool:
    """Whether ``fact`` (a write or binding, earlier in the function) has run on every arrival at
    the statement at ``line`` in ``blocks``: it dominates it, or it precedes every way out of a loop
    that the statement follows."""
    if dominates(fact.blocks, blocks):
        return True
    exit_ = getattr(fact, "loop_exit", None)
    return exit_ is not None and line > exit_.end_line and dominates(exit_.blocks, blocks)


@dataclass
class AttrWrite:
    root: str
    attrs: list[str]  # target chain: root.attrs[0]...
    value: Value
    line: int
    shape: str
    conds: list[Cond]
    blocks: list[str]
    exits: list[str] = field(default_factory=list)
    loop_exit: LoopExit | None = None
    # the handlers around it that catch an AttributeError (`except AttributeError`, `suppress(...)`)
    handlers: list = field(default_factory=list)


@dataclass
class Binding:
    target: str
    value: Value
    line: int
    conds: list[Cond]
    blocks: list[str]
    annotation: str | None = None
    exits: list[str] = field(default_factory=list)
    loop_exit: LoopExit | None = None


@dataclass
class Return:
    value: Value
    line: int
    shape: str
    conds: list[Cond]
    blocks: list[str]
    exits: list[str] = field(default_factory=list)


@dataclass
class Assertion:
    """``assert test`` (or ``if not test: raise``): what follows it on its block runs only where
    ``test`` held."""
    test: str
    line: int
    blocks: list[str]


@dataclass
class CallSite:
    callee: str  # normalised text of the called expression
    keywords: dict[str, Value]
    npos: int
    line: int
    conds: list[Cond]
    blocks: list[str]
    args: list[Value] = field(default_factory=list)  # the positional arguments, starred ones left out
    spread: list = field(default_factory=list)  # the names spread into it: `*name` and `**name` ("**name")
    exits: list[str] = field(default_factory=list)  # tests of earlier early exits (hold false here)


@dataclass
class WithManager:
    """A ``with`` statement of the function (``contextlib.suppress`` aside, which the blocks
    already say): whether its managers swallow what the body raises is decided against the tree
    (``managers.py``), which a file's facts cannot see."""
    line: int
    body_line: int  # the first line of its body
    end_line: int
    blocks: list[str]  # the blocks the statement itself stands in
    managers: list[str]  # each item's context expression, as written


@dataclass
class Split:
    """An ``if`` or ``match`` statement: the code after it is reached through exactly one of its
    arms (``if``: body and else, an absent else included; ``match``: each case, and none where no
    case is irrefutable), so what each arm binds at its own top level, or returns or raises
    from, is bound on every way past it."""
    line: int
    blocks: list[str]  # the blocks the statement itself stands in
    arms: list[str]  # each arm's block id ("" for the way where no case of a match matches)
    leaves: list[bool]  # the arm ends in a return or raise


@dataclass
class FunctionFacts:
    qualname: str  # Class.method (module-free), nested: outer.<locals>.inner
    cls: str | None
    name: str
    line: int
    end_line: int
    params: list[tuple[str, str | None]]  # (name, annotation text)
    returns_annotation: str | None
    decorators: list[str]
    reads: list[ChainRead] = field(default_factory=list)
    writes: list[AttrWrite] = field(default_factory=list)
    # setattr(x.y, name, value) with a name that is no literal: which attribute it writes is not
    # known (``attrs`` is the object's chain below the root)
    computed_writes: list[AttrWrite] = field(default_factory=list)
    bindings: list[Binding] = field(default_factory=list)
    returns: list[Return] = field(default_factory=list)
    calls: list[CallSite] = field(default_factory=list)
    none_tested: list[str] = field(default_factory=list)  # names/chains compared to None or tested for truth
    defaults: dict[str, Value] = field(default_factory=dict)  # parameter -> its default value
    # `name["key"] = value` with a literal key: {name: [keys]}; None among them for any other key
    keyed_writes: dict = field(default_factory=dict)
    # names a function nested in this one declares `nonlocal`: calling it may rebind them here
    rebound_inside: list[str] = field(default_factory=list)
    withs: list[WithManager] = field(default_factory=list)
    # `yield v` as a Return of v (what `next()` of the generator may give); `yield from g` as an
    # opaque value
    yields: list[Return] = field(default_factory=list)
    # (WithManager, why) for each `with` whose manager may swallow what its body raises, as far as
    # the tree says (an `__exit__` taken from outside it): set against the tree (managers.py)
    undecided_withs: list = field(default_factory=list)
    is_async: bool = False  # `async def`: a call of it is a coroutine, its returns what `await` of that gives
    splits: list[Split] = field(default_factory=list)
    asserts: list[Assertion] = field(default_factory=list)
    # the items of local dicts read through (``held["k"].x``) that may hold another value than one
    # given them where they are looked up: {the lookup as written: why}
    unsure_roots: dict = field(default_factory=dict)


# ------------------------------------------------------------ function selection


class Mentions:
    """Does a function's text name a field (``.field``, or ``"field"`` for setattr) or the owner?"""

    def __init__(self, fields: list[str], owner: str):
        names = "|".join(map(re.escape, fields))
        # one pattern that starts with a character class: the scan skips to the next . or quote
        self._field = re.compile(rf"[.\"'](?:{names})\b")
        self._owner = owner
        self._owner_word = re.compile(rf"\b{re.escape(owner)}\b")

    def search(self, text: str) -> bool:
        for m in self._field.finditer(text):
            end = m.end()
            if m.group(0)[0] == "." or text[end : end + 1] in ("'", '"'):
                return True
        return self._owner in text and self._owner_word.search(text) is not None


@dataclass
class FunctionSpan:
    cls: str | None
    name: str
    start: int  # first line (decorators included)
    end: int
    text: str


def function_spans(source: str, tree: ast.Module | None = None) -> list[FunctionSpan]:
    """Top-level functions and methods of top-level classes (nested ones ride with their parent)."""
    tree = tree or ast.parse(source)
    lines = source.splitlines(keepends=True)
    spans = []

    def add(node, cls):
        start = min([node.lineno, *[d.lineno for d in node.decorator_list]])
        end = node.end_lineno
        spans.append(FunctionSpan(cls, node.name, start, end, "".join(lines[start - 1 : end])))

    def methods(body, cls):
        # a def under an `if`/`try`/`with` of the class body is a method too when it runs
        for sub in body:
            if isinstance(sub, (ast.FunctionDef, ast.AsyncFunctionDef)):
                add(sub, cls)
            elif isinstance(sub, _CLASS_BODY_BLOCKS):
                for part in ("body", "orelse", "finalbody"):
                    methods(getattr(sub, part, ()), cls)
                for h in getattr(sub, "handlers", ()):
                    methods(h.body, cls)

    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            add(node, None)
        elif isinstance(node, ast.ClassDef):
            methods(node.body, node.name)
    return spans


_CLASS_BODY_BLOCKS = (ast.If, ast.Try, ast.With, ast.AsyncWith, ast.For, ast.AsyncFor, ast.While)


def span_key(span: FunctionSpan) -> str:
    h = hashlib.sha1(f"{FACTS_VERSION}\0{span.cls}\0{span.start}\0".encode() + span.text.encode()).hexdigest()
    return h
