"""The libcst visitors that collect one function snippet's facts, one job each, run in one
batched pass (``facts_for_span``).

``FunctionScope`` opens a ``FunctionFacts`` per (nested) function; the collectors append to the
innermost one, each its own lists:

- ``ChainReads``: attribute chains read (``root.a.b``, ``getattr(root, "a", d)``), with guards;
- ``CallSites``: calls with their arguments;
- ``Assignments``: name bindings and attribute writes;
- ``Returns``: return statements;
- ``TestedNames``: names and chains tested for None/truthiness (alias guards).
"""

from __future__ import annotations

import libcst as cst
import libcst.matchers as m
from libcst.metadata import MetadataWrapper, ParentNodeProvider, PositionProvider

from spectrace.contracts.facts import (
    AttrWrite,
    Binding,
    CallSite,
    ChainRead,
    FunctionFacts,
    FunctionSpan,
    Guard,
    Return,
)
from spectrace.contracts.cst_values import chain_of, code, describe
from spectrace.contracts.node_context import Context, ContextFinder, tested_names
from spectrace.errors import SpectraceError


class FunctionScope(cst.BatchableCSTVisitor):
    """The function being visited: a ``FunctionFacts`` per def, nested ones as ``outer.<locals>.inner``."""

    METADATA_DEPENDENCIES = (PositionProvider, ParentNodeProvider)

    def __init__(self, cls: str | None, line_offset: int):
        super().__init__()
        self.cls = cls
        self.where = ContextFinder(self.get_metadata, line_offset)
        self.functions: list[FunctionFacts] = []
        self._stack: list[FunctionFacts] = []

    @property
    def current(self) -> FunctionFacts | None:
        return self._stack[-1] if self._stack else None

    def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
        name = node.name.value
        if self._stack:
            qual = f"{self._stack[-1].qualname}.<locals>.{name}"
            cls = self._stack[-1].cls
        else:
            qual = f"{self.cls}.{name}" if self.cls else name
            cls = self.cls
        every = [*node.params.posonly_params, *node.params.params, *node.params.kwonly_params]
        params = [(p.name.value, code(p.annotation.annotation) if p.annotation else None) for p in every]
        facts = FunctionFacts(
            qualname=qual,
            cls=cls,
            name=name,
            line=self.where.line(node),
            end_line=self.where.end_line(node),
            params=params,
            returns_annotation=code(node.returns.annotation) if node.returns else None,
            decorators=[code(d.decorator) for d in node.decorators],
            defaults={p.name.value: describe(p.default) for p in every if p.default is not None},
        )
        self._stack.append(facts)
        self.functions.append(facts)

    def leave_FunctionDef(self, original_node: cst.FunctionDef) -> None:
        self._stack.pop()


class _Collector(cst.BatchableCSTVisitor):
    def __init__(self, scope: FunctionScope):
        super().__init__()
        self.scope = scope
        self.where = scope.where


class ChainReads(_Collector):
    def visit_Attribute(self, node: cst.Attribute) -> None:
        if self.scope.current is None:
            return
        parent = self.where.parent(node)
        if isinstance(parent, cst.Attribute) and parent.value is node:
            return  # only the outermost attribute of a chain is a read record
        ch = chain_of(node)
        if ch is None or self._is_store_target(node):
            return  # stores are Assignments' job
        self._record(node, ch[0], ch[1], called=isinstance(parent, cst.Call) and parent.func is node)

    def visit_Call(self, node: cst.Call) -> None:
        if self.scope.current is None:
            return
        # getattr(x, "name", default) reads x.name where it exists; getattr(x, "name") is x.name
        if code(node.func) == "getattr" and len(node.args) in (2, 3) and m.matches(node.args[1].value, m.SimpleString()):
            ch = chain_of(node.args[0].value)
            if ch is not None:
                attr = node.args[1].value.evaluated_value
                self._record(node, ch[0], [*ch[1], attr], called=False, via_getattr=len(node.args) == 3)

    def _is_store_target(self, node: cst.CSTNode) -> bool:
        parent = self.where.parent(node)
        if isinstance(parent, (cst.AssignTarget, cst.AnnAssign)) and parent.target is node:
            return True
        if isinstance(parent, cst.Element):
            grand = self.where.parent(parent)
            if isinstance(grand, (cst.Tuple, cst.List)):
                return self._is_store_target(grand)
        return False

    def _record(self, node: cst.CSTNode, root: str, attrs: list[str], called: bool, via_getattr: bool = False):
        ctx = self.where.of(node)
        read = ChainRead(
            root=root,
            attrs=attrs,
            line=self.where.line(node),
            col=self.where.col(node),
            shape=self.where.statement_shape(node, ctx),
            conds=ctx.conds,
            blocks=ctx.blocks,
            exits=ctx.exits,
            guards1=self.where.guards_for(root, ctx),
            guards2=self.where.guards_for(f"{root}.{attrs[0]}", ctx) if attrs else [],
            in_test=ctx.in_test,
            called=called,
            via_getattr=via_getattr,
        )
        if via_getattr:
            read.guards2.append(Guard("getattr-default", read.shape, read.line))
        self._bind_targets(node, read)
        self.scope.current.reads.append(read)

    def _bind_targets(self, node: cst.CSTNode, read: ChainRead) -> None:
        """`v = root.a`, `a, b = (root.a, root.b)`, `obj.x = root.a`: where the value goes."""
        parent = self.where.parent(node)
        element_index = None
        if isinstance(parent, cst.Element):
            tup = self.where.parent(parent)
            if isinstance(tup, cst.Tuple):
                element_index = list(tup.elements).index(parent)
                node, parent = tup, self.where.parent(tup)
        if isinstance(parent, cst.Assign) and parent.value is node:
            for t in parent.targets:
                target = t.target
                if element_index is not None and isinstance(target, (cst.Tuple, cst.List)):
                    if element_index >= len(target.elements):
                        continue
                    target = target.elements[element_index].value
                if isinstance(target, cst.Name):
                    read.bound_to.append(target.value)
                elif isinstance(target, (cst.Attribute, cst.Subscript)):
                    read.stored_to = code(target)
        elif isinstance(parent, cst.AnnAssign) and parent.value is node and isinstance(parent.target, cst.Name):
            read.bound_to.append(parent.target.value)


class CallSites(_Collector):
    def visit_Call(self, node: cst.Call) -> None:
        if self.scope.current is None:
            return
        ctx = self.where.of(node)
        kws = {a.keyword.value: describe(a.value) for a in node.args if a.keyword is not None}
        self.scope.current.calls.append(
            CallSite(code(node.func), kws, sum(1 for a in node.args if a.keyword is None), self.where.line(node),
                     ctx.conds, ctx.blocks, [describe(a.value) for a in node.args if a.keyword is None and not a.star])
        )


class Assignments(_Collector):
    def visit_NamedExpr(self, node: cst.NamedExpr) -> None:
        """``(name := value)``: a binding where the expression is evaluated."""
        if self.scope.current is None or not isinstance(node.target, cst.Name):
            return
        ctx = self.where.of(node)
        self.scope.current.bindings.append(
            Binding(node.target.value, describe(node.value), self.where.line(node), ctx.conds, ctx.blocks, exits=ctx.exits))

    def visit_Assign(self, node: cst.Assign) -> None:
        if self.scope.current is None:
            return
        ctx = self.where.of(node)
        for t in node.targets:
            self._record_target(t.target, node.value, node, ctx)

    def visit_AnnAssign(self, node: cst.AnnAssign) -> None:
        if self.scope.current is None:
            return
        ctx = self.where.of(node)
        if isinstance(node.target, cst.Name):
            self.scope.current.bindings.append(
                Binding(node.target.value, describe(node.value), self.where.line(node), ctx.conds, ctx.blocks,
                        annotation=code(node.annotation.annotation), exits=ctx.exits)
            )
        elif node.value is not None:
            self._record_target(node.target, node.value, node, ctx)

    def visit_Call(self, node: cst.Call) -> None:
        """``setattr(x.y, "name", value)``, and ``setattr(x, name, value)`` in a loop over a literal
        tuple or list of names: a write of each name, as ``x.y.name = value`` would be."""
        if self.scope.current is None or code(node.func) != "setattr" or len(node.args) != 3:
            return
        ch = chain_of(node.args[0].value)
        if ch is None:
            return
        ctx = self.where.of(node)
        shape = self.where.statement_shape(node, ctx) or code(node)
        names = self._literal_names(node, node.args[1].value)
        for name in names:
            self.scope.current.writes.append(
                AttrWrite(ch[0], [*ch[1], name], describe(node.args[2].value), self.where.line(node), shape,
                          ctx.conds, ctx.blocks, ctx.exits))
        if not names:
            self.scope.current.computed_writes.append(
                AttrWrite(ch[0], list(ch[1]), describe(node.args[2].value), self.where.line(node), shape,
                          ctx.conds, ctx.blocks, ctx.exits))

    def _literal_names(self, node: cst.CSTNode, name: cst.BaseExpression) -> list[str]:
        if isinstance(name, cst.SimpleString):
            return [name.evaluated_value]
        if not isinstance(name, cst.Name):
            return []
        cur = self.where.parent(node)
        while cur is not None and not isinstance(cur, cst.FunctionDef):
            if isinstance(cur, cst.For) and isinstance(cur.target, cst.Name) and cur.target.value == name.value:
                items = cur.iter.elements if isinstance(cur.iter, (cst.Tuple, cst.List)) else None
                if items and all(isinstance(e.value, cst.SimpleString) for e in items):
                    return [e.value.evaluated_value for e in items]
                return []
            cur = self.where.parent(cur)
        return []

    def _record_target(self, target, value, stmt, ctx: Context, index: int | None = None):
        facts = self.scope.current
        desc = describe(value) if index is None else {"kind": "item", "index": index, "of": describe(value)}
        if isinstance(target, cst.Name):
            facts.bindings.append(Binding(target.value, desc, self.where.line(stmt), ctx.conds, ctx.blocks, exits=ctx.exits))
        elif isinstance(target, cst.Attribute):
            ch = chain_of(target)
            if ch is not None:
                facts.writes.append(
                    AttrWrite(ch[0], ch[1], desc, self.where.line(stmt), self.where.statement_shape(stmt, ctx) or code(stmt),
                              ctx.conds, ctx.blocks, ctx.exits)
                )
        elif isinstance(target, (cst.Tuple, cst.List)):
            values = value.elements if isinstance(value, (cst.Tuple, cst.List)) and len(value.elements) == len(target.elements) else None
            for i, el in enumerate(target.elements):
                if values is not None:
                    self._record_target(el.value, values[i].value, stmt, ctx)
                else:
                    self._record_target(el.value, value, stmt, ctx, index=i)


class Returns(_Collector):
    def visit_Return(self, node: cst.Return) -> None:
        if self.scope.current is None:
            return
        ctx = self.where.of(node)
        self.scope.current.returns.append(
            Return(describe(node.value), self.where.line(node), self.where.statement_shape(node, ctx), ctx.conds,
                   ctx.blocks, ctx.exits)
        )


class TestedNames(_Collector):
    def _note(self, expr: cst.BaseExpression) -> None:
        if self.scope.current is not None:
            self.scope.current.none_tested.extend(tested_names(expr))

    def visit_If(self, node: cst.If) -> None:
        self._note(node.test)

    def visit_IfExp(self, node: cst.IfExp) -> None:
        self._note(node.test)

    def visit_While(self, node: cst.While) -> None:
        self._note(node.test)

    def visit_BooleanOperation(self, node: cst.BooleanOperation) -> None:
        self._note(node.left)

    def visit_Assert(self, node: cst.Assert) -> None:
        self._note(node.test)


def facts_for_span(span: FunctionSpan) -> list[FunctionFacts]:
    """libcst over one function's source, positions shifted back to the file's lines."""
    # a method is parsed under a stand-in class header, so its indentation (and any
    # less-indented multi-line string inside it) stays as it is in the file
    text = f"class _Owner:\n{span.text}" if span.cls else span.text
    offset = span.start - 2 if span.cls else span.start - 1
    try:
        module = cst.parse_module(text)
    except cst.ParserSyntaxError as exc:
        # ast accepted the file: libcst lags behind a newer syntax; missing facts would hide contracts
        name = f"{span.cls}.{span.name}" if span.cls else span.name
        raise SpectraceError(f"libcst cannot parse {name} (line {span.start}): {exc.message}") from exc
    scope = FunctionScope(span.cls, offset)
    collectors = [ChainReads(scope), CallSites(scope), Assignments(scope), Returns(scope), TestedNames(scope)]
    MetadataWrapper(module, unsafe_skip_copy=True).visit_batched([scope, *collectors])
    return scope.functions
