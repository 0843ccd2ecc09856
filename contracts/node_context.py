"""Where a node sits in its function: the conditions that hold there, its block path, its
statement, and the guards that establish a chain prefix is not None.

``ContextFinder`` walks the parent links (libcst's ParentNodeProvider) from a node up to its
function; the fact collectors in ``facts_visitors.py`` ask it for every record they make.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable, Iterable

import libcst as cst
import libcst.matchers as m
from libcst.metadata import ParentNodeProvider, PositionProvider

from spectrace.contracts.cst_values import chain_of, code
from spectrace.contracts.facts import Guard

_EXIT_STMTS = (cst.Return, cst.Raise, cst.Continue, cst.Break)
_CATCHES_ATTRIBUTE = {"AttributeError", "TypeError", "Exception", "BaseException"}


@dataclass
class Context:
    conds: list[tuple[str, bool]]  # enclosing conditions as text, outermost first (if a and b: a, b)
    cond_nodes: list[tuple[cst.BaseExpression, bool]]  # the same, as whole test nodes
    blocks: list[str]  # enclosing block ids, outermost first, for dominance
    statement: cst.CSTNode | None  # the enclosing simple statement, or the if/while whose test holds the node
    in_test: bool  # the node is (part of) a condition
    handlers: list[tuple[str, int]] = field(default_factory=list)  # enclosing try handlers that catch AttributeError
    exits_before: list[tuple[cst.BaseExpression, int]] = field(default_factory=list)  # earlier `if test: <exit>`
    asserts_before: list[tuple[cst.BaseExpression, int]] = field(default_factory=list)

    @property
    def exits(self) -> list[str]:
        return [code(t) for t, _ in self.exits_before]


# ------------------------------------------------------------- guard detection


def split_and(node: cst.BaseExpression) -> list[cst.BaseExpression]:
    if isinstance(node, cst.BooleanOperation) and isinstance(node.operator, cst.And):
        return split_and(node.left) + split_and(node.right)
    return [node]


def split_or(node: cst.BaseExpression) -> list[cst.BaseExpression]:
    if isinstance(node, cst.BooleanOperation) and isinstance(node.operator, cst.Or):
        return split_or(node.left) + split_or(node.right)
    return [node]


def _is_prefix(node: cst.BaseExpression, prefix: str) -> bool:
    ch = chain_of(node)
    return ch is not None and ".".join([ch[0], *ch[1]]) == prefix


def asserts_present(test: cst.BaseExpression, positive: bool, prefix: str) -> str | None:
    """Does ``test`` (taken as true when ``positive``, else as false) imply ``prefix`` is not None?

    Returns the guard kind or None.
    """
    if isinstance(test, cst.UnaryOperation) and isinstance(test.operator, cst.Not):
        return asserts_present(test.expression, not positive, prefix)
    parts = split_and(test) if positive else split_or(test)
    if len(parts) > 1:
        for p in parts:
            kind = asserts_present(p, positive, prefix)
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


def tested_names(test: cst.BaseExpression) -> Iterable[str]:
    """Names and chains a condition checks for None/truthiness (for alias guards)."""
    for p in split_and(test) + split_or(test):
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


def _handler_names(h: cst.ExceptHandler) -> set[str]:
    if h.type is None:
        return set()
    if isinstance(h.type, cst.Tuple):
        return {code(e.value).split(".")[-1] for e in h.type.elements}
    return {code(h.type).split(".")[-1]}


def _exits(block: cst.BaseSuite) -> bool:
    body = block.body if isinstance(block, cst.IndentedBlock) else [block]
    if not body:
        return False
    last = body[-1]
    if isinstance(last, (cst.SimpleStatementLine, cst.SimpleStatementSuite)):
        return any(isinstance(s, _EXIT_STMTS) for s in last.body)
    return False


def try_block(node: cst.Try | cst.TryStar, child: cst.CSTNode, line: Callable) -> str:
    """The block id of ``child`` (the body, a handler, ``else`` or ``finally``) of a try statement.

    An exception can leave the body at any statement, so nothing in the body dominates a handler:
    body and ``else`` are ``<line>t``, each handler ``<line>h<its line>``. Code after the statement
    follows the body (and ``else``) only when every handler exits: the body is then ``<line>T``,
    which dominates what comes after the statement (``blocks.dominates``). ``finally`` always runs:
    ``<line>y``, dominating what follows as well.
    """
    at = line(node)
    for h in node.handlers:
        if child is h:
            return f"{at}h{line(h)}"
    if node.finalbody is not None and child is node.finalbody:
        return f"{at}y"
    return f"{at}T" if all(_exits(h.body) for h in node.handlers) else f"{at}t"


# ------------------------------------------------------------------ the finder


class ContextFinder:
    """Positions and contexts of the nodes of one function snippet.

    ``get_metadata`` is a resolved visitor's (it must depend on PositionProvider and
    ParentNodeProvider); ``line_offset`` shifts the snippet's lines back to the file's.
    """

    def __init__(self, get_metadata: Callable, line_offset: int):
        self._meta = get_metadata
        self.line_offset = line_offset

    def line(self, node: cst.CSTNode) -> int:
        return self._meta(PositionProvider, node).start.line + self.line_offset

    def end_line(self, node: cst.CSTNode) -> int:
        return self._meta(PositionProvider, node).end.line + self.line_offset

    def col(self, node: cst.CSTNode) -> int:
        return self._meta(PositionProvider, node).start.column

    def parent(self, node: cst.CSTNode) -> cst.CSTNode | None:
        return self._meta(ParentNodeProvider, node, None)

    def of(self, node: cst.CSTNode) -> Context:
        """Walk up to the function: conditions, block ids, the statement, in-test flag, try handlers."""
        cond_nodes: list[tuple[cst.BaseExpression, bool]] = []
        case_conds: list[tuple[str, bool]] = []  # `case "v":` of `match x`: x == "v"
        blocks: list[str] = []
        statement: cst.CSTNode | None = None
        in_test = False
        handlers: list[tuple[str, int]] = []
        exits_before: list[tuple[cst.BaseExpression, int]] = []
        asserts_before: list[tuple[cst.BaseExpression, int]] = []
        child, cur = node, self.parent(node)
        while cur is not None and not isinstance(cur, cst.FunctionDef):
            if statement is None and isinstance(cur, cst.SimpleStatementLine):
                statement = cur
            if isinstance(cur, (cst.If, cst.While)):
                if child is cur.test:
                    in_test = True
                    if statement is None:
                        statement = cur
                elif child is cur.body:
                    cond_nodes.append((cur.test, True))
                    blocks.append(f"{self.line(cur)}b")
                else:  # orelse: Else or an elif If
                    cond_nodes.append((cur.test, False))
                    blocks.append(f"{self.line(cur)}e")
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
            elif isinstance(cur, (cst.Try, cst.TryStar)):
                blocks.append(try_block(cur, child, self.line))
                if child is cur.body:
                    for h in cur.handlers:
                        names = _handler_names(h)
                        if not names or names & _CATCHES_ATTRIBUTE:
                            handlers.append((f"except {', '.join(sorted(names)) or '(bare)'}", self.line(h)))
            elif isinstance(cur, cst.MatchCase) and child is cur.body:
                # one case's body runs only when its pattern matches: a block of its own
                match = self.parent(cur)
                blocks.append(f"{self.line(match)}c{self.line(cur)}")
                if isinstance(cur.pattern, cst.MatchValue) and cur.guard is None:
                    case_conds.append((f"{code(match.subject)} == {code(cur.pattern.value)}", True))
                elif cur.guard is not None:
                    cond_nodes.append((cur.guard, True))
            elif isinstance(cur, cst.For) and child is cur.body:
                blocks.append(f"{self.line(cur)}f")  # a with-body always runs: no block of its own
            elif isinstance(cur, cst.For) and child is cur.orelse:
                blocks.append(f"{self.line(cur)}F")  # skipped when the loop breaks
            if isinstance(cur, (cst.IndentedBlock, cst.Module)):
                # statements before `child` in this block: early exits and asserts
                for stmt in cur.body:
                    if stmt is child:
                        break
                    if isinstance(stmt, cst.If) and _exits(stmt.body) and not stmt.orelse:
                        exits_before.append((stmt.test, self.line(stmt)))
                    if isinstance(stmt, cst.SimpleStatementLine):
                        for small in stmt.body:
                            if isinstance(small, cst.Assert):
                                asserts_before.append((small.test, self.line(stmt)))
            child, cur = cur, self.parent(cur)
        cond_nodes.reverse()
        blocks.reverse()
        conds = []
        for t, pos in cond_nodes:  # `if a and b` contributes a, b; `else` of `a or b`: not a, not b
            parts = split_and(t) if pos else split_or(t)
            conds.extend((code(p), pos) for p in parts)
        conds.extend(reversed(case_conds))
        return Context(conds=conds, cond_nodes=cond_nodes, blocks=blocks, statement=statement, in_test=in_test,
                       handlers=handlers, exits_before=exits_before, asserts_before=asserts_before)

    def _is_test_position(self, node: cst.CSTNode) -> bool:
        parent = self.parent(node)
        while isinstance(parent, (cst.BooleanOperation, cst.UnaryOperation)):
            node, parent = parent, self.parent(parent)
        return isinstance(parent, (cst.If, cst.While, cst.IfExp)) and getattr(parent, "test", None) is node

    def guards_for(self, prefix: str, ctx: Context) -> list[Guard]:
        guards: list[Guard] = []
        for test, positive in ctx.cond_nodes:
            kind = asserts_present(test, positive, prefix)
            if kind:
                guards.append(Guard(kind, code(test) if positive else f"not ({code(test)})", self.line(test)))
        for test, line in ctx.exits_before:
            if asserts_present(test, False, prefix):
                guards.append(Guard("early-exit", f"if {code(test)}: <exit>", line))
        for test, line in ctx.asserts_before:
            if asserts_present(test, True, prefix):
                guards.append(Guard("assert", f"assert {code(test)}", line))
        for text, line in ctx.handlers:
            guards.append(Guard("try-except", text, line))
        return guards

    @staticmethod
    def statement_shape(node: cst.CSTNode, ctx: Context) -> str:
        stmt = ctx.statement
        if stmt is None:
            return code(node) if isinstance(node, cst.BaseExpression) else ""
        if isinstance(stmt, cst.SimpleStatementLine):
            return "; ".join(code(s) for s in stmt.body)
        if isinstance(stmt, (cst.If, cst.While)):
            return f"{'if' if isinstance(stmt, cst.If) else 'while'} {code(stmt.test)}:"
        return code(stmt)
