"""Relays through a callback: the worker hands a value to a callable the scheduler passed in.

From 0.5.13 the overlap scheduler no longer reads ``new_seq_lens`` off the result: ``run_batch``
passes ``on_publish=partial(self.future_map.publish, future_indices)`` to
``self.model_worker.forward_batch_generation``, the worker calls ``on_publish(batch_output.new_seq_lens)``
between verify and draft-extend, and the next step takes the lengths from the future map
(``FutureMap.resolve_seq_lens_cpu``). The obligation is a call, not a field: every return path of
a worker method that takes the callback must call it with the field first, directly (a guard on the
callback itself, ``if on_publish is not None:``, does not make it conditional) or through a helper
it passes the callback to (``self._forward_prefill_batch(batch, on_publish)``) that calls it on
every path.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from spectrace.contracts.analysis import Analysis
from spectrace.contracts.facts import CallSite, FunctionFacts
from spectrace.contracts.values import is_name

MAX_DEPTH = 4


@dataclass(frozen=True)
class RelayPath:
    """One way out of a worker method (a return, or its end) and whether the callback was called
    with the field before it."""
    file: str
    line: int
    shape: str
    relayed: bool
    via: str  # "direct", or the helper the callback was passed to
    call_line: int  # the relaying call's line (0 when none)
    branch: str  # the branches taken before this exit


@dataclass(frozen=True)
class Wiring:
    """Where the consumer passes the callback on (``on_publish=...``)."""
    file: str
    line: int
    consumer: str
    text: str


@dataclass(frozen=True)
class RelayWorker:
    """A worker class whose method takes the callback, with that method's ways out."""
    worker: str
    function: str
    file: str
    line: int
    param: str
    paths: list[RelayPath] = field(default_factory=list)


@dataclass(frozen=True)
class RelayReport:
    wiring: list[Wiring]
    workers: list[RelayWorker]


def _guard_blocks(lines: list[str], blocks, name: str) -> set:
    """Blocks that are the body of ``if <name> is not None:`` / ``if <name>:`` (source lines)."""
    rx = re.compile(rf"^\s*(?:el)?if\s+\(?\s*{re.escape(name)}(?:\s+is\s+not\s+None)?\s*\)?\s*:")
    out = set()
    for b in blocks:
        if b.endswith("b") and b[:-1].isdigit() and 0 < int(b[:-1]) <= len(lines) and rx.match(lines[int(b[:-1]) - 1]):
            out.add(b)
    return out


def _covered(calls: list, prefix: list):
    """A relaying call that runs whenever block ``prefix`` runs: one directly in it, or one in each
    branch of an if/else inside it (``Lb`` and ``Le``, an elif being an if inside ``Le``)."""
    for blocks, c, how in calls:
        if blocks == prefix:
            return c, how
    n = len(prefix)
    for blocks, _c, _how in calls:
        if len(blocks) > n and blocks[:n] == prefix and blocks[n].endswith("b"):
            other = prefix + [blocks[n][:-1] + "e"]
            a, b = _covered(calls, prefix + [blocks[n]]), _covered(calls, other)
            if a and b:
                return a
    return None


def _cover(calls: list, blocks: list):
    """A relaying call on every way into an exit nested in ``blocks``."""
    for k in range(len(blocks), -1, -1):  # the exit's own branch first
        hit = _covered(calls, blocks[:k])
        if hit:
            return hit
    return None


class RelayFinder:
    def __init__(self, analysis: Analysis, field_name: str):
        self.symbols = analysis.symbols
        self.field = field_name
        self._memo: dict = {}

    def _passes(self, module: str, f: FunctionFacts, c: CallSite, name: str) -> list[tuple[str, str]]:
        """(helper, its parameter) that call ``c`` hands callable ``name`` to."""
        pos = [i for i, a in enumerate(c.args) if is_name(a, name)]
        kws = [k for k, a in c.keywords.items() if is_name(a, name)]
        if not pos and not kws:
            return []
        out = []
        for t in self.symbols.resolve_callee(module, f, c.callee):
            got = self.symbols.function_facts(t)
            if got is None:
                continue
            g = got[1]
            params = [p for p, _ in g.params if not (g.cls and p in ("self", "cls"))]
            out += [(t, params[i]) for i in pos if i < len(params)] + [(t, k) for k in kws if k in params]
        return out

    def _relaying_calls(self, module: str, f: FunctionFacts, name: str, depth: int) -> list[tuple[CallSite, str]]:
        """Calls in ``f`` that relay the field through ``name``: ``name(...field...)``, or a helper
        that relays on every path. Each with how ("direct" or the helper's name)."""
        out = []
        for c in f.calls:
            if c.callee == name:
                if any(re.search(rf"\b{re.escape(self.field)}\b", a.text) for a in c.args):
                    out.append((c, "direct"))
                continue
            for helper, param in self._passes(module, f, c, name):
                if depth < MAX_DEPTH and self.relays_always(helper, param, depth + 1):
                    out.append((c, helper.rsplit(".", 2)[-2] + "." + helper.rsplit(".", 1)[-1]))
        return out

    def relays_always(self, func_qn: str, name: str, depth: int = 0) -> bool:
        """Does every way out of ``func_qn`` (its returns and its end) come after relaying?"""
        key = (func_qn, name)
        if key not in self._memo:
            self._memo[key] = False  # recursion: not proven
            paths = self.paths(func_qn, name, depth)
            self._memo[key] = paths is not None and all(p.relayed for p in paths)
        return self._memo[key]

    def paths(self, func_qn: str, name: str, depth: int = 0) -> list[RelayPath] | None:
        """Each return of ``func_qn`` (and its end, when no return closes it) with whether ``name`` was
        called with the field before it."""
        got = self.symbols.function_facts(func_qn)
        if got is None:
            return None
        rel, f = got
        module = self.symbols.module_of_file(rel)
        calls = self._relaying_calls(module, f, name, depth)
        lines = self.symbols.facts.text(rel).splitlines()
        guards = _guard_blocks(lines, {b for c, _ in calls for b in c.blocks}, name)
        # a helper without a return relays when its body does; a method's end returns None (no result)
        exits = [(r.line, list(r.blocks), r.shape, r.conds) for r in f.returns] or [(f.end_line, [], "(end of function)", [])]
        out = []
        for line, blocks, shape, conds in exits:
            # a guard on the callback itself does not make the relay conditional
            before = [([b for b in c.blocks if b not in guards], c, how) for c, how in calls if c.line <= line]
            hit = _cover(before, blocks)
            out.append(RelayPath(file=rel, line=line, shape=shape, relayed=hit is not None,
                                 via=hit[1] if hit else "", call_line=hit[0].line if hit else 0,
                                 branch=" and ".join(t if pos else f"not ({t})" for t, pos in conds)))
        return out


def _function_text(symbols, func_qn: str) -> tuple[str, int, str] | None:
    got = symbols.function_facts(func_qn)
    if got is None:
        return None
    rel, f = got
    lines = symbols.facts.text(rel).splitlines()
    return rel, f.line, "\n".join(lines[f.line - 1: f.end_line])


def relay_report(analysis: Analysis, scheduler_qn: str | None, targets: list[str], method: str, callback: str,
                 field_name: str, consumer: str) -> RelayReport:
    """Where ``consumer`` (``Class.method``) passes ``callback`` to the worker method, and, for each
    worker class whose ``method`` takes it, each return path and whether it relays ``field_name``."""
    symbols = analysis.symbols
    wiring = []
    if scheduler_qn:
        func = symbols.lookup_method(scheduler_qn, consumer.rsplit(".", 1)[-1])
        got = _function_text(symbols, func) if func else None
        if got is not None:
            rel, start, text = got
            pattern = re.compile(rf"""(?:\b{re.escape(callback)}\s*=(?!=)|\[\s*["']{re.escape(callback)}["']\s*\]\s*=(?!=))""")
            for i, line in enumerate(text.splitlines()):
                if pattern.search(line):
                    wiring.append(Wiring(file=rel, line=start + i, consumer=consumer, text=line.strip()))
    finder = RelayFinder(analysis, field_name)
    workers = []
    for t in targets:
        fq = symbols.lookup_method(t, method)
        got = symbols.function_facts(fq) if fq else None
        if got is None or callback not in [p for p, _ in got[1].params]:
            continue
        paths = finder.paths(fq, callback)
        workers.append(RelayWorker(worker=t, function=fq, file=got[0], line=got[1].line, param=callback,
                                   paths=paths or []))
    return RelayReport(wiring=wiring, workers=workers)
