"""Helpers of the mutation tests: edit a copy of a real SGLang release, check its contracts."""

from __future__ import annotations

from pathlib import Path

from spectrace.contracts.catalog import load_catalog
from spectrace.contracts.check import check_catalog
from spectrace.source import from_path

SUBDIRS = ("sglang/srt/managers", "sglang/srt/speculative")
SCHED = "sglang/srt/managers/scheduler.py"
UTILS = "sglang/srt/managers/utils.py"
EAGLE2 = "sglang/srt/speculative/eagle_worker_v2.py"


def edit(root: Path, rel: str, old: str, new: str) -> None:
    """Replace the one occurrence of ``old`` in ``root/rel`` (an anchor that is not unique fails)."""
    p = root / rel
    text = p.read_text()
    assert text.count(old) == 1, f"anchor not unique in {rel}: {old!r}"
    p.write_text(text.replace(old, new))


def check(root: Path, catalog=None, strict: bool = False):
    return check_catalog(from_path(root), load_catalog() if catalog is None else catalog, strict=strict)


def result(report, cid: str):
    return next(r for r in report.results if r.id == cid)


def insert_after(root: Path, rel: str, anchor: str, line: str) -> int:
    """Insert ``line`` (no indentation of its own) after the one line of ``root/rel`` whose text is
    ``anchor``, indented as it; return the new line's number."""
    p = root / rel
    lines = p.read_text().splitlines(keepends=True)
    hits = [i for i, ln in enumerate(lines) if ln.rstrip("\n") == anchor]
    assert len(hits) == 1, f"anchor not unique in {rel}: {anchor!r}"
    i = hits[0]
    indent = anchor[: len(anchor) - len(anchor.lstrip())]
    lines.insert(i + 1, indent + line + "\n")
    p.write_text("".join(lines))
    return i + 2


def line_of(root: Path, rel: str, text: str) -> int:
    """The number of the one line of ``root/rel`` that is ``text``."""
    lines = (root / rel).read_text().splitlines()
    assert lines.count(text) == 1, f"not one line {text!r} in {rel}"
    return lines.index(text) + 1


def function_text(root: Path, rel: str, header: str) -> str:
    """A method's source, from ``header`` to the next method of the class."""
    text = (root / rel).read_text()
    start = text.index(header)
    return text[start:text.index("\n    def ", start + len(header))]
