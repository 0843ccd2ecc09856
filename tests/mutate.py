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
