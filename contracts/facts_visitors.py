"""The collectors of one function snippet's facts, one job each, run in one pass over its stdlib
``ast`` in source order (``facts_for_span``).

``FunctionScope`` opens a ``FunctionFacts`` per (nested) function; the collectors append to the
innermost one, each its own lists:

- ``ChainReads``: attribute chains read (``root.a.b``, ``getattr(root, "a", d)``), with guards;
- ``CallSites``: calls with their arguments;
- ``Assignments``: name bindings and attribute writes;
- ``Returns``: return statements;
- ``TestedNames``: names and chains tested for None/truthiness (alias guards).
"""

from __future__ import annotations

import ast
from collections.abc import Iterator

from spectrace.contracts.expr_values import call_args, chain_of, describe
from spectrace.contracts.kinds import GuardKind
from spectrace.contracts.values import IfExp, ItemOf, NoneValue, Opaque
from spectrace.contracts.facts import (
    Assertion,
    AttrWrite,
    Binding,
    CallSite,
    ChainRead,
    FunctionFacts,
    FunctionSpan,
    Guard,
    Return,
    Split,
    WithManager,
)
from spectrace.contracts.aliases import display_items
from spectrace.contracts.node_context import Context, ContextFinder, filtered_display, truthy_items, exits, none_exit, suppresses, tested_names
from spectrace.contracts.snippet import FUNCTIONS, DottedName, Snippet
from spectrace.errors import SpectraceError


class FunctionScope:
    """The function being visited: a ``FunctionFacts`` per def, nested ones as ``outer.<locals>.inner``."""

    def __init__(self, src: Snippet, cls: str | None):
        self.src = src
        self.cls = cls
        self.where = ContextFinder(src)
        self.functions: list[FunctionFacts] = []
        self._stack: list[FunctionFacts] = []

    @property
    def current(self) -> FunctionFacts | None:
        return self._stack[-1] if self._stack else None

    def visit_FunctionDef(self, node: ast.FunctionDef | ast.AsyncFunctionDef) -> None:
        src = self.src
        name = node.name
        if self._stack:
            qual = f"{self._stack[-1].qualname}.<locals>.{name}"
            cls = self._stack[-1].cls
        else:
            qual = f"{self.cls}.{name}" if self.cls else name
            cls = self.cls
        a = node.args
        params = [(p.arg, src.code(p.annotation) if p.annotation else None) for p in [*a.posonlyargs, *a.args, *a.kwonlyargs]]
        # ast aligns positional defaults with the last positional parameters, keyword-only ones one to one
        positional = [*a.posonlyargs, *a.args]
        with_defaults = [*zip(positional[len(positional) - len(a.defaults):], a.defaults), *zip(a.kwonlyargs, a.kw_defaults)]
        facts = FunctionFacts(
            qualname=qual,
            cls=cls,
            name=name,
            line=src.line(node),
            end_line=src.end_line(node),
            params=params,
            returns_annotation=src.code(node.returns) if node.returns else None,
            decorators=[src.code(d) for d in node.decorator_list],
            defaults={p.arg: describe(src, d) for p, d in with_defaults if d is not None},
            is_async=isinstance(node, ast.AsyncFunctionDef),
        )
        self._stack.append(facts)
        self.functions.append(facts)

    visit_AsyncFunctionDef = visit_FunctionDef

    def leave_FunctionDef(self, node: ast.FunctionDef | ast.AsyncFunctionDef) -> None:
        self._stack.pop()

    def visit_Nonlocal(self, node: ast.Nonlocal) -> None:
        for outer in self._stack[:-1]:
            outer.rebound_inside.extend(node.names)

    leave_AsyncFunctionDef = leave_FunctionDef


class _Collector:
    def __init__(self, scope: FunctionScope):
        self.scope = scope
        self.src = scope.src
        self.where = scope.where

    def _item_chain(self, node: ast.AST) -> tuple[str, list[str]] | None:
        """``held["k"].a.b`` (``held.get("k").a.b``, ``items[0].a.b``) of a local container's item: a
        chain rooted at the item as written, which the display or store giving it binds (``Assignments``)."""
        got = self.where.item_chain(node)
        if got is None:
            return None
        item, attrs = got
        if item.unsure:
            self.scope.current.unsure_roots[item.spelled] = item.unsure
        return item.spelled, attrs


def _instance_dict_of(node: ast.AST) -> tuple[str, list[str]] | None:
    """The chain whose attributes ``vars(chain)`` or ``chain.__dict__`` maps by name."""
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "vars" \
            and len(node.args) == 1 and not node.keywords:
        return chain_of(node.args[0])
    if isinstance(node, ast.Attribute) and node.attr == "__dict__":
        return chain_of(node.value)
    return None


class ChainReads(_Collector):
    def visit_Attribute(self, node: ast.Attribute | DottedName) -> None:
        if self.scope.current is None:
            return
        src = self.src
        parent = src.parent(node)
        if isinstance(parent, ast.Attribute) and src.field(node) == "value":
            return  # only the outermost attribute of a chain is a read record
        ch = chain_of(node) or self._item_chain(node)
        if ch is None or self._is_store_target(node) or isinstance(getattr(node, "ctx", None), ast.Del):
            return  # stores and `del` are Assignments' job
        self._record(node, ch[0], ch[1], called=isinstance(parent, ast.Call) and src.field(node) == "func")

    visit_DottedName = visit_Attribute

    def visit_Call(self, node: ast.Call) -> None:
        if self.scope.current is None:
            return
        # getattr(x, "name", default) reads x.name where it exists; getattr(x, "name") is x.name
        src = self.src
        args = call_args(node)
        if src.code(node.func) == "getattr" and len(args) in (2, 3) and src.is_simple_string(args[1].value):
            ch = chain_of(args[0].value)
            if ch is not None:
                self._record(node, ch[0], [*ch[1], args[1].value.value], called=False, via_getattr=len(args) == 3)
            return
        # vars(x).get("name"[, default]) and x.__dict__.get(...) are getattr(x, "name", default)
        func = node.func
        if isinstance(func, ast.Attribute) and func.attr == "get" and len(args) in (1, 2) and src.is_simple_string(args[0].value):
            ch = _instance_dict_of(func.value)
            if ch is not None:
                self._record(node, ch[0], [*ch[1], args[0].value.value], called=False, via_getattr=True)
            return
        # operator.attrgetter("a.b", ...)(x) reads x.a.b (and each other path)
        if isinstance(func, ast.Call) and src.code(func.func).split(".")[-1] == "attrgetter" and len(args) == 1 \
                and func.args and all(src.is_simple_string(a) for a in func.args):
            ch = chain_of(args[0].value)
            if ch is not None:
                for path in func.args:
                    self._record(node, ch[0], [*ch[1], *path.value.split(".")], called=False)

    def visit_Subscript(self, node: ast.Subscript) -> None:
        # vars(x)["name"] and x.__dict__["name"] read x.name
        if self.scope.current is None or not self.src.is_simple_string(node.slice):
            return
        ch = _instance_dict_of(node.value)
        if ch is not None and not isinstance(node.ctx, (ast.Store, ast.Del)):
            self._record(node, ch[0], [*ch[1], node.slice.value], called=False)

    def visit_MatchClass(self, node: ast.MatchClass) -> None:
        """``match result: case Result(draft=d):`` reads ``result.draft`` and binds ``d`` to it,
        as ``d = result.draft`` would; the case runs for a Result only, so ``result`` is no None
        there (a pattern never raises on None: it does not match)."""
        case = self.src.parent(node)
        if isinstance(case, ast.MatchAs):
            case = self.src.parent(case)
        if self.scope.current is None or not isinstance(case, ast.match_case):
            return
        subject = chain_of(self.src.parent(case).subject)
        if subject is None:
            return
        root, attrs = subject
        for attr, pattern in zip(node.kwd_attrs, node.kwd_patterns):
            if not (isinstance(pattern, ast.MatchAs) and pattern.name):
                continue
            read = self._record(node, root, [*attrs, attr], called=False)
            if len(read.attrs) > 1:  # the subject matched: the chain up to it is set
                read.guards2.append(Guard(GuardKind.ISINSTANCE, f"case {self.src.code(node.cls)}(...)", read.line))
            read.bound_to.append(pattern.name)

    def _is_store_target(self, node: ast.AST) -> bool:
        src = self.src
        parent, where = src.parent(node), src.field(node)
        if (isinstance(parent, ast.Assign) and where == "targets") or (isinstance(parent, ast.AnnAssign) and where == "target"):
            return True
        if isinstance(parent, (ast.Tuple, ast.List)) and where == "elts":
            return self._is_store_target(parent)
        return False

    def _record(self, node: ast.AST, root: str, attrs: list[str], called: bool, via_getattr: bool = False):
        ctx = self.where.of(node)
        read = ChainRead(
            root=root,
            attrs=attrs,
            line=self.src.line(node),
            col=self.src.col(node),
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
        read.operand = _is_operand(self.src, node)
        if via_getattr:
            read.guards2.append(Guard(GuardKind.GETATTR_DEFAULT, read.shape, read.line))
        self._bind_targets(node, read)
        self.scope.current.reads.append(read)
        kept = f"{root}.{attrs[0]}" if len(attrs) > 1 and "." not in root else None
        if kept is not None and kept in self.where.kept_attributes(node):
            # `self.last.draft` after `self.last = result`: a read through what the assignment binds
            self._record(node, kept, attrs[1:], called, via_getattr)
        return read

    def _bind_targets(self, node: ast.AST, read: ChainRead) -> None:
        """`v = root.a`, `a, b = (root.a, root.b)`, `obj.x = root.a`: where the value goes."""
        src = self.src
        parent = src.parent(node)
        element_index = None
        if _is_cast_of(src, parent, node):
            node, parent = parent, src.parent(parent)  # `v = typing.cast(T, root.a)`: v is root.a
        if isinstance(parent, ast.BoolOp) and isinstance(parent.op, ast.Or) and _may_be_none_after(parent, node):
            node, parent = parent, src.parent(parent)  # `v = root.a or other`: v is root.a's None when other is None
        elif isinstance(parent, ast.IfExp) and src.field(node) in ("body", "orelse"):
            node, parent = parent, src.parent(parent)  # `v = root.a if c else b`: v is root.a where c holds
        if isinstance(parent, (ast.Tuple, ast.List)) and src.field(node) == "elts":
            loop, iter_ = src.parent(parent), parent
            if isinstance(loop, ast.Call) and filtered_display(loop) is parent:  # `filter(None, (root.a,))`
                loop, iter_ = src.parent(loop), loop
            if isinstance(loop, (ast.For, ast.AsyncFor, ast.comprehension)) and src.field(iter_) == "iter":
                if isinstance(loop.target, ast.Name):  # `for v in (root.a, root.b):` binds v to each
                    read.bound_to.append(loop.target.id)
                    if iter_ is not parent and not truthy_items(iter_):  # the items a predicate lets through
                        self.scope.current.unsure_roots[loop.target.id] = (
                            f"`{src.code(iter_)[:80]}` gives {loop.target.id} only the items "
                            f"`{src.code(iter_.args[0])[:60]}` is true of, which is not followed")
                return
        if isinstance(parent, ast.Tuple) and src.field(node) == "elts":
            element_index = parent.elts.index(node)
            node, parent = parent, src.parent(parent)
        if isinstance(parent, ast.Assign) and src.field(node) == "value":
            for target in parent.targets:
                if element_index is not None and isinstance(target, (ast.Tuple, ast.List)):
                    if element_index >= len(target.elts):
                        continue
                    target = _element(target.elts[element_index])
                if isinstance(target, ast.Name):
                    read.bound_to.append(target.id)
                elif isinstance(target, (ast.Attribute, ast.Subscript)):
                    read.stored_to = src.code(target)
        elif isinstance(parent, ast.AnnAssign) and src.field(node) == "value" and isinstance(parent.target, ast.Name):
            read.bound_to.append(parent.target.id)


_ORDER = (ast.Lt, ast.LtE, ast.Gt, ast.GtE)
_NEEDS_A_VALUE = {"len", "sum", "iter", "list", "tuple", "sorted", "max", "min", "enumerate", "zip"}


def _is_operand(src: Snippet, node: ast.expr) -> bool:
    """Is the value of ``node`` used in a way None does not support: subscripted, iterated, an
    operand of arithmetic or of an order comparison, or the argument of ``len``/``sum``/...?"""
    parent, where = src.parent(node), src.field(node)
    if isinstance(parent, ast.Subscript):
        return where == "value"
    if isinstance(parent, (ast.BinOp, ast.AugAssign)):
        return True
    if isinstance(parent, ast.UnaryOp):
        return not isinstance(parent.op, ast.Not)
    if isinstance(parent, ast.Compare):
        return any(isinstance(op, _ORDER) for op in parent.ops)
    if isinstance(parent, (ast.For, ast.AsyncFor, ast.comprehension)):
        return where == "iter"
    if isinstance(parent, ast.Starred):
        return True
    if isinstance(parent, ast.Call) and where == "args":
        if parent.args and parent.args[0] is node and _reaches_attributes(src, parent):
            return True
        return isinstance(parent.func, ast.Name) and parent.func.id in _NEEDS_A_VALUE
    return False


# calls that get, set or delete an attribute of their first argument, or read its __dict__: None has none
_ATTRIBUTE_CALLS = {"setattr", "delattr", "object.__setattr__", "object.__delattr__", "vars"}


def _reaches_attributes(src: Snippet, call: ast.Call) -> bool:
    """Does ``call`` reach into an attribute of its first argument (``setattr(v, "x", 1)``,
    ``getattr(v, "x")`` without a default), which raises on None?"""
    func = src.code(call.func)
    return func in _ATTRIBUTE_CALLS or (func == "getattr" and len(call.args) == 2 and not call.keywords)


def _may_be_none_after(op: ast.BoolOp, node: ast.expr) -> bool:
    """In ``a or b or c``, whether the value can be None where ``node`` is: ``node`` is the last
    operand, or the last one is a name or attribute that may itself be None (a literal, a display
    or a call is taken as a value)."""
    last = op.values[-1]
    return last is node or isinstance(last, (ast.Name, ast.Attribute))


def _is_cast_of(src: Snippet, call: ast.AST, node: ast.expr) -> bool:
    """Is ``call`` ``cast(T, node)`` (``typing.cast``), which returns ``node`` as it is?"""
    return isinstance(call, ast.Call) and len(call.args) == 2 and call.args[1] is node and not call.keywords \
        and src.code(call.func) in ("cast", "typing.cast", "typing_extensions.cast")


def _element(node: ast.expr) -> ast.expr:
    """An element of a tuple or list as written, without its star."""
    return node.value if isinstance(node, ast.Starred) else node


class CallSites(_Collector):
    def visit_Call(self, node: ast.Call) -> None:
        if self.scope.current is None:
            return
        src = self.src
        if _modelled_dict_use(src, node):
            return  # `vars(x).update(...)`, `vars(x)["f"]`: what it does to x is in the facts already
        ctx = self.where.of(node)
        func, args = node.func, call_args(node)
        if _partial_applied(src, func):
            # `functools.partial(f, a, k=v)(b)` is the call `f(a, b, k=v)` (its own keywords after the partial's)
            inner = call_args(func)
            func, args = inner[0].value, [*inner[1:], *args]
        kws = {a.keyword: describe(src, a.value) for a in args if a.keyword is not None}
        spread = [a.star + a.value.id for a in args if a.star and isinstance(a.value, ast.Name)]
        spread += [a.star + "?" for a in args if a.star and not isinstance(a.value, ast.Name)]
        item = self._item_chain(func) if chain_of(func) is None else None  # `held["r"].m()`: a method of the item
        self.scope.current.calls.append(
            CallSite(".".join([item[0], *item[1]]) if item else src.code(func), kws, sum(1 for a in args if a.keyword is None), src.line(node),
                     ctx.conds, ctx.blocks, [describe(src, a.value) for a in args if a.keyword is None and not a.star],
                     spread, ctx.exits)
        )
        mapped = _mapped(node)
        if mapped is not None and not isinstance(mapped[0], ast.Lambda):
            # `map(self._lens, [a, b])` calls `self._lens(a)` and `self._lens(b)` (a lambda's
            # parameters are bindings: Assignments)
            fn, calls = mapped
            for items in calls:
                self.scope.current.calls.append(
                    CallSite(src.code(fn), {}, len(items), src.line(node), ctx.conds, ctx.blocks,
                             [describe(src, i) for i in items], [], ctx.exits))


def _mapped(node: ast.Call) -> tuple[ast.expr, list[list[ast.expr]]] | None:
    """``map(fn, [a, b], (c, d))`` over displays without a starred item: ``fn`` and the arguments
    of each call of it, ``[[a, c], [b, d]]`` (as many as the shortest display has items)."""
    if not (isinstance(node.func, ast.Name) and node.func.id == "map" and len(node.args) >= 2 and not node.keywords):
        return None
    fn, *displays = node.args
    if isinstance(fn, ast.Starred) or not all(isinstance(d, (ast.List, ast.Tuple)) and
                                              not any(isinstance(e, ast.Starred) for e in d.elts) for d in displays):
        return None
    return fn, [list(items) for items in zip(*(d.elts for d in displays))]


def _partial_applied(src: Snippet, func: ast.expr) -> bool:
    """Is the called expression ``functools.partial(f, ...)`` of a function spelled by name or
    chain, called where it is made?"""
    if not (isinstance(func, ast.Call) and src.code(func.func) in ("partial", "functools.partial")):
        return False
    args = call_args(func)
    return bool(args) and args[0].keyword is None and not args[0].star \
        and isinstance(args[0].value, (ast.Name, ast.Attribute)) and chain_of(args[0].value) is not None


class Assignments(_Collector):
    def _mapped_parameters(self, node: ast.Call) -> None:
        """``map(lambda r: ..., [a, b])`` binds ``r`` to ``a`` and to ``b`` where the call runs (the
        lambda's reads are the function's, as the body of any lambda in it)."""
        mapped = _mapped(node)
        if mapped is None or not isinstance(mapped[0], ast.Lambda):
            return
        fn, calls = mapped
        a = fn.args
        params = [*a.posonlyargs, *a.args]
        if a.vararg or a.kwonlyargs or a.kwarg or fn.args.defaults:
            return  # which parameter takes which item: not followed
        # a parameter named as a local of the function would rebind that local here: not followed
        counts = self.where.binding_counts(node)
        if any(counts.get(p.arg, 0) > 1 for p in params):
            return
        ctx = self.where.of(node)
        for items in calls:
            for p, item in zip(params, items):
                self.scope.current.bindings.append(Binding(p.arg, describe(self.src, item), self.src.line(node),
                                                           ctx.conds, ctx.blocks, exits=ctx.exits,
                                                           loop_exit=ctx.loop_exit))

    def visit_For(self, node: ast.For | ast.AsyncFor) -> None:
        """``for v in (a, b):`` over a display binds ``v`` to one of its items, each possible
        (the loop may break at any of them): ``a if <v is a> else b``."""
        shown = filtered_display(node.iter)  # (`filter(None, (a, b))`: the items that are true)
        items = shown.elts if isinstance(shown, (ast.Tuple, ast.List)) else []
        if self.scope.current is None or not isinstance(node.target, ast.Name) or not items \
                or any(isinstance(e, ast.Starred) for e in items):
            return
        src, name = self.src, node.target.id
        value = describe(src, items[-1])
        for item in reversed(items[:-1]):
            value = IfExp(f"{name} is {src.code(item)}", describe(src, item), value, src.code(node.iter))
        ctx = self.where.of(node)
        self.scope.current.bindings.append(Binding(name, value, src.line(node), ctx.conds, ctx.blocks,
                                                   exits=ctx.exits, loop_exit=ctx.loop_exit))

    visit_AsyncFor = visit_For

    def visit_NamedExpr(self, node: ast.NamedExpr) -> None:
        """``(name := value)``: a binding where the expression is evaluated."""
        if self.scope.current is None or not isinstance(node.target, ast.Name):
            return
        ctx = self.where.of(node)
        self.scope.current.bindings.append(
            Binding(node.target.id, describe(self.src, node.value), self.src.line(node), ctx.conds, ctx.blocks,
                    exits=ctx.exits, loop_exit=ctx.loop_exit))

    def visit_Assign(self, node: ast.Assign) -> None:
        if self.scope.current is None:
            return
        ctx = self.where.of(node)
        for t in node.targets:
            self._record_target(t, node.value, node, ctx)
        item = self.where.dict_item(node.value)
        if item is not None and item.unsure:  # `x = held["r"]`: x is as unsure as the item
            for t in node.targets:
                if isinstance(t, ast.Name):
                    self.scope.current.unsure_roots[t.id] = item.unsure
            self.scope.current.unsure_roots[item.spelled] = item.unsure
        # a local dict's display (`held = {"k": v}`) or store (`held["k"] = v`) binds each lookup of
        # the item, as written, to the value (dict_items)
        given: dict[tuple[str, str | int], ast.expr] = {}
        if len(node.targets) == 1 and isinstance(node.targets[0], ast.Name) \
                and (shown := display_items(self.src, node.value)) is not None:
            given = {(node.targets[0].id, k): v for k, v in shown}
        for t in node.targets:
            if isinstance(t, ast.Subscript) and isinstance(t.value, ast.Name) and self.src.is_simple_string(t.slice):
                given[(t.value.id, t.slice.value)] = node.value
        if given:
            items = self.where.dict_items_around(node).values()
            for text, name, key in sorted({(i.spelled, i.name, i.key) for i in items if (i.name, i.key) in given}):
                self.scope.current.bindings.append(Binding(text, describe(self.src, given[(name, key)]), self.src.line(node),
                                                           ctx.conds, ctx.blocks, exits=ctx.exits, loop_exit=ctx.loop_exit))

    def visit_AugAssign(self, node: ast.AugAssign) -> None:
        """``x += v`` binds x again, to what ``x.__iadd__(v)`` (or ``x + v``) gives: not followed."""
        if self.scope.current is None or not isinstance(node.target, ast.Name):
            return
        ctx = self.where.of(node)
        op = self.src.code(node)[len(node.target.id):].split("=", 1)[0].strip()
        text = f"{node.target.id} {op} {self.src.code(node.value)}"[:200]
        self.scope.current.bindings.append(Binding(node.target.id, Opaque(text), self.src.line(node), ctx.conds,
                                                   ctx.blocks, exits=ctx.exits, loop_exit=ctx.loop_exit))

    def visit_AnnAssign(self, node: ast.AnnAssign) -> None:
        if self.scope.current is None:
            return
        ctx = self.where.of(node)
        if isinstance(node.target, ast.Name):
            self.scope.current.bindings.append(
                Binding(node.target.id, describe(self.src, node.value), self.src.line(node), ctx.conds, ctx.blocks,
                        annotation=self.src.code(node.annotation), exits=ctx.exits,
                        loop_exit=ctx.loop_exit)
            )
        elif node.value is not None:
            self._record_target(node.target, node.value, node, ctx)

    def visit_Delete(self, node: ast.Delete) -> None:
        """``del x.f``: the attribute reads the class's again (a dataclass field's default), taken as None."""
        if self.scope.current is None:
            return
        ctx = self.where.of(node)
        for target in node.targets:
            ch = chain_of(target) if isinstance(target, ast.Attribute) else None
            if isinstance(target, ast.Subscript) and (owner := _dict_of(target.value)) is not None:
                # `del x.__dict__["f"]` as `del x.f`; another key: which attribute is not known
                key = target.slice.value if self.src.is_simple_string(target.slice) else None
                w = AttrWrite(owner[0], [*owner[1], *([key] if key else [])], NoneValue(f"del {self.src.code(target)}"),
                              self.src.line(node), self.where.statement_shape(node, ctx) or self.src.code(node),
                              ctx.conds, ctx.blocks, ctx.exits, ctx.loop_exit)
                (self.scope.current.writes if key else self.scope.current.computed_writes).append(w)
            if ch is not None:
                self.scope.current.writes.append(
                    AttrWrite(ch[0], ch[1], NoneValue(f"del {self.src.code(target)}"), self.src.line(node),
                              self.where.statement_shape(node, ctx) or self.src.code(node), ctx.conds, ctx.blocks,
                              ctx.exits, ctx.loop_exit))

    def visit_Call(self, node: ast.Call) -> None:
        """``setattr(x.y, "name", value)``, and ``setattr(x, name, value)`` in a loop over a literal
        tuple or list of names: a write of each name, as ``x.y.name = value`` would be;
        ``object.__setattr__(x, "name", value)`` too, and ``delattr(x, "name")`` as ``del x.name``;
        a lambda's parameters bound by ``map``."""
        src = self.src
        func = src.code(node.func)
        if self.scope.current is not None:
            self._mapped_parameters(node)
        if self.scope.current is not None and isinstance(node.func, ast.Attribute) \
                and (owner := _dict_of(node.func.value)) is not None:
            self._instance_dict_call(node, node.func.attr, owner)
            return
        if self.scope.current is None or func not in _SETATTRS:
            return
        args = call_args(node)
        if len(args) != _SETATTRS[func]:
            return
        ch = chain_of(args[0].value)
        if ch is None:
            return
        ctx = self.where.of(node)
        shape = self.where.statement_shape(node, ctx) or src.code(node)
        value = describe(src, args[2].value) if len(args) == 3 else NoneValue(src.code(node))
        names = self._literal_names(node, args[1].value)
        for name in names:
            self.scope.current.writes.append(
                AttrWrite(ch[0], [*ch[1], name], value, src.line(node), shape,
                          ctx.conds, ctx.blocks, ctx.exits, ctx.loop_exit, handlers=list(ctx.handlers)))
        if not names:
            self.scope.current.computed_writes.append(
                AttrWrite(ch[0], list(ch[1]), value, src.line(node), shape,
                          ctx.conds, ctx.blocks, ctx.exits, ctx.loop_exit))

    def _instance_dict_call(self, node: ast.Call, method: str, owner: tuple[str, list[str]]) -> None:
        """``vars(x).update(f=v)``, ``x.__dict__.update({"f": v})``: writes of each key;
        ``x.__dict__.pop("f")``: ``f`` reads its class's default again, as after ``del x.f``; any
        other key, mapping or method that changes the dict (``clear``, ``setdefault``): an attribute
        whose name is computed."""
        if method in _DICT_READS:
            return
        src, facts = self.src, self.scope.current
        ctx = self.where.of(node)
        shape = self.where.statement_shape(node, ctx) or src.code(node)
        writes: list[tuple[str | None, object]] = []  # (attribute or None: not known, value)
        args = call_args(node)
        if method == "update":
            for a in args:
                if a.keyword is not None:
                    writes.append((a.keyword, describe(src, a.value)))
                elif not a.star and isinstance(a.value, ast.Dict) and None not in a.value.keys:
                    writes.extend((k.value if src.is_simple_string(k) else None, describe(src, v))
                                  for k, v in zip(a.value.keys, a.value.values))
                else:
                    writes.append((None, Opaque(src.code(a.value)[:200])))
        elif method == "pop" and args and not args[0].star and args[0].keyword is None:
            key = args[0].value
            writes.append((key.value if src.is_simple_string(key) else None, NoneValue(src.code(node)[:200])))
        else:
            writes.append((None, Opaque(src.code(node)[:200])))
        for name, value in writes:
            w = AttrWrite(owner[0], [*owner[1], *([name] if name else [])], value, src.line(node), shape,
                          ctx.conds, ctx.blocks, ctx.exits, ctx.loop_exit, handlers=list(ctx.handlers))
            (facts.writes if name else facts.computed_writes).append(w)

    def _literal_names(self, node: ast.AST, name: ast.expr) -> list[str]:
        src = self.src
        if src.is_simple_string(name):
            return [name.value]
        if not isinstance(name, ast.Name):
            return []
        cur = src.parent(node)
        while cur is not None and not isinstance(cur, FUNCTIONS):
            if isinstance(cur, (ast.For, ast.AsyncFor)) and isinstance(cur.target, ast.Name) and cur.target.id == name.id:
                items = cur.iter.elts if isinstance(cur.iter, (ast.Tuple, ast.List)) else None
                if items and all(src.is_simple_string(_element(e)) and not isinstance(e, ast.Starred) for e in items):
                    return [e.value for e in items]
                return []
            cur = src.parent(cur)
        return []

    def _record_target(self, target, value, stmt, ctx: Context, index: int | None = None):
        src = self.src
        facts = self.scope.current
        desc = describe(src, value) if index is None else ItemOf(index, describe(src, value))
        if isinstance(target, ast.Name):
            facts.bindings.append(Binding(target.id, desc, src.line(stmt), ctx.conds, ctx.blocks, exits=ctx.exits,
                                          loop_exit=ctx.loop_exit))
        elif isinstance(target, ast.Attribute):
            ch = chain_of(target) or self._item_chain(target)
            kept = f"{ch[0]}.{ch[1][0]}" if ch and "." not in ch[0] else None
            if kept is not None and kept in self.where.kept_attributes(stmt):
                # `self.last = result` binds the root of `self.last.draft` read later; a write below
                # it (`self.last.draft.lens = v`) is one through that root
                if len(ch[1]) == 1:
                    facts.bindings.append(Binding(kept, desc, src.line(stmt), ctx.conds, ctx.blocks, exits=ctx.exits,
                                                  loop_exit=ctx.loop_exit))
                else:
                    facts.writes.append(
                        AttrWrite(kept, ch[1][1:], desc, src.line(stmt), self.where.statement_shape(stmt, ctx) or src.code(stmt),
                                  ctx.conds, ctx.blocks, ctx.exits, ctx.loop_exit, handlers=list(ctx.handlers)))
            if ch is not None:
                facts.writes.append(
                    AttrWrite(ch[0], ch[1], desc, src.line(stmt), self.where.statement_shape(stmt, ctx) or src.code(stmt),
                              ctx.conds, ctx.blocks, ctx.exits, ctx.loop_exit, handlers=list(ctx.handlers))
                )
        elif isinstance(target, ast.Subscript) and (owner := _dict_of(target.value)) is not None:
            # `x.__dict__["name"] = v` / `vars(x)["name"] = v` writes the attribute (another key: computed)
            key = target.slice.value if src.is_simple_string(target.slice) else None
            write = AttrWrite(owner[0], [*owner[1], *([key] if key else [])], desc, src.line(stmt),
                              self.where.statement_shape(stmt, ctx) or src.code(stmt), ctx.conds, ctx.blocks,
                              ctx.exits, ctx.loop_exit)
            (facts.writes if key else facts.computed_writes).append(write)
        elif isinstance(target, ast.Subscript) and isinstance(target.value, ast.Name):
            key = target.slice.value if isinstance(target.slice, ast.Constant) and isinstance(target.slice.value, str) else None
            facts.keyed_writes.setdefault(target.value.id, []).append(key)
        elif isinstance(target, (ast.Tuple, ast.List)):
            values = value.elts if isinstance(value, (ast.Tuple, ast.List)) and len(value.elts) == len(target.elts) else None
            for i, el in enumerate(target.elts):
                if values is not None:
                    self._record_target(_element(el), _element(values[i]), stmt, ctx)
                else:
                    self._record_target(_element(el), value, stmt, ctx, index=i)


# methods of an instance's __dict__ that change no attribute
_DICT_READS = frozenset({"get", "keys", "values", "items", "copy", "__contains__", "__getitem__", "__len__"})

# setattr-like calls and their argument counts (delattr: no value, the attribute reads its default)
_SETATTRS = {"setattr": 3, "object.__setattr__": 3, "delattr": 2, "object.__delattr__": 2}


def _modelled_dict_use(src: Snippet, node: ast.Call) -> bool:
    """Is ``node`` ``vars(x)`` whose dict is only subscripted or called a method of, which the
    facts record as reads and writes of x's attributes (``Assignments``, ``ChainReads``)?"""
    if _dict_of(node) is None:
        return False
    parent, where = src.parent(node), src.field(node)
    if isinstance(parent, ast.Subscript) and where == "value":
        return True
    return isinstance(parent, ast.Attribute) and isinstance(src.parent(parent), ast.Call) \
        and src.field(parent) == "func"


def _dict_of(node: ast.expr):
    """The chain whose attribute dictionary ``node`` is (``x.y.__dict__``, ``vars(x.y)``), or None."""
    if isinstance(node, ast.Attribute) and node.attr == "__dict__":
        return chain_of(node.value)
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "vars" \
            and len(node.args) == 1 and not node.keywords:
        return chain_of(node.args[0])
    return None


class Returns(_Collector):
    def visit_Return(self, node: ast.Return) -> None:
        if self.scope.current is None:
            return
        ctx = self.where.of(node)
        item = self.where.dict_item(node.value) if node.value is not None else None
        if item is not None and item.unsure:
            self.scope.current.unsure_roots[item.spelled] = item.unsure
        self.scope.current.returns.append(
            Return(describe(self.src, node.value), self.src.line(node), self.where.statement_shape(node, ctx), ctx.conds,
                   ctx.blocks, ctx.exits)
        )


class Yields(_Collector):
    def visit_Yield(self, node: ast.Yield | ast.YieldFrom) -> None:
        if self.scope.current is None:
            return
        ctx = self.where.of(node)
        value = describe(self.src, node.value) if isinstance(node, ast.Yield) else Opaque(self.src.code(node)[:200])
        self.scope.current.yields.append(
            Return(value, self.src.line(node), self.where.statement_shape(node, ctx), ctx.conds, ctx.blocks, ctx.exits))

    visit_YieldFrom = visit_Yield


class WithStatements(_Collector):
    def visit_With(self, node: ast.With | ast.AsyncWith) -> None:
        if self.scope.current is None or suppresses(self.src, node):
            return
        src = self.src
        self.scope.current.withs.append(WithManager(
            src.line(node), src.line(node.body[0]), src.end_line(node), self.where.of(node).blocks,
            [src.code(item.context_expr) for item in node.items]))

    visit_AsyncWith = visit_With


def _leaves(body: list[ast.stmt]) -> bool:
    return bool(body) and isinstance(body[-1], (ast.Return, ast.Raise))


def _irrefutable(case: ast.match_case) -> bool:
    """``case _:`` or ``case name:`` without a guard matches whatever is left."""
    p = case.pattern
    while isinstance(p, ast.MatchAs) and p.pattern is not None:
        p = p.pattern
    return case.guard is None and isinstance(p, ast.MatchAs) and p.pattern is None


class Splits(_Collector):
    def visit_If(self, node: ast.If) -> None:
        if self.scope.current is None:
            return
        at = self.src.line(node)
        self.scope.current.splits.append(Split(at, self.where.of(node).blocks, [f"{at}b", f"{at}e"],
                                               [_leaves(node.body), _leaves(node.orelse)]))

    def visit_Match(self, node: ast.Match) -> None:
        if self.scope.current is None:
            return
        at = self.src.line(node)
        arms = [f"{at}c{self.src.line(c)}" for c in node.cases]
        leaves = [_leaves(c.body) for c in node.cases]
        if not any(_irrefutable(c) for c in node.cases):
            arms.append("")  # no case matched: nothing of theirs ran
            leaves.append(False)
        self.scope.current.splits.append(Split(at, self.where.of(node).blocks, arms, leaves))


class TestedNames(_Collector):
    def _note(self, expr: ast.expr) -> None:
        if self.scope.current is not None:
            self.scope.current.none_tested.extend(tested_names(expr))

    def visit_If(self, node: ast.If) -> None:
        self._note(node.test)
        if self.scope.current is not None and not node.orelse and exits(self.src, node.body):
            # the code after `if test: raise` on its block runs where `test` failed, as after an assert
            self._holds(node, f"not ({self.src.code(node.test)})")

    def visit_Match(self, node: ast.Match) -> None:
        test = none_exit(self.src, node) if self.scope.current is not None else None
        if test is not None:  # `case None: raise`: the code after it runs where the subject is not None
            self._note(test)
            self._holds(node, f"not ({self.src.code(test)})")

    def visit_IfExp(self, node: ast.IfExp) -> None:
        self._note(node.test)

    def visit_While(self, node: ast.While) -> None:
        self._note(node.test)

    def visit_BoolOp(self, node: ast.BoolOp) -> None:
        # a and b and c is (a and b) and c: the left operand of each binary step, outermost first
        for n in range(len(node.values) - 1, 0, -1):
            self._note(self.src.prefix(node, n))

    def visit_Assert(self, node: ast.Assert) -> None:
        self._note(node.test)
        if self.scope.current is not None:
            self._holds(node, self.src.code(node.test))

    def _holds(self, node: ast.stmt, test: str) -> None:
        blocks = self.where.of(node).blocks
        # its last line: a statement of its own body (`if test: return ...`) comes before it ends
        self.scope.current.asserts.append(Assertion(test, self.src.end_line(node), blocks))


# ------------------------------------------------------------------ the walk


def _arguments(a: ast.arguments) -> Iterator[ast.AST]:
    """A signature's parts as written: each parameter's annotation, then its default."""
    positional = [*a.posonlyargs, *a.args]
    defaults = [None] * (len(positional) - len(a.defaults)) + list(a.defaults)
    for p, d in zip(positional, defaults):
        yield p
        if d is not None:
            yield d
    if a.vararg:
        yield a.vararg
    for p, d in zip(a.kwonlyargs, a.kw_defaults):
        yield p
        if d is not None:
            yield d
    if a.kwarg:
        yield a.kwarg


def _by_position(nodes: list[ast.AST]) -> list[ast.AST]:
    return sorted(nodes, key=lambda n: (n.lineno, n.col_offset))


def children(src: Snippet, node: ast.AST) -> Iterator[ast.AST]:
    """The children of ``node`` in source order (ast's fields are not, for a few kinds)."""
    if isinstance(node, FUNCTIONS):
        yield from node.decorator_list
        yield node.args
        if node.returns:
            yield node.returns
        yield from node.body
    elif isinstance(node, ast.ClassDef):
        yield from node.decorator_list
        yield from _by_position([*node.bases, *node.keywords])
        yield from node.body
    elif isinstance(node, ast.arguments):
        yield from _arguments(node)
    elif isinstance(node, ast.Call):
        yield node.func
        parts = [*node.args, *node.keywords]
        yield from _by_position(parts) if node.args and node.keywords else parts
    elif isinstance(node, ast.Dict):
        for k, v in zip(node.keys, node.values):
            if k is not None:
                yield k
            yield v
    elif isinstance(node, ast.IfExp):
        yield node.body
        yield node.test
        yield node.orelse
    elif isinstance(node, (ast.Import, ast.ImportFrom)):
        yield from _dotted_names(src, node)
    else:
        yield from ast.iter_child_nodes(node)


def _dotted_names(src: Snippet, node: ast.Import | ast.ImportFrom) -> Iterator[DottedName]:
    """The dotted module names an import statement spells (``import a.b``, ``from a.b import c``)."""
    if isinstance(node, ast.Import):
        for alias in node.names:
            if "." in alias.name:
                root, *attrs = alias.name.split(".")
                yield _adopted(src, DottedName(root, attrs, alias.lineno, alias.col_offset, alias.name), node)
    elif node.module and "." in node.module:
        start = src.span(node)[0] + len("from")
        text = src.text
        while text[start] in " \t\\\n.":
            start += 1
        line = text.count("\n", 0, start) + 1
        col = start - (text.rfind("\n", 0, start) + 1)
        root, *attrs = node.module.split(".")
        byte_col = len(src.text[start - col : start].encode())
        yield _adopted(src, DottedName(root, attrs, line, byte_col, node.module), node)


def _adopted(src: Snippet, name: DottedName, stmt: ast.stmt) -> DottedName:
    src.adopt(name, stmt, "names")
    return name


def _walk(src: Snippet, node: ast.AST, visitors: dict[str, list], leavers: dict[str, list]) -> None:
    kind = type(node).__name__
    for visit in visitors.get(kind, ()):
        visit(node)
    for child in children(src, node):
        _walk(src, child, visitors, leavers)
    for leave in leavers.get(kind, ()):
        leave(node)


def facts_for_span(span: FunctionSpan) -> list[FunctionFacts]:
    """One function's source parsed alone, positions shifted back to the file's lines."""
    # a method is parsed under a stand-in class header, so its indentation (and any
    # less-indented multi-line string inside it) stays as it is in the file
    text = f"class _Owner:\n{span.text}" if span.cls else span.text
    offset = span.start - 2 if span.cls else span.start - 1
    try:
        src = Snippet(text, offset)
    except SyntaxError as exc:
        name = f"{span.cls}.{span.name}" if span.cls else span.name
        raise SpectraceError(f"cannot parse {name} (line {span.start}): {exc.msg}") from exc
    scope = FunctionScope(src, span.cls)
    collectors = [scope, ChainReads(scope), CallSites(scope), Assignments(scope), Returns(scope), TestedNames(scope),
                  WithStatements(scope), Yields(scope), Splits(scope)]
    visitors: dict[str, list] = {}
    leavers: dict[str, list] = {}
    for c in collectors:
        for attr in dir(type(c)):
            if attr.startswith("visit_"):
                visitors.setdefault(attr[6:], []).append(getattr(c, attr))
            elif attr.startswith("leave_"):
                leavers.setdefault(attr[6:], []).append(getattr(c, attr))
    _walk(src, src.tree, visitors, leavers)
    return scope.functions
