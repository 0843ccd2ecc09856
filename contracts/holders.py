"""Which names of a function hold an owner instance, and how each comes to hold it: parameters
and locals annotated with the owner, results of calls that return it (resolved through the index,
else by the names of the scanned functions annotated to return it), aliases, constructors."""

from __future__ import annotations

import dataclasses
import re
from dataclasses import dataclass, field

from spectrace.contracts.analysis import Analysis
from spectrace.contracts.blocks import dominates
from spectrace.contracts.facts import CallSite, Cond, FunctionFacts
from spectrace.contracts.values import CallValue, Chain, IfExp, ItemOf, Name, NoneValue, TupleValue, Value, is_name
from spectrace.tracer.index import ir_text


def mentions(text: str | None, name: str) -> bool:
    return bool(text) and re.search(rf"\b{re.escape(name)}\b", text) is not None


@dataclass
class Holders:
    why: dict[str, str] = field(default_factory=dict)  # name -> how it comes to hold the owner
    calls: set[str] = field(default_factory=set)  # callees seen returning the owner
    # the names holding the result the worker returned: bound from the worker call, from a call of
    # a function that returns that result (a relay), or aliases of those
    from_worker: set[str] = field(default_factory=set)

    def __contains__(self, name: str) -> bool:
        return name in self.why


@dataclass
class Inbound:
    why: str
    caller: str  # Class.method that passes the result
    site: str  # file:line of the call
    conds: list[Cond]  # the call's path condition in the caller


_COMPOSED_CALL = re.compile(r"self\.\w+\.\w+")  # a method of an object held in an attribute
_SELF_CALL = re.compile(r"self\.\w+")


class HolderFinder:
    def __init__(self, analysis: Analysis, scanned: dict[str, list[FunctionFacts]]):
        self.analysis = analysis
        self.owner_name = analysis.owner_name
        self.symbols = analysis.symbols
        # fallback for calls the index cannot resolve: functions of the scope annotated to return the owner
        self.owner_returning_names = {f.name for flist in scanned.values() for f in flist
                                      if mentions(f.returns_annotation, self.owner_name)}
        # (module, qualname) -> {param: Inbound}: unannotated parameters that a receiving function
        # passes its worker result to (a relay moved into a helper keeps its identity)
        self.inbound: dict[tuple[str, str], dict[str, Inbound]] = {}
        # consumer-side functions that return the worker's result as they got it: {qualified name:
        # the item of the returned tuple that holds it, None for the whole value} (find_relays)
        self.relays: dict[str, int | None] = {}
        self._of: dict[tuple, Holders] = {}
        self._consumer_mro = set(self.symbols.mro(analysis.scheduler_qn)) if analysis.scheduler_qn else set()
        # classes of objects the consumer holds in an attribute and hands the result to
        # (``self.batch_result_processor.process_batch_result_decode(batch, result)``)
        self._composed: set[str] = set()

    def calls_passing(self, module: str, f, names: set):
        """(call, callee's file, callee's facts, the callee's (param, annotation) that receive one of
        ``names``) for each call in ``f`` that passes one of them, per resolved callee; a call of
        the owner's own method on one of them (``result.copy_to_cpu()``) passes it as ``self``."""
        for c in [*f.calls, *_partial_calls(f, names)]:
            receiver = c.callee.split(".")[0]
            method = self._owner_method(c.callee, {n for n in names if n != receiver or self._holds_at(module, f, n, c, names)})
            if method is not None:
                yield c, *method, [("self", "")]
                continue
            here = {n for n in names if self._holds_at(module, f, n, c, names)}
            closure = self._closure(module, f, c, here)
            if closure is not None:  # a function nested in f, called there, reading the result it closes over
                yield c, *closure
            pos = [i for i, a in enumerate(c.args) if is_name(a, here)]
            kws = [k for k, a in c.keywords.items() if is_name(a, here)]
            if not pos and not kws:
                continue
            for target in self.symbols.resolve_callee(module, f, c.callee):
                got = self.symbols.function_facts(target)
                if got is None:
                    continue
                rel2, g = got
                params = [p for p in g.params if not (g.cls and p[0] in ("self", "cls"))]
                yield c, rel2, g, [params[i] for i in pos if i < len(params)] + [p for p in params if p[0] in kws]

    def _closure(self, module: str, f: FunctionFacts, call, names: set) -> tuple | None:
        """(file, facts, [(name, None)]) for ``call`` of a function nested in ``f`` that uses one of
        ``names`` without binding it: a free name, which holds there what it holds in ``f`` where the
        call runs."""
        if "." in call.callee or not names:
            return None
        got = self.symbols.indexed(f"{module}.{f.qualname}.<locals>.{call.callee}")
        if got is None:
            return None
        rel, g = got
        bound = {p for p, _ in g.params} | {b.target for b in g.bindings}
        used = {x.root for x in (*g.reads, *g.writes)} | {c.callee.split(".")[0] for c in g.calls} | \
            {a.name for c in g.calls for a in (*c.args, *c.keywords.values()) if isinstance(a, Name)}
        free = sorted((names & used) - bound)
        return (rel, g, [(n, None) for n in free]) if free else None

    def _holds_at(self, module: str, f: FunctionFacts, name: str, call, names: set) -> bool:
        """Does ``name`` still hold what ``names`` hold where ``call`` runs? Not when the last binding
        that runs before it on every path binds something else (``ret = EmbeddingBatchResult(...)``
        after ``ret = batch_result`` on another branch)."""
        before = [b for b in f.bindings if b.target == name and b.line < call.line and dominates(b.blocks, call.blocks)]
        if not before:
            return True
        last = max(before, key=lambda b: b.line)
        return isinstance(last.value, NoneValue) or self.relays_result(module, f, last.value, names)

    def _owner_method(self, callee: str, names: set) -> tuple[str, FunctionFacts] | None:
        """(file, facts) of the owner's method that ``callee`` (``holder.m``) calls."""
        parts = callee.split(".")
        if not self.analysis.roles.owner_methods or len(parts) != 2 or parts[0] not in names:
            return None
        owner = self.analysis.owner
        module = self.symbols.module_of_file(owner.file)
        target = self.symbols.lookup_method(f"{module}.{owner.name}", parts[1]) if module else None
        return self.symbols.function_facts(target) if target else None

    def of(self, module: str, f: FunctionFacts) -> Holders:
        """The holders of ``f`` (kept until a relay or an inbound parameter is found)."""
        key = (module, f.qualname, id(f))
        if key not in self._of:
            self._of[key] = self._holders_of(module, f)
        return self._of[key]

    def _holders_of(self, module: str, f: FunctionFacts) -> Holders:
        holders = Holders()
        for name, ann in f.params:
            if mentions(ann, self.owner_name):
                holders.why[name] = f"parameter annotated {ann}"
        for name, inbound in self.inbound.get((module, f.qualname), {}).items():
            holders.why.setdefault(name, inbound.why)
        changed = True
        rounds = 0
        while changed and rounds < 4:
            changed, rounds = False, rounds + 1
            for b in f.bindings:
                if b.target in holders:
                    continue
                if mentions(b.annotation, self.owner_name):
                    why = f"annotated {b.annotation}"
                else:
                    why = self._value_holds(module, f, b.value, holders)
                if why:
                    holders.why[b.target] = why
                    changed = True
        holders.from_worker = self._from_worker(module, f, holders)
        return holders

    def _from_worker(self, module: str, f: FunctionFacts, holders: Holders) -> set[str]:
        prefix = self.analysis.roles.worker_call_prefix
        out = {name for name, why in holders.why.items() if why.startswith(prefix)}
        for _ in range(4):  # aliases of aliases
            grown = {b.target for b in f.bindings
                     if b.target in holders and b.target not in out and self.relays_result(module, f, b.value, out)}
            if not grown:
                break
            out |= grown
        return out

    def relays_result(self, module: str, f: FunctionFacts, desc: Value, names: set[str], item: int | None = None) -> bool:
        """Is ``desc`` (item ``item`` of it, for a tuple) the worker's result, given the ``names``
        of ``f`` that hold it: one of them, the worker call itself, or a relay's call?"""
        match desc:
            case ItemOf(index=index, of=of):
                return item is None and self.relays_result(module, f, of, names, index)
            case TupleValue(items=items, starred=False):
                return item is not None and item < len(items) and self.relays_result(module, f, items[item], names)
            case IfExp(body=body, orelse=orelse):
                return self.relays_result(module, f, body, names, item) or self.relays_result(module, f, orelse, names, item)
            case Name(name=name) if item is None:
                return name in names
            case CallValue(callee=callee):
                if item is None and callee.startswith(f"self.{self.analysis.worker_attr}."):
                    return True
                return any(t in self.relays and self.relays[t] == item for t in self.targets(module, f, callee))
        return False

    def targets(self, module: str, f: FunctionFacts, callee: str) -> list[str]:
        """What ``callee`` runs: ``self.m()`` in a class the consumer derives from (a mixin) is the
        consumer's ``m``, the method of the object the code runs on."""
        parts = callee.split(".")
        if len(parts) == 2 and parts[0] == "self" and f.cls and f"{module}.{f.cls}" in self._consumer_mro:
            t = self.symbols.lookup_method(self.analysis.scheduler_qn, parts[1])
            if t:
                return [t]
        return self.symbols.resolve_callee(module, f, callee)

    def find_relays(self, functions: list[tuple[str, str, FunctionFacts]]) -> None:
        """The consumer side's functions that return the worker's result as they got it, whole
        (``run_batch``: ``batch_result = self.model_worker.forward_batch_generation(...)`` ...
        ``ret = batch_result; return ret``) or as an item of a tuple (``return result, event``), so
        that a name bound from their call holds it too (the pipeline-parallel loops get it through
        ``result = self.run_batch(...)`` in ``_pp_launch_batch``)."""
        for _ in range(4):  # relays of relays
            grown = False
            for module, _rel, f in functions:
                qn = f"{module}.{f.qualname}"
                if qn in self.relays:
                    continue
                names = self.of(module, f).from_worker
                for r in f.returns:
                    item = _relayed_item(r.value, lambda d, i=None: self.relays_result(module, f, d, names, i))
                    if item is not False:
                        self.relays[qn] = item
                        self._of.clear()
                        grown = True
                        break
            if not grown:
                return

    def _value_holds(self, module: str, f: FunctionFacts, desc: Value, holders: Holders) -> str | None:
        match desc:
            case Name(name=name) if name in holders:
                return f"alias of {name}"
            case CallValue(callee=callee):
                if callee.split(".")[-1] == self.owner_name:
                    return "constructed"
                if self._call_returns_owner(module, f, callee) or \
                        any(t in self.relays and self.relays[t] is None for t in self.targets(module, f, callee)):
                    holders.calls.add(callee)
                    return f"returned by {callee}(...)"
            case IfExp(body=body, orelse=orelse):
                return self._value_holds(module, f, body, holders) or self._value_holds(module, f, orelse, holders)
            case ItemOf(index=index, of=CallValue(callee=callee)):
                if any(t in self.relays and self.relays[t] == index for t in self.targets(module, f, callee)):
                    return f"item {index} of {callee}(...), the worker's result"
        return None

    def _call_returns_owner(self, module: str, f: FunctionFacts, callee: str) -> bool:
        targets = self.symbols.resolve_callee(module, f, callee)
        if any(self._function_returns_owner(t) for t in targets):
            return True
        if targets:
            return False
        return callee.split(".")[-1] in self.owner_returning_names

    def _function_returns_owner(self, func_qn: str) -> bool:
        project = self.symbols.project
        info = project.func(func_qn)
        if info is not None and info.returns is not None and mentions(ir_text(info.returns), self.owner_name):
            return True
        return any(t and t[1].endswith(f".{self.owner_name}") for t in project.return_types(func_qn))

    def propagate(self, receivers: list[tuple[str, str, FunctionFacts]]) -> None:
        """Bind the parameters of the functions that each receiver (a function holding the worker's
        result, ``Holders.from_worker``) passes that result to, one call down: ``self._helper(batch_result)``.
        Only unannotated parameters: an annotation naming another type says the argument is not a result."""
        for module, rel, f in receivers:
            poly = self.of(module, f).from_worker
            if not poly:
                continue
            for c, rel2, g, names in self.calls_passing(module, f, poly):
                for name, ann in names:
                    if ann and not mentions(ann, self.owner_name):
                        continue
                    key = (self.symbols.module_of_file(rel2), g.qualname)
                    if g.cls and _COMPOSED_CALL.fullmatch(c.callee) and self.in_consumer(module, f) \
                            and not self.in_consumer(key[0], g):
                        self._composed.add(f"{key[0]}.{g.cls}")  # an object the consumer holds
                    self._of.clear()
                    inbound = Inbound(why=f"parameter {name}, passed the result by {f.qualname} ({rel}:{c.line})",
                                      caller=f.qualname, site=f"{rel}:{c.line}", conds=list(c.conds))
                    self.inbound.setdefault(key, {}).setdefault(name, inbound)
                    if name == "self":
                        self._propagate_owner_calls(g, inbound)
                    else:
                        self._propagate_consumer_calls(key[0], g, {name}, inbound)

    def in_consumer(self, module: str, g: FunctionFacts) -> bool:
        """Is ``g`` a method of the consumer or of a class it derives from (a mixin)?"""
        return bool(g.cls) and f"{module}.{g.cls}" in self._consumer_mro

    def in_composed(self, module: str, g: FunctionFacts) -> bool:
        """Is ``g`` a method of an object the consumer hands the result to (or of its bases)?"""
        qn = f"{module}.{g.cls}" if g.cls else None
        return qn is not None and any(qn in self.symbols.mro(c) for c in self._composed)

    def passed_on(self, module: str, g: FunctionFacts, names: set):
        """The calls of ``g``, a method of the consumer holding the result in ``names``, that hand it
        to another method of the consumer (``self.process_batch_result(batch, result)`` ->
        ``self._record_step_counters(batch, result)``), or to a method of an object the consumer
        holds in an attribute (``self.batch_result_processor.process_batch_result_decode(batch,
        result)``), and those of such an object's method that hand it to another method of the
        object: (call, callee's file, facts, receiving params)."""
        inside = self.in_consumer(module, g)
        composed = not inside and self.in_composed(module, g)
        if not inside and not composed:
            return
        for c, rel2, g2, params in self.calls_passing(module, g, names):
            mod2 = self.symbols.module_of_file(rel2)
            if params == [("self", "")] or (inside and self.in_consumer(mod2, g2)):
                yield c, rel2, g2, params
            elif inside and g2.cls and _COMPOSED_CALL.fullmatch(c.callee):
                self._composed.add(f"{mod2}.{g2.cls}")
                yield c, rel2, g2, params
            elif composed and g2.cls and _SELF_CALL.fullmatch(c.callee):
                yield c, rel2, g2, params

    def _propagate_consumer_calls(self, module: str, g: FunctionFacts, names: set, inbound: Inbound,
                                  depth: int = 0) -> None:
        """The consumer's methods that ``g`` hands its inbound result to hold it too, under both
        calls' conditions, three calls deep."""
        if depth >= 3:
            return
        for c, rel2, g2, params in self.passed_on(module, g, names):
            key = (self.symbols.module_of_file(rel2), g2.qualname)
            fresh = {name for name, ann in params if not (ann and not mentions(ann, self.owner_name))
                     and name not in self.inbound.get(key, {})}
            if not fresh:
                continue
            nested = Inbound(why=inbound.why, caller=inbound.caller, site=inbound.site,
                             conds=[*inbound.conds, *c.conds])
            for name in fresh:
                self.inbound.setdefault(key, {})[name] = nested
            self._of.clear()
            if fresh == {"self"}:  # the owner's method, called on the result
                self._propagate_owner_calls(g2, nested, depth + 1)
            else:
                self._propagate_consumer_calls(key[0], g2, fresh, nested, depth + 1)

    def owner_calls(self, g: FunctionFacts):
        """(call, file, facts) for each ``self.m(...)`` in the owner's method ``g`` that calls
        another method of the owner: it runs on the same result."""
        for c in g.calls:
            method = self._owner_method(c.callee, {"self"})
            if method is not None:
                yield c, *method

    def _propagate_owner_calls(self, g: FunctionFacts, inbound: Inbound, depth: int = 0) -> None:
        """The owner's methods that ``g`` (an owner method the consumer calls) calls on ``self``
        hold the same result, three calls deep."""
        if depth >= 3:
            return
        for c, rel2, g2 in self.owner_calls(g):
            key = (self.symbols.module_of_file(rel2), g2.qualname)
            if "self" in self.inbound.get(key, {}):
                continue
            nested = Inbound(why=inbound.why, caller=inbound.caller, site=inbound.site,
                             conds=[*inbound.conds, *c.conds])
            self.inbound.setdefault(key, {})["self"] = nested
            self._propagate_owner_calls(g2, nested, depth + 1)


def _partial_of(value: Value, names: set) -> bool:
    """Is ``value`` ``functools.partial(fn, ...)`` of a function spelled by name or chain, that is
    a method of a ``name`` among ``names`` (``partial(result.m)``) or is handed one of them
    (``partial(self._use, result)``)?"""
    if not isinstance(value, CallValue) or value.callee not in ("partial", "functools.partial") or not value.args:
        return False
    fn, bound = value.args[0], [*value.args[1:], *value.keywords.values()]
    if isinstance(fn, Chain) and fn.root in names and len(fn.attrs) == 1:
        return True
    return isinstance(fn, (Chain, Name)) and any(is_name(a, names) for a in bound)


def _partial_calls(f: FunctionFacts, names: set) -> list[CallSite]:
    """``fn = functools.partial(result.m, k=v)`` (or ``functools.partial(self._use, result)``) then
    ``fn()``, or ``fn`` handed to a call that runs it (``submit(fn)``): each such call as the call
    ``result.m(k=v)`` (``self._use(result)``) where it stands."""
    bound = {b.target: b for b in f.bindings if _partial_of(b.value, names)}
    out = []
    for c in f.calls:
        handed = [a.name for a in c.args if isinstance(a, Name) and a.name in bound]
        for name in ([c.callee] if c.callee in bound else []) + handed:
            b = bound[name]
            if b.line >= c.line or not dominates(b.blocks, c.blocks):
                continue
            target = b.value.args[0]
            called = c.callee == name
            out.append(dataclasses.replace(
                c, callee=target.name if isinstance(target, Name) else ".".join([target.root, *target.attrs]),
                npos=len(b.value.args) - 1 + (c.npos if called else 0),
                args=[*b.value.args[1:], *(c.args if called else [])],
                keywords={**b.value.keywords, **(c.keywords if called else {})}, spread=c.spread if called else []))
    return out


def _relayed_item(value: Value, is_result) -> int | None | bool:
    """Which part of a returned ``value`` is the worker's result: None for the whole value, the
    index of a tuple's item, False for none."""
    if is_result(value):
        return None
    if isinstance(value, TupleValue):
        for i, item in enumerate(value.items):
            if is_result(item):
                return i
    return False
