"""Where the result a receiving function holds came from when a relay handed it over
(``result = self.run_batch(batch)`` in an event loop): the relay's calls of the worker, whose
arguments decide the worker's parameters (``forward_batch_generation(batch)`` leaves ``is_verify``
False), and the fields the relay sets on the result before it returns it, with the conditions it
does so under (``batch_result.copy_done = Event()`` on ``run_batch``'s overlapped way only).

Nothing is said (None, or no condition) where a binding of the name that is neither a relay's call
nor ``None`` may reach the use, or where the relay's result comes from a parameter of its own."""

from __future__ import annotations

import re
from dataclasses import dataclass

from spectrace.contracts import conditions as C
from spectrace.contracts.arguments import bind
from spectrace.contracts.facts import CallSite, Cond, FunctionFacts, path_conditions
from spectrace.contracts.holders import HolderFinder
from spectrace.contracts.values import CallValue, ItemOf, NoneValue, Value, is_name

_DEPTH = 3  # relays of relays followed
_BRANCH = re.compile(r"^(\d+)([be])$")  # the body or the else of an `if`


@dataclass(frozen=True)
class RelayCall:
    """A call of a relay whose value a function holds: the relay's module and facts, and its
    parameters as the call's argument texts."""
    module: str
    facts: FunctionFacts
    arguments: dict[str, str]


def exclusive(a: list[str], b: list[str]) -> bool:
    """Do two statements stand on different branches of one ``if`` (never both run in one call)?"""
    for x, y in zip(a, b):
        if x == y:
            continue
        mx, my = _BRANCH.match(x), _BRANCH.match(y)
        return bool(mx and my and mx.group(1) == my.group(1))
    return False


def _relay_index(desc: Value) -> tuple[CallValue, int | None] | None:
    """(the call, the item taken of its value) of ``f(...)`` or of ``a, b = f(...)``'s item."""
    if isinstance(desc, CallValue):
        return desc, None
    if isinstance(desc, ItemOf) and isinstance(desc.of, CallValue):
        return desc.of, desc.index
    return None


class RelayOrigins:
    def __init__(self, holders: HolderFinder):
        self.holders = holders
        self.symbols = holders.symbols
        self.worker_prefix = f"self.{holders.analysis.worker_attr}."

    def relay_calls(self, module: str, f: FunctionFacts, names: set[str]) -> list[RelayCall] | None:
        """The relay calls whose value ``names`` of ``f`` may hold: every binding of them in ``f``
        (a loop's later bindings reach its earlier lines too) is a relay's call or ``None``; None
        when one is something else, or a name is a parameter."""
        if not names or names & {p for p, _ in f.params}:
            return None
        out = []
        for b in f.bindings:
            if b.target not in names or isinstance(b.value, NoneValue):
                continue
            relay = self._relay_call(module, f, b.value)
            if relay is None:
                return None
            out.append(relay)
        return out or None

    def _relay_call(self, module: str, f: FunctionFacts, value: Value) -> RelayCall | None:
        """``value`` as the call of one relay (the whole of its value, or the item it relays)."""
        got = _relay_index(value)
        if got is None:
            return None
        call, index = got
        targets = [t for t in self.holders.targets(module, f, call.callee)
                   if t in self.holders.relays and self.holders.relays[t] == index]
        found = self.symbols.function_facts(targets[0]) if len(targets) == 1 else None
        if found is None:
            return None
        relay = found[1]
        arguments = {p: a.text for p, a in bind(relay, list(call.args), dict(call.keywords)).items() if a.text}
        return RelayCall(self.symbols.module_of_file(found[0]), relay, arguments)

    def passed_at(self, module: str, f: FunctionFacts, site: CallSite) -> list[RelayCall] | None:
        """The relay calls whose value ``f`` hands on at ``site`` (as an argument, or as the
        receiver of the owner's method)."""
        held = self.holders.of(module, f).from_worker
        names = {n for n in held if any(is_name(a, n) for a in [*site.args, *site.keywords.values()])
                 or site.callee.split(".")[0] == n}
        return self.relay_calls(module, f, names)

    def worker_calls(self, relay: RelayCall, seen: frozenset = frozenset()) -> list[tuple[CallSite, FunctionFacts]] | None:
        """The calls of the worker (with the facts of the function making each) whose result the
        relay may return: its own, and those of the relays it binds or returns the value of (a
        value of anything else, ``self.tp_worker.forward_batch_split_prefill(batch)`` or an
        ``EmbeddingBatchResult``, is no result of the worker's); None when its result may come
        from its parameters, or past three relays. A relay met again on the way (``run_batch`` ->
        ``_run_batch_prebuilt`` -> ``run_batch``) adds no call: its calls are counted already."""
        f = relay.facts
        if f.qualname in seen:
            return []
        holders = self.holders.of(relay.module, f)
        if len(seen) >= _DEPTH or holders.from_worker & {p for p, _ in f.params}:
            return None
        out = [(c, f) for c in f.calls if c.callee.startswith(self.worker_prefix)]
        values = [b.value for b in f.bindings if b.target in holders.from_worker] + [r.value for r in f.returns]
        for value in values:
            got = _relay_index(value)
            if got is None or got[0].callee.startswith(self.worker_prefix):
                continue
            inner = self._relay_call(relay.module, f, value)
            if inner is None:
                continue
            more = self.worker_calls(inner, seen | {f.qualname})
            if more is None:
                return None
            out.extend(more)
        return out

    def sets(self, relay: RelayCall, field_name: str) -> list[list[Cond]]:
        """The alternatives (each the path conditions of one write, in the relay's text) under which
        the relay has set ``field_name`` non-None on the result it returns: a write that runs
        whenever its conditions hold (in ``if`` branches only, no return before it that can run
        with it), with no later write of None to the field nor binding of the name that can run
        after it."""
        f = relay.facts
        names = self.holders.of(relay.module, f).from_worker
        out = []
        for w in f.writes:
            if w.root not in names or w.attrs != [field_name] or isinstance(w.value, NoneValue):
                continue
            if not all(_BRANCH.match(b) for b in w.blocks):
                continue  # a loop body, a try or a swallowing with: it may not run under its conditions
            conds = path_conditions(w)
            if any(x.line > w.line and not exclusive(w.blocks, x.blocks) for x in f.writes
                   if x.root in names and x.attrs == [field_name] and isinstance(x.value, NoneValue)):
                continue
            if any(b.line > w.line and b.target == w.root and not exclusive(w.blocks, b.blocks) for b in f.bindings):
                continue
            if any(r.line < w.line and C.satisfiable(C.conjunction(path_conditions(r)), C.conjunction(conds))
                   for r in f.returns):
                continue  # an exit before the write that its conditions do not rule out
            out.append(conds)
        return out
