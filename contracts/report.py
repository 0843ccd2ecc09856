"""Renderings of an extraction or a check: text, json, yaml and SARIF 2.1.0."""

from __future__ import annotations

import json
from pathlib import Path

import yaml

from spectrace.contracts.kinds import ReadKind, Status
from spectrace.contracts.records import Extraction
from spectrace.contracts.undeclared import failing
from spectrace.sides import SCHEDULER

SARIF_SCHEMA = "https://json.schemastore.org/sarif-2.1.0.json"
TOOL_URI = "https://github.com/spectrace/spectrace"


def extraction_json(x: Extraction, cache_stats: bool = False) -> dict:
    return x.to_json(cache_stats=cache_stats)


def extraction_text(x: Extraction, verbose: bool = False) -> str:
    lines = [f"{x.source}", f"owner {x.owner} ({x.owner_file}:{x.owner_line}, {len(x.owner_fields)} fields)"]
    attr, poly = next(iter(x.polymorphic.items()), ("worker", None))
    targets = poly.targets if poly is not None else []
    lines.append(f"{attr}: {len(targets)} worker classes")
    for t in targets:
        lines.append(f"  {t.rsplit('.', 1)[-1]:28} when {poly.selection.get(t, '?')}")
    sched = [r for r in x.reads if r.side == SCHEDULER and r.kind != ReadKind.CHECK]
    uncond = [r for r in sched if r.kind == ReadKind.UNCONDITIONAL]
    lines.append(f"\nscheduler-side reads: {len(sched)} ({len(uncond)} unconditional)")
    for r in sched if verbose else uncond:
        guard = "" if not r.guarded else "  [guarded: " + "; ".join(g.text for g in r.guards) + "]"
        cond = f"  when {r.path_condition}" if r.path_condition else ""
        lines.append(f"  {r.file}:{r.line}  {r.consumer}  {'.'.join(r.attribute_path)}{cond}{guard}")
        lines.append(f"      {r.shape}   ({r.id})")
    lines.append(f"\nproducers: {len(x.producers)}")
    for p in x.producers:
        if p.side == "worker":
            lines.append(f"  {p.file}:{p.line}  {p.function}  {p.kind} {', '.join(p.fields)}")
    lines.append(f"\nworker return paths: {len(x.return_paths)}")
    unknowns = getattr(x, "unknowns", [])
    lines.append(f"\nunknown: {len(unknowns)}")
    for u in unknowns:
        lines.append(f"  UNKNOWN {u.id}: {u.message}")
    for u in failing(getattr(x, "undeclared", [])):
        lines.append(f"  UNDECLARED {u.id}: {u.message}")
    lines.append(f"\nviolations: {len(x.violations)}")
    for v in x.violations:
        lines.append(f"  VIOLATION {v.id}: {v.message}")
        lines.append(f"    read:     {v.read.file}:{v.read.line}  {v.read.shape}  when {v.read.path_condition}")
        lines.append(f"    producer: {v.producer.file}:{v.producer.line}  {v.producer.shape}")
        lines.append(f"    worker chosen when: {v.worker_selection}")
    for n in x.notes:
        lines.append(f"note: {n}")
    return "\n".join(lines) + "\n"


SRCROOT = "%SRCROOT%"


def git_root(start: str | Path) -> Path | None:
    """The nearest directory at or above ``start`` holding a ``.git`` entry (dir or file), else None."""
    p = Path(start).resolve()
    for d in (p, *p.parents):
        if (d / ".git").exists():
            return d
    return None


def _sarif_base(root: str | Path) -> tuple[Path, str]:
    """The SARIF base directory and the prefix that makes a python-root-relative path relative to it:
    the git checkout's root when the tree lies in one, else the python root itself."""
    root = Path(root).resolve()
    top = git_root(root)
    if top is None:
        return root, ""
    rel = root.relative_to(top).as_posix()
    return top, "" if rel == "." else rel + "/"


def _loc(file: str, line: int, message: str | None = None, prefix: str = "") -> dict:
    loc = {"physicalLocation": {"artifactLocation": {"uri": prefix + file, "uriBaseId": SRCROOT},
                                "region": {"startLine": max(int(line), 1)}}}
    if message:
        loc["message"] = {"text": message}
    return loc


def sarif(x: Extraction, check=None) -> dict:
    """SARIF 2.1.0: violations and broken catalog contracts as results, both code sites as locations.

    Paths are relative to the git checkout holding the tree (``python/sglang/...``) when there is
    one, else to the directory holding ``sglang/``; ``%SRCROOT%`` names that base.
    """
    from spectrace import __version__

    base, prefix = _sarif_base(x.root)

    def _location(file, line, message=None):
        return _loc(file, line, message, prefix)

    rules = [
        {"id": "spectrace/violation", "name": "WorkerLeavesFieldUnset",
         "shortDescription": {"text": "A worker return path leaves a field unset that the scheduler reads unconditionally"},
         "defaultConfiguration": {"level": "error"}},
        {"id": "spectrace/contract-broken", "name": "CatalogContractBroken",
         "shortDescription": {"text": "A catalog contract no longer holds in this source tree"},
         "defaultConfiguration": {"level": "error"}},
        {"id": "spectrace/unconditional-read", "name": "UnconditionalFieldRead",
         "shortDescription": {"text": "The scheduler reads a result field without a None check"},
         "defaultConfiguration": {"level": "note"}},
        {"id": "spectrace/unknown", "name": "ObligationUnknown",
         "shortDescription": {"text": "A worker return path could not be followed far enough to decide a scheduler read's obligation"},
         "defaultConfiguration": {"level": "warning"}},
        {"id": "spectrace/undeclared-attribute", "name": "UndeclaredAttributeRead",
         "shortDescription": {"text": "A consumer reads an attribute that no class on its path declares"},
         "defaultConfiguration": {"level": "error"}},
    ]
    results = []
    for v in x.violations:
        results.append({
            "ruleId": "spectrace/violation", "ruleIndex": 0, "level": "error",
            "message": {"text": v.message},
            "locations": [_location(v.read.file, v.read.line, "scheduler read")],
            "relatedLocations": [dict(_location(v.producer.file, v.producer.line, "worker return path"), id=1)],
            "partialFingerprints": {"spectraceId": v.id},
        })
    strict = bool(check is not None and check.strict)
    for u in getattr(x, "unknowns", []):
        results.append({
            "ruleId": "spectrace/unknown", "ruleIndex": 3, "level": "error" if strict else "warning",
            "message": {"text": u.message},
            "locations": [_location(u.read.file, u.read.line, "scheduler read")],
            "relatedLocations": [dict(_location(u.producer.file, u.producer.line, "worker return path"), id=1)],
            "partialFingerprints": {"spectraceId": u.id},
        })
    for u in failing(getattr(x, "undeclared", [])):
        results.append({
            "ruleId": "spectrace/undeclared-attribute", "ruleIndex": 4, "level": "error",
            "message": {"text": u.message},
            "locations": [_location(u.file, u.line, "read")],
            "partialFingerprints": {"spectraceId": u.id},
        })
    if check is not None:
        for r in check.results:
            if r.ok:
                continue
            results.append({
                "ruleId": "spectrace/contract-broken", "ruleIndex": 1, "level": "error",
                "message": {"text": f"{r.id} {r.status}: {r.message}"},
                "locations": [_location(r.found.file if r.found else x.owner_file,
                                        r.found.line if r.found else x.owner_line)],
                "partialFingerprints": {"spectraceId": r.id},
            })
    for r in x.reads:
        if r.side == SCHEDULER and r.kind == ReadKind.UNCONDITIONAL:
            results.append({
                "ruleId": "spectrace/unconditional-read", "ruleIndex": 2, "level": "note",
                "message": {"text": f"{r.consumer} reads {r.owner}.{'.'.join(r.attribute_path)} without a None check"
                                    + (f" when {r.path_condition}" if r.path_condition else "")},
                "locations": [_location(r.file, r.line)],
                "partialFingerprints": {"spectraceId": r.id},
            })
    return {
        "$schema": SARIF_SCHEMA,
        "version": "2.1.0",
        "runs": [{
            "tool": {"driver": {"name": "spectrace", "version": __version__, "semanticVersion": __version__,
                                "informationUri": TOOL_URI, "rules": rules}},
            "originalUriBaseIds": {SRCROOT: {"uri": base.as_uri() + "/"}},
            "results": results,
        }],
    }


def render_extraction(x: Extraction, fmt: str, check=None, cache_stats: bool = False) -> str:
    if fmt == "json":
        return json.dumps(extraction_json(x, cache_stats), indent=2) + "\n"
    if fmt == "yaml":
        return yaml.safe_dump(extraction_json(x, cache_stats), sort_keys=False, width=120)
    if fmt == "sarif":
        return json.dumps(sarif(x, check), indent=2) + "\n"
    return extraction_text(x)


def check_text(report) -> str:
    lines = [f"{report.source}"]
    width = max((len(r.id) for r in report.results), default=10)

    def row(r):
        mark = "ok  " if r.ok else "FAIL"
        lines.append(f"{mark} {r.id:{width}}  {r.status:17}  {r.message}")
        if not r.ok and r.found:
            lines.append(f"       catalog: {r.consumer}: `{r.shape}` when {r.expected_condition or 'always'}")
            lines.append(f"       found:   {r.found.file}:{r.found.line} `{r.found.shape}` when {r.found.path_condition or 'always'}")
        if r.old_site:
            lines.append(f"       old site {r.old_site}")

    applicable = [r for r in report.results if r.status != Status.NOT_APPLICABLE]
    absent = [r for r in report.results if r.status == Status.NOT_APPLICABLE]
    for r in applicable:
        row(r)
    for v in report.violations:
        lines.append(f"FAIL VIOLATION {v.id}: {v.message}")
        lines.append(f"       scheduler read:     {v.read.file}:{v.read.line}  {v.read.shape}")
        lines.append(f"       worker return path: {v.producer.file}:{v.producer.line}  {v.producer.shape}")
    for u in getattr(report, "undeclared", []):
        lines.append(f"FAIL UNDECLARED {u.id}: {u.message}")
    for u in getattr(report, "unknowns", []):
        mark = "FAIL" if report.strict else "??  "
        lines.append(f"{mark} UNKNOWN {u.id}: {u.message}")
        lines.append(f"       scheduler read:     {u.read.file}:{u.read.line}  {u.read.shape}")
        lines.append(f"       worker return path: {u.producer.file}:{u.producer.line}  {u.producer.shape}")
    if absent:
        lines.append(f"not applicable to {report.version}:")
        for r in absent:
            lines.append(f"  -- {r.id:{width}}  {r.message}")
    n = report.counts
    lines.append(f"{n['hold']} contracts hold, {n['broken']} broken, {n['violations']} violations, "
                 f"{n['unknown'] + n['unknown_obligations']} unknown, "
                 + (f"{n['undeclared']} undeclared attribute reads, " if n.get("undeclared") else "")
                 + f"{n['not_applicable']} not applicable: "
                 f"{'OK' if report.ok else 'BROKEN'}")
    return "\n".join(lines) + "\n"
