"""Where a vanished contract went: the statements that took over its job.

A catalog contract such as ``batch.seq_lens = batch_result.next_draft_input.new_seq_lens`` can
disappear from a newer SGLang without the scheduler ceasing to depend on the worker: in 0.5.17 the
batch lengths come from ``batch_result.new_seq_lens`` (guarded) and, on the overlap path, from the
future map's buffer, which the worker fills through an ``on_publish`` callback. Such successors are
out of reach of field reads of the owner dataclass, so the checker names them instead of reporting
the contract silently absent.

Found over the tracer's index (ast summaries), with no names of SGLang's written in:

* assignments to the contract's target attribute (``<x>.seq_lens = ...``) anywhere on the scheduler
  side, with what they assign;
* worker-side calls of a callable *parameter* (a callback handed in by the caller) at a line that
  reads the contract's last attribute (``on_publish(batch_output.new_seq_lens)``).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from spectrace.contracts.kinds import SuccessorKind
from spectrace.sides import side_of
from spectrace.tracer.index import ir_text

ASSIGNMENT = re.compile(r"^\s*[\w.]+\.(\w+)\s*=\s*(.+)$")


@dataclass(frozen=True)
class Successor:
    """A statement that now does what a vanished contract's statement did."""
    file: str
    line: int
    function: str
    text: str
    kind: SuccessorKind


def assigned_attribute(shape: str) -> str | None:
    """``batch.seq_lens = batch_result.x.y`` -> ``seq_lens``; None for a statement that assigns nothing."""
    m = ASSIGNMENT.match(shape or "")
    return m.group(1) if m else None


def _reads_attribute(ir, name: str) -> bool:
    """Does the expression read ``<something>.name`` (not merely a name containing it)?"""
    if not isinstance(ir, tuple) or not ir:
        return False
    if ir[0] == "a" and ir[2] == name:
        return True
    return any(_reads_attribute(x, name) for x in ir[1:] if isinstance(x, tuple))


def find_successors(project, shape: str, attribute_path: list[str], exclude_shape: str = "") -> list[Successor]:
    """Statements that now do what ``shape`` did.

    ``kind``: ``field`` (the same target attribute, set from a read of ``.<last>`` of something
    else, e.g. straight off the result), ``store`` (set from a store named after it, such as a
    buffer ``<last>_buf``: no field read at all) or ``callback`` (the worker hands ``.<last>`` to a
    function it was given). Assignments of the target from unrelated values are not successors.
    """
    target = assigned_attribute(shape)
    last = attribute_path[-1] if attribute_path else ""
    if not target or not last:
        return []
    found = []
    # every kind of successor names `last` (a read of it, a store named after it): a text scan,
    # cached with the tree's, leaves unparsed the modules that cannot hold one
    word = last.encode()
    holding = set(project.cached_scan(f"modules-holding-{last}", lambda: project.texts.grep(re.escape(word), word)))
    for module in sorted(project.files):
        side = side_of(module)
        if side == "other" or module not in holding:
            continue
        summary = project.module(module)
        for qn, f in summary.functions.items():
            if side == "scheduler":
                for tgt, value, _annot, line in f.assigns:
                    if not (tgt[0] == "a" and tgt[2] == target and tgt[1][0] == "n" and tgt[1][1] != "self"):
                        continue
                    text = f"{ir_text(tgt)} = {ir_text(value)}"
                    if exclude_shape and re.sub(r"\s+", "", text) == re.sub(r"\s+", "", exclude_shape):
                        continue
                    if _reads_attribute(value, last):
                        kind = SuccessorKind.FIELD
                    elif last in ir_text(value):
                        kind = SuccessorKind.STORE
                    else:
                        continue
                    found.append(Successor(file=summary.path, line=line, function=qn, text=text, kind=kind))
            elif side == "worker" and last in f.reads:
                params = {p for p, _a in f.params}
                read_lines = set(f.reads[last])
                for line, _col, callee, _kw in f.calls:
                    if callee[0] == "n" and callee[1] in params and line in read_lines:
                        found.append(Successor(file=summary.path, line=line, function=qn,
                                               text=f"{callee[1]}(... .{last} ...)", kind=SuccessorKind.CALLBACK))
    return found


def describe(successors: list[Successor], target: str, last: str) -> str:
    """One sentence for a report line: the scheduler-side setters, then the callbacks, counted."""
    if not successors:
        return ""
    setters = [s for s in successors if s.kind != SuccessorKind.CALLBACK]
    callbacks = [s for s in successors if s.kind == SuccessorKind.CALLBACK]
    parts = [f"`{s.text}` at {s.file}:{s.line} ({s.function})" for s in setters[:4]]
    if len(setters) > 4:
        parts.append(f"{len(setters) - 4} more")
    text = f"out of reach of field reads: `{target}` is now set by " + ("; ".join(parts) or "no scheduler statement")
    if callbacks:
        names = sorted({s.text.split("(", 1)[0] for s in callbacks})
        sites = ", ".join(f"{s.file}:{s.line}" for s in callbacks[:3])
        more = f" and {len(callbacks) - 3} more" if len(callbacks) > 3 else ""
        text += (f"; workers hand .{last} to a callback they were given ({', '.join(names)}) at "
                 f"{sites}{more}")
    return text
