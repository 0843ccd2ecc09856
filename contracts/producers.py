"""The producers pass: constructor calls of the owner with the fields they pass, and
``holder.field = ...`` writes; plus the fields the scheduler side sets itself on a worker's result."""

from __future__ import annotations

from spectrace.contracts import conditions as C
from spectrace.contracts.analysis import Analysis
from spectrace.contracts.facts import FunctionFacts
from spectrace.contracts.holders import Holders
from spectrace.contracts.kinds import ProducerKind
from spectrace.contracts.records import Producer, producer_id
from spectrace.contracts.values import NoneValue


def producers_in(analysis: Analysis, rel: str, module: str, side: str, f: FunctionFacts, holders: Holders) -> list[Producer]:
    owner = analysis.owner_name
    out = []
    for c in f.calls:
        if c.callee.split(".")[-1] != owner:
            continue
        set_fields = sorted(k for k, v in c.keywords.items() if not isinstance(v, NoneValue) and k in analysis.fields)
        none_fields = sorted(k for k, v in c.keywords.items() if isinstance(v, NoneValue))
        shape = f"{c.callee}({', '.join(sorted(c.keywords))})"
        out.append(Producer(
            id=producer_id(ProducerKind.CONSTRUCT, f.qualname, shape), kind=ProducerKind.CONSTRUCT, owner=owner,
            fields=set_fields, none_fields=none_fields, file=rel, line=c.line, function=f.qualname,
            module=module, side=side, path_condition=C.render(c.conds), shape=shape,
        ))
    for w in f.writes:
        if w.root in holders and len(w.attrs) == 1 and w.attrs[0] in analysis.fields:
            is_none = isinstance(w.value, NoneValue)
            out.append(Producer(
                id=producer_id(ProducerKind.ASSIGN, f.qualname, w.shape), kind=ProducerKind.ASSIGN, owner=owner,
                fields=[] if is_none else [w.attrs[0]], none_fields=[w.attrs[0]] if is_none else [],
                file=rel, line=w.line, function=f.qualname, module=module, side=side,
                path_condition=C.render(w.conds), shape=w.shape,
            ))
    return out


def fields_set_on_results(analysis: Analysis, f: FunctionFacts, holders: Holders) -> set[str]:
    """Fields a function sets non-None on a result it holds (on the scheduler side): one it got from
    the worker, or one handed to it (the output processor's ``result.f = ...`` before its read);
    each read is then checked only on the ways that pass no such write."""
    return {w.attrs[0] for w in f.writes
            if w.root in holders and len(w.attrs) == 1 and w.attrs[0] in analysis.fields and not isinstance(w.value, NoneValue)}
