"""Verify the catalog against a source tree.

``check_catalog(source, catalog=None) -> CheckReport`` is the one entry point (the CLI, the pytest
plugin and the patch engine call it). For each catalog contract it finds the extracted read with
the same owner, field, consumer (``Class.method``; a consumer whose class was renamed or turned from
a mixin into a composed object is matched by method name and reported as moved) and attribute
path, then decides:

- ``present``: the statement is there, classified as the catalog says (unconditional or guarded),
  under a path condition that still contains every conjunct the catalog names;
- ``moved``: as ``present``, but at another line than the catalog's recorded site for this version,
  or in a renamed consumer (``old`` and ``new`` sites are both given) — still holds;
- ``guarded``: an unconditional read is now guarded (the scheduler no longer relies on it) — broke;
- ``unguarded``: a guarded read lost its guard — broke;
- ``condition-changed``: the read is there but its path condition lost a conjunct — broke;
- ``gone``: no such read any more — broke;
- ``not-applicable``: the catalog does not expect the contract on this version and it is absent.

Any violation the extraction finds (a worker path that leaves a field unset which the scheduler
reads unconditionally) fails the check too. ``CheckReport.exit_code``: 0 all hold, 1 otherwise.
"""

from __future__ import annotations

import re
from dataclasses import asdict, dataclass, field

from spectrace.contracts import conditions as C
from spectrace.contracts.catalog import CatalogContract, load_catalog
from spectrace.contracts.extract import Extraction, extract
from spectrace.source import SglangSource

HOLDING = {"present", "moved", "not-applicable"}


@dataclass
class ContractResult:
    id: str
    status: str
    ok: bool
    message: str
    field: str
    consumer: str
    shape: str
    expected_condition: str
    found: dict | None = None  # {"file", "line", "consumer", "shape", "path_condition", "guards", "read_id"}
    old_site: str | None = None  # the catalog's recorded site for this version, when it moved
    rationale: str = ""


@dataclass
class CheckReport:
    version: str
    source: str
    results: list = field(default_factory=list)
    violations: list = field(default_factory=list)
    extraction: Extraction | None = None

    @property
    def ok(self) -> bool:
        return all(r.ok for r in self.results) and not self.violations

    @property
    def exit_code(self) -> int:
        return 0 if self.ok else 1

    def to_json(self) -> dict:
        return {
            "version": self.version,
            "source": self.source,
            "ok": self.ok,
            "results": [asdict(r) for r in self.results],
            "violations": self.violations,
        }


def _norm(text: str) -> str:
    return re.sub(r"\s+", "", text or "")


def _conjuncts(text: str) -> set[str]:
    """Receiver-preserving conjuncts of a rendered path condition."""
    if not text.strip():
        return set()
    f = C.parse(text)
    items = f[1] if f[0] == "and" else [f]
    return {repr(i) for i in items}


def _site(read: dict) -> str:
    return f"{read['file']}:{read['line']}"


def check_contract(contract: CatalogContract, extraction: Extraction) -> ContractResult:
    result = _check_contract(contract, extraction)
    expected = contract.versions
    version = extraction.version
    if not result.ok and expected and version not in expected and version != "unknown":
        # a version-scoped contract that does not hold where the catalog does not expect it
        return ContractResult(**{**asdict(result), "status": "not-applicable", "ok": True,
                                 "message": f"not expected on {version} (catalog: {', '.join(expected)}): {result.message}"})
    return result


def _check_contract(contract: CatalogContract, extraction: Extraction) -> ContractResult:
    version = extraction.version
    expected = contract.versions
    applies = not expected or version in expected or version == "unknown"
    reads = [r for r in extraction.reads if r["owner"] == contract.owner and r["field"] == contract.field
             and r["attribute_path"][: len(contract.attribute_path)] == contract.attribute_path]
    method = contract.consumer.rsplit(".", 1)[-1]
    same_consumer = [r for r in reads if r["consumer"] == contract.consumer]
    renamed = [r for r in reads if r["consumer"].rsplit(".", 1)[-1] == method and r["consumer"] != contract.consumer]
    base = dict(id=contract.id, field=contract.field, consumer=contract.consumer, shape=contract.shape,
                expected_condition=contract.path_condition, rationale=contract.rationale)
    pool = same_consumer or renamed
    exact = [r for r in pool if _norm(r["shape"]) == _norm(contract.shape)]
    if not exact:
        if not applies:
            return ContractResult(status="not-applicable", ok=True,
                                  message=f"not expected on {version} (catalog: {', '.join(expected)}) and absent", **base)
        near = pool[0] if pool else None
        msg = f"{contract.consumer} no longer has `{contract.shape}`"
        if near:
            msg += f"; nearest read of {contract.field}: `{near['shape']}` at {_site(near)}"
        return ContractResult(status="gone", ok=False, message=msg, found=_found(near) if near else None, **base)
    want = _conjuncts(contract.path_condition)
    # among several matches prefer one that keeps the catalog's condition and classification
    def score(r):
        return (want <= _conjuncts(r["path_condition"]), (r["kind"] == "unconditional-read") == (contract.kind == "unconditional-read"))
    r = max(exact, key=score)
    found = _found(r)
    if contract.kind == "unconditional-read" and r["guarded"]:
        guards = "; ".join(g["text"] for g in r["guards"]) or "a check"
        return ContractResult(status="guarded", ok=False, found=found,
                              message=f"now guarded at {_site(r)} by {guards}: the scheduler no longer relies on it", **base)
    if contract.kind == "guarded-read" and not r["guarded"]:
        return ContractResult(status="unguarded", ok=False, found=found,
                              message=f"lost its guard at {_site(r)}: the read is unconditional now", **base)
    if not want <= _conjuncts(r["path_condition"]):
        return ContractResult(status="condition-changed", ok=False, found=found,
                              message=f"path condition is now `{r['path_condition']}` (catalog: `{contract.path_condition}`) at {_site(r)}",
                              **base)
    old = contract.sites.get(version)
    if r["consumer"] != contract.consumer:
        return ContractResult(status="moved", ok=True, found=found, old_site=old,
                              message=f"moved to {r['consumer']} at {_site(r)}", **base)
    if old and old != _site(r):
        return ContractResult(status="moved", ok=True, found=found, old_site=old,
                              message=f"moved from {old} to {_site(r)}", **base)
    return ContractResult(status="present", ok=True, found=found, message=f"holds at {_site(r)}", **base)


def _found(r: dict | None) -> dict | None:
    if r is None:
        return None
    return {"file": r["file"], "line": r["line"], "consumer": r["consumer"], "shape": r["shape"],
            "path_condition": r["path_condition"], "guards": r["guards"], "read_id": r["id"], "kind": r["kind"]}


def check_catalog(source: SglangSource | Extraction, catalog: list[CatalogContract] | str | None = None) -> CheckReport:
    """Check every catalog contract against ``source`` (an SglangSource, or an Extraction already made).

    ``catalog``: a list from ``load_catalog``, a path to a catalog directory/file, or None for the
    packaged catalog. Returns a ``CheckReport`` (``.ok``, ``.exit_code``, ``.results``, ``.violations``).
    """
    extraction = source if isinstance(source, Extraction) else extract(source)
    contracts = catalog if isinstance(catalog, list) else load_catalog(catalog)
    report = CheckReport(version=extraction.version, source=extraction.source, extraction=extraction)
    for c in contracts:
        report.results.append(check_contract(c, extraction))
    report.violations = list(extraction.violations)
    return report
