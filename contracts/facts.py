"""Per-function facts from libcst: attribute reads, writes, bindings, calls and returns.

The facts are independent of which dataclass is being traced, so that they can be cached per
function source (content hash) and re-used by every analysis (``flow.py`` decides which names
hold a ``GenerationBatchResult`` and which reads are contract sites).

Only functions that can matter are parsed with libcst: ``select_functions`` picks them with the
stdlib ``ast`` (cheap), and each one is parsed alone from its source segment (libcst's
PositionProvider costs ~0.3 ms per line, too much for whole 6,000-line modules), with its line
numbers shifted back to the file's.

Every read carries:
- ``conds``: the enclosing if/elif/else/while/ternary/short-circuit conditions, innermost last,
  each as ``(text, positive)``; the path condition is their conjunction (else-branches negated);
- guard facts for the read's first two chain prefixes (``root`` and ``root.field``): conditions
  that establish the prefix is not None, hasattr/getattr, try/except AttributeError, an early
  return/raise/continue on ``prefix is None``, or an ``assert``.
"""

from __future__ import annotations

import ast
import hashlib
import re
from dataclasses import dataclass, field
from typing import Iterable

import libcst as cst
import libcst.matchers as m
from libcst.metadata import MetadataWrapper, ParentNodeProvider, PositionProvider

FACTS_VERSION = 4  # bump when the facts change shape: invalidates caches

_EMPTY_MODULE = cst.Module(body=[])


def code(node: cst.CSTNode) -> str:
    """Source text of a node, normalised to one line (libcst's code generator + whitespace fold)."""
    text = _EMPTY_MODULE.code_for_node(node)
    text = re.sub(r"#[^\n]*", "", text)  # comments inside multi-line conditions
    text = re.sub(r"\s+", " ", text).strip()
    text = re.sub(r"([(\[{]) ", r"\1", text)
    text = re.sub(r" ([)\]}])", r"\1", text)
    text = re.sub(r",([)\]}])", r"\1", text)  # trailing commas of exploded calls
    return text


def chain_of(node: cst.BaseExpression) -> tuple[str, list[str]] | None:
    """``a.b.c`` -> ("a", ["b", "c"]); None for anything that is not Name(.attr)*."""
    attrs: list[str] = []
    while isinstance(node, cst.Attribute):
        attrs.append(node.attr.value)
        node = node.value
    if isinstance(node, cst.Name):
        return node.value, list(reversed(attrs))
    return None


# ---------------------------------------------------------------- fact records


@dataclass
class Guard:
    kind: str  # "not-none-check", "truthiness", "hasattr", "getattr-default", "try-except", "early-exit", "assert", "isinstance"
    text: str  # the guarding source, normalised
    line: int


@dataclass
class ChainRead:
    root: str
    attrs: list[str]
    line: int
    col: int
    shape: str  # the enclosing statement, normalised
    conds: list[tuple[str, bool]]
    blocks: list[str]  # enclosing block ids (for dominance)
    exits: list[str]  # tests of earlier `if test: return/raise/continue` in enclosing blocks (hold false here)
    guards1: list[Guard]  # guards establishing `root` is not None
    guards2: list[Guard]  # guards establishing `root.attrs[0]` is not None
    in_test: bool  # the read is (part of) an if/while/ternary/bool-op condition
    called: bool  # the full chain is called: root.a.b(...)
    bound_to: list[str] = field(default_factory=list)  # `v = root.a` / tuple unpack targets
    stored_to: str | None = None  # `obj.attr = root.a` (target text)
    via_getattr: bool = False  # getattr(root, "a", default)


@dataclass
class AttrWrite:
    root: str
    attrs: list[str]  # target chain: root.attrs[0]...
    value: dict  # expression descriptor
    line: int
    shape: str
    conds: list[tuple[str, bool]]
    blocks: list[str]
    exits: list[str] = field(default_factory=list)


@dataclass
class Binding:
    target: str
    value: dict
    line: int
    conds: list[tuple[str, bool]]
    blocks: list[str]
    annotation: str | None = None
    exits: list[str] = field(default_factory=list)


@dataclass
class Return:
    value: dict
    line: int
    shape: str
    conds: list[tuple[str, bool]]
    blocks: list[str]
    exits: list[str] = field(default_factory=list)


@dataclass
class CallSite:
    callee: str  # normalised text of the called expression
    keywords: dict  # name -> descriptor
    npos: int
    line: int
    conds: list[tuple[str, bool]]
    blocks: list[str]
    args: list = field(default_factory=list)  # positional argument descriptors


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
    bindings: list[Binding] = field(default_factory=list)
    returns: list[Return] = field(default_factory=list)
    calls: list[CallSite] = field(default_factory=list)
    none_tested: list[str] = field(default_factory=list)  # names/chains compared to None or tested for truth


def describe(node: cst.BaseExpression | None) -> dict:
    """A small serialisable descriptor of an expression (what the flow analysis needs)."""
    desc = _describe(node)
    if node is not None and "text" not in desc:
        desc["text"] = code(node)[:300]
    return desc


def _describe(node: cst.BaseExpression | None) -> dict:
    if node is None:
        return {"kind": "none"}
    if m.matches(node, m.Name("None")):
        return {"kind": "none"}
    if isinstance(node, cst.Name):
        return {"kind": "name", "name": node.value}
    if isinstance(node, cst.Attribute):
        ch = chain_of(node)
        if ch:
            return {"kind": "chain", "root": ch[0], "attrs": ch[1], "text": code(node)}
    if isinstance(node, cst.Call):
        kws = {a.keyword.value: describe(a.value) for a in node.args if a.keyword is not None}
        npos = sum(1 for a in node.args if a.keyword is None and not a.star)
        return {"kind": "call", "callee": code(node.func), "kw": kws, "npos": npos, "text": code(node)[:200]}
    if isinstance(node, cst.IfExp):
        return {"kind": "ifexp", "test": code(node.test), "body": describe(node.body), "orelse": describe(node.orelse)}
    if isinstance(node, (cst.Tuple, cst.List)):
        return {"kind": "tuple", "items": [describe(e.value) for e in node.elements]}
    if isinstance(node, cst.BooleanOperation):
        return {"kind": "boolop", "op": "and" if isinstance(node.operator, cst.And) else "or",
                "left": describe(node.left), "right": describe(node.right)}
    return {"kind": "expr", "text": code(node)[:200]}


# ------------------------------------------------------------- guard detection

_EXIT_STMTS = (cst.Return, cst.Raise, cst.Continue, cst.Break)
_CATCHES_ATTRIBUTE = {"AttributeError", "TypeError", "Exception", "BaseException"}


def _split_and(node: cst.BaseExpression) -> list[cst.BaseExpression]:
    if isinstance(node, cst.BooleanOperation) and isinstance(node.operator, cst.And):
        return _split_and(node.left) + _split_and(node.right)
    return [node]


def _split_or(node: cst.BaseExpression) -> list[cst.BaseExpression]:
    if isinstance(node, cst.BooleanOperation) and isinstance(node.operator, cst.Or):
        return _split_or(node.left) + _split_or(node.right)
    return [node]


def _strip_parens(text: str) -> str:
    return text


def _is_prefix(node: cst.BaseExpression, prefix: str) -> bool:
    ch = chain_of(node)
    return ch is not None and ".".join([ch[0], *ch[1]]) == prefix


def _asserts_present(test: cst.BaseExpression, positive: bool, prefix: str) -> str | None:
    """Does ``test`` (taken as true when ``positive``, else as false) imply ``prefix`` is not None?

    Returns the guard kind or None.
    """
    if isinstance(test, cst.UnaryOperation) and isinstance(test.operator, cst.Not):
        return _asserts_present(test.expression, not positive, prefix)
    parts = _split_and(test) if positive else _split_or(test)
    if len(parts) > 1:
        for p in parts:
            kind = _asserts_present(p, positive, prefix)
            if kind:
                return kind
        return None
    if positive and _is_prefix(test, prefix):
        return "truthiness"
    # a chain deeper than the prefix being truthy/not None also implies the prefix exists
    if positive:
        ch = chain_of(test)
        if ch and ".".join([ch[0], *ch[1]]).startswith(prefix + "."):
            return "truthiness"
    if isinstance(test, cst.Comparison) and len(test.comparisons) == 1:
        comp = test.comparisons[0]
        rhs_none = m.matches(comp.comparator, m.Name("None"))
        if rhs_none and _is_prefix(test.left, prefix):
            if isinstance(comp.operator, cst.IsNot) and positive:
                return "not-none-check"
            if isinstance(comp.operator, cst.Is) and not positive:
                return "not-none-check"
        if isinstance(comp.operator, (cst.NotEqual,)) and rhs_none and positive and _is_prefix(test.left, prefix):
            return "not-none-check"
    if positive and isinstance(test, cst.Call):
        fn = code(test.func)
        if fn == "hasattr" and len(test.args) >= 2:
            root, _, attr = prefix.rpartition(".")
            if code(test.args[0].value) == root and m.matches(test.args[1].value, m.SimpleString()):
                if test.args[1].value.evaluated_value == attr:
                    return "hasattr"
        if fn == "isinstance" and test.args and _is_prefix(test.args[0].value, prefix):
            return "isinstance"
    return None


def _tested_names(test: cst.BaseExpression) -> Iterable[str]:
    """Names and chains a condition checks for None/truthiness (for alias guards)."""
    for p in _split_and(test) + _split_or(test):
        if isinstance(p, cst.UnaryOperation) and isinstance(p.operator, cst.Not):
            p = p.expression
        ch = chain_of(p)
        if ch:
            yield ".".join([ch[0], *ch[1]])
        if isinstance(p, cst.Comparison) and len(p.comparisons) == 1:
            if m.matches(p.comparisons[0].comparator, m.Name("None")):
                ch = chain_of(p.left)
                if ch:
                    yield ".".join([ch[0], *ch[1]])


# ------------------------------------------------------------------- visitor


class FunctionFactsVisitor(cst.CSTVisitor):
    """Collects facts for one function snippet (and its nested functions), one handler per node kind."""

    METADATA_DEPENDENCIES = (PositionProvider, ParentNodeProvider)

    def __init__(self, cls: str | None, line_offset: int):
        super().__init__()
        self.cls = cls
        self.line_offset = line_offset
        self.functions: list[FunctionFacts] = []
        self._stack: list[FunctionFacts] = []

    # -- helpers
    def _line(self, node: cst.CSTNode) -> int:
        return self.get_metadata(PositionProvider, node).start.line + self.line_offset

    def _col(self, node: cst.CSTNode) -> int:
        return self.get_metadata(PositionProvider, node).start.column

    def _parent(self, node: cst.CSTNode) -> cst.CSTNode | None:
        return self.get_metadata(ParentNodeProvider, node, None)

    def _context(self, node: cst.CSTNode):
        """Walk up to the function: conditions, block ids, the statement, in-test flag, try handlers."""
        conds: list[tuple[str, bool]] = []
        cond_nodes: list[tuple[cst.BaseExpression, bool]] = []
        blocks: list[str] = []
        statement: cst.CSTNode | None = None
        in_test = False
        handlers: list[tuple[str, int]] = []
        exits_before: list[tuple[cst.BaseExpression, int]] = []  # (test, line) of `if test: return` before us
        asserts_before: list[tuple[cst.BaseExpression, int]] = []
        child, cur = node, self._parent(node)
        while cur is not None and not isinstance(cur, cst.FunctionDef):
            if statement is None and isinstance(cur, (cst.SimpleStatementLine,)):
                statement = cur
            if isinstance(cur, (cst.If, cst.While)):
                if child is cur.test:
                    in_test = True
                    if statement is None:
                        statement = cur
                elif child is cur.body:
                    cond_nodes.append((cur.test, True))
                    blocks.append(f"{self._line(cur)}b")
                else:  # orelse: Else or an elif If
                    cond_nodes.append((cur.test, False))
                    blocks.append(f"{self._line(cur)}e")
            elif isinstance(cur, cst.IfExp):
                if child is cur.body:
                    cond_nodes.append((cur.test, True))
                elif child is cur.orelse:
                    cond_nodes.append((cur.test, False))
                else:
                    in_test = True
            elif isinstance(cur, cst.BooleanOperation):
                if child is cur.right:
                    cond_nodes.append((cur.left, isinstance(cur.operator, cst.And)))
                in_test = in_test or self._is_test_position(cur)
            elif isinstance(cur, cst.Try):
                if child is cur.body:
                    for h in cur.handlers:
                        names = self._handler_names(h)
                        if not names or names & _CATCHES_ATTRIBUTE:
                            handlers.append((f"except {', '.join(sorted(names)) or '(bare)'}", self._line(h)))
                    pass  # a try body runs like straight-line code for dominance
                else:
                    blocks.append(f"{self._line(cur)}h")
            elif isinstance(cur, cst.For) and child is cur.body:
                blocks.append(f"{self._line(cur)}f")  # a with-body always runs: no block of its own
            if isinstance(cur, cst.IndentedBlock) or isinstance(cur, cst.Module):
                # statements before `child` in this block: early exits and asserts
                body = cur.body
                for stmt in body:
                    if stmt is child:
                        break
                    if isinstance(stmt, cst.If) and self._exits(stmt.body) and not stmt.orelse:
                        exits_before.append((stmt.test, self._line(stmt)))
                    if isinstance(stmt, cst.SimpleStatementLine):
                        for small in stmt.body:
                            if isinstance(small, cst.Assert):
                                asserts_before.append((small.test, self._line(stmt)))
            child, cur = cur, self._parent(cur)
        cond_nodes.reverse()
        blocks.reverse()
        conds = []
        for t, pos in cond_nodes:  # `if a and b` contributes a, b; `else` of `a or b`: not a, not b
            parts = _split_and(t) if pos else _split_or(t)
            conds.extend((code(p), pos) for p in parts)
        return {
            "exits": [code(t) for t, _ in exits_before],
            "conds": conds,
            "cond_nodes": cond_nodes,
            "blocks": blocks,
            "statement": statement,
            "in_test": in_test,
            "handlers": handlers,
            "exits_before": exits_before,
            "asserts_before": asserts_before,
        }

    def _is_test_position(self, node: cst.CSTNode) -> bool:
        parent = self._parent(node)
        while isinstance(parent, (cst.BooleanOperation, cst.UnaryOperation)):
            node, parent = parent, self._parent(parent)
        return isinstance(parent, (cst.If, cst.While, cst.IfExp)) and getattr(parent, "test", None) is node

    @staticmethod
    def _handler_names(h: cst.ExceptHandler) -> set[str]:
        if h.type is None:
            return set()
        if isinstance(h.type, cst.Tuple):
            return {code(e.value).split(".")[-1] for e in h.type.elements}
        return {code(h.type).split(".")[-1]}

    @staticmethod
    def _exits(block: cst.BaseSuite) -> bool:
        body = block.body if isinstance(block, cst.IndentedBlock) else [block]
        if not body:
            return False
        last = body[-1]
        if isinstance(last, cst.SimpleStatementLine):
            return any(isinstance(s, _EXIT_STMTS) for s in last.body)
        if isinstance(last, cst.SimpleStatementSuite):
            return any(isinstance(s, _EXIT_STMTS) for s in last.body)
        return False

    def _guards_for(self, prefix: str, ctx: dict) -> list[Guard]:
        guards: list[Guard] = []
        for test, positive in ctx["cond_nodes"]:
            kind = _asserts_present(test, positive, prefix)
            if kind:
                guards.append(Guard(kind, code(test) if positive else f"not ({code(test)})", self._line(test)))
        for test, line in ctx["exits_before"]:
            if _asserts_present(test, False, prefix):
                guards.append(Guard("early-exit", f"if {code(test)}: <exit>", line))
        for test, line in ctx["asserts_before"]:
            if _asserts_present(test, True, prefix):
                guards.append(Guard("assert", f"assert {code(test)}", line))
        for text, line in ctx["handlers"]:
            guards.append(Guard("try-except", text, line))
        return guards

    def _statement_shape(self, node: cst.CSTNode, ctx: dict) -> str:
        stmt = ctx["statement"]
        if stmt is None:
            return code(node) if isinstance(node, cst.BaseExpression) else ""
        if isinstance(stmt, cst.SimpleStatementLine):
            return "; ".join(code(s) for s in stmt.body)
        if isinstance(stmt, (cst.If, cst.While)):
            return f"{'if' if isinstance(stmt, cst.If) else 'while'} {code(stmt.test)}:"
        return code(stmt)

    # -- functions
    def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
        name = node.name.value
        if self._stack:
            qual = f"{self._stack[-1].qualname}.<locals>.{name}"
            cls = self._stack[-1].cls
        else:
            qual = f"{self.cls}.{name}" if self.cls else name
            cls = self.cls
        params = []
        for p in [*node.params.posonly_params, *node.params.params, *node.params.kwonly_params]:
            params.append((p.name.value, code(p.annotation.annotation) if p.annotation else None))
        facts = FunctionFacts(
            qualname=qual,
            cls=cls,
            name=name,
            line=self._line(node),
            end_line=self.get_metadata(PositionProvider, node).end.line + self.line_offset,
            params=params,
            returns_annotation=code(node.returns.annotation) if node.returns else None,
            decorators=[code(d.decorator) for d in node.decorators],
        )
        self._stack.append(facts)
        self.functions.append(facts)

    def leave_FunctionDef(self, original_node: cst.FunctionDef) -> None:
        self._stack.pop()

    def visit_Lambda(self, node: cst.Lambda) -> bool:
        return True

    # -- attribute reads
    def visit_Attribute(self, node: cst.Attribute) -> bool | None:
        if not self._stack:
            return None
        parent = self._parent(node)
        if isinstance(parent, cst.Attribute) and parent.value is node:
            return None  # only the outermost attribute of a chain is a read record
        ch = chain_of(node)
        if ch is None:
            return None
        if self._is_store_target(node):
            return None  # writes are recorded by visit_Assign / visit_AugAssign
        self._record_read(node, ch[0], ch[1], called=isinstance(parent, cst.Call) and parent.func is node)
        return None

    def _is_store_target(self, node: cst.CSTNode) -> bool:
        parent = self._parent(node)
        if isinstance(parent, cst.AssignTarget) and parent.target is node:
            return True
        if isinstance(parent, (cst.AnnAssign,)) and parent.target is node:
            return True
        if isinstance(parent, cst.Element):
            grand = self._parent(parent)
            if isinstance(grand, (cst.Tuple, cst.List)):
                return self._is_store_target(grand)
        return False

    def _record_read(self, node: cst.CSTNode, root: str, attrs: list[str], called: bool, via_getattr: bool = False):
        ctx = self._context(node)
        guards1 = self._guards_for(root, ctx)
        guards2 = self._guards_for(f"{root}.{attrs[0]}", ctx) if attrs else []
        read = ChainRead(
            root=root,
            attrs=attrs,
            line=self._line(node),
            col=self._col(node),
            shape=self._statement_shape(node, ctx),
            conds=ctx["conds"],
            blocks=ctx["blocks"],
            exits=ctx["exits"],
            guards1=guards1,
            guards2=guards2,
            in_test=ctx["in_test"],
            called=called,
            via_getattr=via_getattr,
        )
        if via_getattr:
            read.guards2.append(Guard("getattr-default", read.shape, read.line))
        self._bind_targets(node, read)
        self._stack[-1].reads.append(read)

    def _bind_targets(self, node: cst.CSTNode, read: ChainRead) -> None:
        """`v = root.a`, `a, b = (root.a, root.b)`, `obj.x = root.a`: where the value goes."""
        parent = self._parent(node)
        element_index = None
        if isinstance(parent, cst.Element):
            tup = self._parent(parent)
            if isinstance(tup, cst.Tuple):
                element_index = list(tup.elements).index(parent)
                node, parent = tup, self._parent(tup)
        if isinstance(parent, cst.Assign) and parent.value is node:
            for t in parent.targets:
                target = t.target
                if element_index is not None and isinstance(target, (cst.Tuple, cst.List)):
                    if element_index < len(target.elements):
                        target = target.elements[element_index].value
                    else:
                        continue
                if isinstance(target, cst.Name):
                    read.bound_to.append(target.value)
                elif isinstance(target, (cst.Attribute, cst.Subscript)):
                    read.stored_to = code(target)
        elif isinstance(parent, cst.AnnAssign) and parent.value is node and isinstance(parent.target, cst.Name):
            read.bound_to.append(parent.target.value)

    def visit_Call(self, node: cst.Call) -> None:
        if not self._stack:
            return
        fn = code(node.func)
        if fn == "getattr" and len(node.args) >= 3 and m.matches(node.args[1].value, m.SimpleString()):
            ch = chain_of(node.args[0].value)
            if ch is not None:
                attr = node.args[1].value.evaluated_value
                self._record_read(node, ch[0], [*ch[1], attr], called=False, via_getattr=True)
        ctx = self._context(node)
        kws = {a.keyword.value: describe(a.value) for a in node.args if a.keyword is not None}
        self._stack[-1].calls.append(
            CallSite(fn, kws, sum(1 for a in node.args if a.keyword is None), self._line(node), ctx["conds"], ctx["blocks"],
                     [describe(a.value) for a in node.args if a.keyword is None and not a.star])
        )

    # -- writes and bindings
    def visit_Assign(self, node: cst.Assign) -> None:
        if not self._stack:
            return
        ctx = self._context(node)
        for t in node.targets:
            self._record_target(t.target, node.value, node, ctx)

    def visit_AnnAssign(self, node: cst.AnnAssign) -> None:
        if not self._stack:
            return
        ctx = self._context(node)
        if isinstance(node.target, cst.Name):
            self._stack[-1].bindings.append(
                Binding(node.target.value, describe(node.value), self._line(node), ctx["conds"], ctx["blocks"],
                        annotation=code(node.annotation.annotation), exits=ctx["exits"])
            )
        elif node.value is not None:
            self._record_target(node.target, node.value, node, ctx)

    def _record_target(self, target, value, stmt, ctx, index: int | None = None):
        facts = self._stack[-1]
        if isinstance(target, cst.Name):
            desc = describe(value)
            if index is not None:
                desc = {"kind": "item", "index": index, "of": describe(value)}
            facts.bindings.append(Binding(target.value, desc, self._line(stmt), ctx["conds"], ctx["blocks"], exits=ctx["exits"]))
        elif isinstance(target, cst.Attribute):
            ch = chain_of(target)
            if ch is not None:
                facts.writes.append(
                    AttrWrite(ch[0], ch[1], describe(value) if index is None else {"kind": "item", "index": index, "of": describe(value)},
                              self._line(stmt), self._statement_shape(stmt, ctx) or code(stmt), ctx["conds"], ctx["blocks"], ctx["exits"])
                )
        elif isinstance(target, (cst.Tuple, cst.List)):
            values = value.elements if isinstance(value, (cst.Tuple, cst.List)) and len(value.elements) == len(target.elements) else None
            for i, el in enumerate(target.elements):
                if values is not None:
                    self._record_target(el.value, values[i].value, stmt, ctx)
                else:
                    self._record_target(el.value, value, stmt, ctx, index=i)

    def visit_Return(self, node: cst.Return) -> None:
        if not self._stack:
            return
        ctx = self._context(node)
        self._stack[-1].returns.append(
            Return(describe(node.value), self._line(node), self._statement_shape(node, ctx), ctx["conds"], ctx["blocks"], ctx["exits"])
        )

    # -- names tested for None/truthiness (alias guards): one handler per node kind that tests
    def _note_tested(self, expr: cst.BaseExpression) -> None:
        if self._stack:
            self._stack[-1].none_tested.extend(_tested_names(expr))

    def visit_If(self, node: cst.If) -> None:
        self._note_tested(node.test)

    def visit_IfExp(self, node: cst.IfExp) -> None:
        self._note_tested(node.test)

    def visit_While(self, node: cst.While) -> None:
        self._note_tested(node.test)

    def visit_BooleanOperation(self, node: cst.BooleanOperation) -> None:
        self._note_tested(node.left)

    def visit_Assert(self, node: cst.Assert) -> None:
        self._note_tested(node.test)


# ------------------------------------------------------------ function selection


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

    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            add(node, None)
        elif isinstance(node, ast.ClassDef):
            for sub in node.body:
                if isinstance(sub, (ast.FunctionDef, ast.AsyncFunctionDef)):
                    add(sub, node.name)
    return spans


def facts_for_span(span: FunctionSpan) -> list[FunctionFacts]:
    """libcst over one function's source, positions shifted back to the file's lines."""
    # a method is parsed under a stand-in class header, so its indentation (and any
    # less-indented multi-line string inside it) stays as it is in the file
    text = f"class _Owner:\n{span.text}" if span.cls else span.text
    offset = span.start - 2 if span.cls else span.start - 1
    try:
        module = cst.parse_module(text)
    except cst.ParserSyntaxError:
        return []
    visitor = FunctionFactsVisitor(span.cls, offset)
    MetadataWrapper(module, unsafe_skip_copy=True).visit(visitor)
    return visitor.functions


def span_key(span: FunctionSpan) -> str:
    h = hashlib.sha1(f"{FACTS_VERSION}\0{span.cls}\0{span.start}\0".encode() + span.text.encode()).hexdigest()
    return h
