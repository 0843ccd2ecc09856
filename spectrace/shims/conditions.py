"""Path conditions from the catalog (``path_condition``, ``[contract.runtime] when``), evaluated
over a whitelisted syntax tree rather than with ``eval``.

A catalog may come from any branch (``spectrace run --catalog``, the pytest plugin in CI), and
``eval`` with empty builtins is no sandbox: ``().__class__.__base__.__subclasses__()`` reaches
everything. A condition may use only what SGLang's branches need: the step's names, attributes
(no dunders), constants, ``not``/``and``/``or``, comparisons, and argument-less calls of SGLang's
predicate methods. Anything else is refused when the catalog is loaded, before a server starts.
"""

from __future__ import annotations

import ast
import operator
from dataclasses import dataclass
from typing import Any, Callable

# what `self`, `batch`, ... stand for on a step (checks.Shims._condition)
NAMES = frozenset({"self", "batch", "batch_result", "result", "model_worker_batch"})
# SGLang's predicate methods a condition may call, without arguments (ForwardMode,
# SpeculativeAlgorithm, GroupCoordinator): the catalog's branches test nothing else
METHODS = frozenset({
    "is_none", "is_eagle", "is_eagle3", "is_standalone", "is_ngram", "is_decode", "is_extend",
    "is_idle", "is_mixed", "is_target_verify", "is_draft_extend", "is_decode_or_idle",
    "is_extend_or_draft_extend_or_mixed", "is_cuda_graph", "is_dummy_first",
})
CONSTANTS = (type(None), bool, int, float, str)

_COMPARE: dict[type, Callable[[Any, Any], Any]] = {
    ast.Is: operator.is_, ast.IsNot: operator.is_not, ast.Eq: operator.eq, ast.NotEq: operator.ne,
    ast.Lt: operator.lt, ast.LtE: operator.le, ast.Gt: operator.gt, ast.GtE: operator.ge,
}


class ConditionRefused(ValueError):
    """A condition outside the whitelist (or not Python): the reason, for the catalog's error."""


@dataclass(frozen=True)
class Condition:
    text: str
    tree: ast.expr

    def evaluate(self, names: dict[str, Any]) -> Any:
        return _Evaluator(names).visit(self.tree)


def parse_condition(text: str) -> Condition:
    """The condition ``text`` checked against the whitelist; ConditionRefused says what is not allowed."""
    try:
        tree = ast.parse(text.strip(), mode="eval").body
    except SyntaxError as exc:
        raise ConditionRefused(f"not a Python expression ({exc.msg})") from exc
    _Whitelist().visit(tree)
    return Condition(text, tree)


class _Whitelist(ast.NodeVisitor):
    """One handler per node kind the shims evaluate; every other kind is refused."""

    def generic_visit(self, node: ast.AST) -> None:
        raise ConditionRefused(f"{type(node).__name__} is not allowed in a path condition")

    def visit_Name(self, node: ast.Name) -> None:
        if node.id not in NAMES:
            raise ConditionRefused(f"name '{node.id}' is none of {', '.join(sorted(NAMES))}")

    def visit_Attribute(self, node: ast.Attribute) -> None:
        if node.attr.startswith("__"):
            raise ConditionRefused(f"attribute '{node.attr}' is not allowed in a path condition")
        self.visit(node.value)

    def visit_Constant(self, node: ast.Constant) -> None:
        if not isinstance(node.value, CONSTANTS):
            raise ConditionRefused(f"constant {node.value!r} is not allowed in a path condition")

    def visit_UnaryOp(self, node: ast.UnaryOp) -> None:
        if not isinstance(node.op, ast.Not):
            raise ConditionRefused(f"operator {type(node.op).__name__} is not allowed in a path condition")
        self.visit(node.operand)

    def visit_BoolOp(self, node: ast.BoolOp) -> None:
        for value in node.values:
            self.visit(value)

    def visit_Compare(self, node: ast.Compare) -> None:
        for op in node.ops:
            if type(op) not in _COMPARE:
                raise ConditionRefused(f"comparison {type(op).__name__} is not allowed in a path condition")
        self.visit(node.left)
        for comparator in node.comparators:
            self.visit(comparator)

    def visit_Call(self, node: ast.Call) -> None:
        func = node.func
        if not isinstance(func, ast.Attribute) or func.attr not in METHODS:
            raise ConditionRefused("only SGLang's predicate methods may be called in a path condition "
                                   "(such as batch.spec_algorithm.is_none(); conditions.METHODS lists them)")
        if node.args or node.keywords:
            raise ConditionRefused(f"{func.attr}() takes no arguments in a path condition")
        self.visit(func.value)


class _Evaluator(ast.NodeVisitor):
    """Python's own semantics for the whitelisted kinds (short-circuit ``and``/``or`` included)."""

    def __init__(self, names: dict[str, Any]):
        self.names = names

    def generic_visit(self, node: ast.AST) -> Any:  # parse_condition let nothing else through
        raise ConditionRefused(f"{type(node).__name__} is not allowed in a path condition")

    def visit_Name(self, node: ast.Name) -> Any:
        return self.names[node.id]

    def visit_Attribute(self, node: ast.Attribute) -> Any:
        return getattr(self.visit(node.value), node.attr)

    def visit_Constant(self, node: ast.Constant) -> Any:
        return node.value

    def visit_UnaryOp(self, node: ast.UnaryOp) -> Any:
        return not self.visit(node.operand)

    def visit_BoolOp(self, node: ast.BoolOp) -> Any:
        is_and = isinstance(node.op, ast.And)
        value = None
        for operand in node.values:
            value = self.visit(operand)
            if bool(value) != is_and:
                return value
        return value

    def visit_Compare(self, node: ast.Compare) -> Any:
        left = self.visit(node.left)
        for op, comparator in zip(node.ops, node.comparators):
            right = self.visit(comparator)
            if not _COMPARE[type(op)](left, right):
                return False
            left = right
        return True

    def visit_Call(self, node: ast.Call) -> Any:
        return self.visit(node.func)()
