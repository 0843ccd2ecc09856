"""Reads of an attribute that the owner class does not declare: ``batch_result.next_draft_inptu``.

A field removed or misspelt on the consumer's side raises AttributeError at run time; the reads pass
skips such chains (they are not fields), so this pass reports them with the consumer's site and the
closest declared name. Declared: the dataclass's fields, the members (methods, properties, class
attributes) of the owner and its bases, ``self.<x> = ...`` in the owner's own methods, and any
attribute a scheduler-side function writes on a result (``batch_result.future_indices = ...``)."""

from __future__ import annotations

import difflib
import re
from dataclasses import dataclass

from spectrace.contracts.analysis import Analysis
from spectrace.contracts.facts import FunctionFacts
from spectrace.contracts.holders import Holders
from spectrace.contracts.records import UndeclaredRead, stable_id
from spectrace.sides import SCHEDULER


def class_members(symbols, class_qn: str) -> set[str]:
    """Methods, properties, class attributes and ``self.<x> = ...`` of a class and its bases."""
    project = symbols.project
    names: set[str] = set()
    for c in symbols.mro(class_qn) or [class_qn]:
        info = project.cls(c)
        if info is None:
            continue
        names |= set(info.methods) | set(info.annotations) | set(info.assigns)
        rel = symbols.file_of_module(c.rsplit(".", 1)[0])
        if rel:
            lines = symbols.facts.text(rel).splitlines()[info.line - 1: info.end]
            names |= set(re.findall(r"\bself\.([A-Za-z_]\w*)\s*(?::[^=\n]*)?=(?!=)", "\n".join(lines)))
    return names


def owner_members(analysis: Analysis) -> set[str]:
    module = analysis.symbols.module_of_file(analysis.owner.file)
    return set(analysis.fields) | class_members(analysis.symbols, f"{module}.{analysis.owner_name}")


@dataclass(frozen=True)
class _Candidate:
    """A read through a holder of an attribute that is not a field, before the members are known."""
    attribute: str
    file: str
    line: int
    consumer: str
    shape: str
    holder: str
    why: str  # how the holder comes to hold the owner


class UndeclaredFinder:
    def __init__(self, analysis: Analysis):
        self.analysis = analysis
        self.candidates: list[_Candidate] = []
        self.written: set[str] = set()
        self.worker_written: set[str] = set()

    def scan(self, rel: str, side: str, f: FunctionFacts, holders: Holders) -> None:
        fields = self.analysis.fields
        names = {w.attrs[0] for w in f.writes if w.root in holders and w.attrs}
        if side == SCHEDULER:  # the scheduler's own bookkeeping on a result
            self.written |= names
        else:  # a worker's marker (a patch's `result.spec_disabled = True`): declared by that write
            self.worker_written |= names
        for r in f.reads:
            if r.root in holders and r.attrs and r.attrs[0] not in fields and not r.attrs[0].startswith("__"):
                self.candidates.append(_Candidate(r.attrs[0], rel, r.line, f.qualname, r.shape, r.root,
                                                  holders.why[r.root]))

    def find(self) -> list[UndeclaredRead]:
        a = self.analysis
        declared = owner_members(a) | self.written
        others: dict[str, set[str]] = {}  # the other classes an annotation names (Union[Owner, Other])
        out, seen = [], set()
        for c in sorted(self.candidates, key=lambda c: (c.file, c.line)):
            why = c.why
            if why not in others:
                ann = why.split("annotated ", 1)[1] if "annotated " in why else ""
                names = {n for n in re.findall(r"[A-Za-z_]\w*", ann) if n[:1].isupper() and n != a.owner_name}
                others[why] = set().union(*[class_members(a.symbols, qn) for n in names
                                            for qn in a.symbols.find_class(n)])
            if c.attribute in declared or c.attribute in others[why] or (c.file, c.line, c.attribute) in seen:
                continue
            seen.add((c.file, c.line, c.attribute))
            # set only by a worker's write: no failure, but a removed field's reads stay visible
            by_write = c.attribute in self.worker_written
            close = difflib.get_close_matches(c.attribute, sorted(a.fields), n=1, cutoff=0.75)
            hint = f" (a typo of {close[0]}?)" if close else ""
            out.append(UndeclaredRead(
                attribute=c.attribute, file=c.file, line=c.line, consumer=c.consumer, shape=c.shape,
                holder=c.holder, id="A-" + stable_id(c.attribute, c.consumer, re.sub(r"\s+", "", c.shape)),
                owner=a.owner_name, suggestion=close[0] if close else "", declared_by_write=by_write,
                message=(f"{c.consumer} reads `{c.holder}.{c.attribute}` ({c.file}:{c.line}), "
                         f"an attribute no class on its path declares: {a.owner_name} has no field, property "
                         f"or method {c.attribute}{hint}"),
            ))
        return out


def failing(undeclared: list[UndeclaredRead]) -> list[UndeclaredRead]:
    """The undeclared reads that fail a check (not those a worker-side write declares)."""
    return [u for u in undeclared if not u.declared_by_write]
