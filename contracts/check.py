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
- ``relaxed``: an unconditional read is now guarded (the scheduler no longer relies on it) — holds,
  reported as drift;
- ``violated``: the read is there but a worker return path leaves a prefix of its attribute path
  None (the extraction's violation) — broke;
- ``unknown``: a worker path could not be followed far enough to decide — holds unless ``strict``;
- ``unguarded``: a guarded read lost its guard — broke;
- ``condition-changed``: the read is there but its path condition lost a conjunct — broke;
- ``gone``: no such read any more — broke;
- ``not-applicable``: the catalog does not expect the contract on this version and it is absent.

A ``producer-sets`` contract (a producer must set fields on every return path) is decided from the
extraction's return paths of that producer: ``present`` when every path sets every field the
catalog names for this version, ``broken`` (with the producer's return site) when one does not,
``gone`` when the producer is missing, or ``not-applicable`` when the catalog marks it
``only_if_producer_exists`` (a contract a patch adds: the release itself has no producer).

Any violation the extraction finds (a worker path that leaves a field unset which the scheduler
reads unconditionally) fails the check too. ``CheckReport.exit_code``: 0 all hold, 1 otherwise.
"""

from __future__ import annotations

import re
from dataclasses import asdict, dataclass, field, replace

from spectrace.contracts import conditions as C
from spectrace.contracts import result_cache
from spectrace.contracts.catalog import CatalogContract, load_catalog
from spectrace.contracts.cache_warnings import warn_cache_unusable
from spectrace.contracts.extract import extract, follow_producers, follow_relay, roles_of
from spectrace.contracts.kinds import ContractKind, ReadKind, SiteKind, Status, plain
from spectrace.contracts.records import (SCHEMA_VERSION, Extraction, FieldRead, ProducerFunction, ProducerReturn,
                                         ReadSite, ReturnPath, Site, UndeclaredRead, Unknown, Violation)
from spectrace.contracts.successors import Successor
from spectrace.contracts.undeclared import failing
from spectrace.source import SglangSource



@dataclass
class ContractResult:
    id: str
    status: Status
    ok: bool
    message: str
    field: str
    consumer: str
    shape: str
    expected_condition: str
    found: Site | None = None
    old_site: str | None = None  # the catalog's recorded site for this version, when it moved
    rationale: str = ""
    successors: list[Successor] = field(default_factory=list)  # where a vanished statement's job went

    def to_json(self) -> dict:
        data = plain(asdict(self))
        data["found"] = self.found.to_json() if self.found is not None else None
        return data


@dataclass
class CheckReport:
    version: str
    source: str
    results: list[ContractResult] = field(default_factory=list)
    violations: list[Violation] = field(default_factory=list)
    extraction: Extraction | None = None
    unknowns: list[Unknown] = field(default_factory=list)  # obligations not decided (unresolved producer calls)
    strict: bool = False  # an unknown fails the check
    undeclared: list[UndeclaredRead] = field(default_factory=list)  # reads of attributes the owner does not declare

    @property
    def ok(self) -> bool:
        return (all(r.ok for r in self.results) and not self.violations and not self.undeclared
                and not (self.strict and self.unknowns))

    @property
    def counts(self) -> dict:
        """Contracts that hold, that broke (incl. violated), not applicable, unknown; and violations."""
        by = [r.status for r in self.results]
        return {
            "hold": sum(r.ok and r.status not in (Status.NOT_APPLICABLE, Status.UNKNOWN) for r in self.results),
            "broken": sum(not r.ok and r.status != Status.UNKNOWN for r in self.results),
            "not_applicable": by.count(Status.NOT_APPLICABLE),
            "unknown": by.count(Status.UNKNOWN),
            "violations": len(self.violations),
            "unknown_obligations": len(self.unknowns),
            "undeclared": len(self.undeclared),
        }

    @property
    def exit_code(self) -> int:
        return 0 if self.ok else 1

    def to_json(self) -> dict:
        x = self.extraction
        return {
            "schema_version": SCHEMA_VERSION,
            "version": self.version,
            "source": x.portable_source if x is not None else self.source,
            "root": x.portable_root if x is not None else "",
            "ok": self.ok,
            "results": [r.to_json() for r in self.results],
            "violations": plain([asdict(v) for v in self.violations]),
            "unknowns": plain([asdict(u) for u in self.unknowns]),
            "undeclared": [asdict(u) for u in self.undeclared],
            "strict": self.strict,
            "counts": self.counts,
        }


def _norm(text: str) -> str:
    return re.sub(r"\s+", "", text or "")


def _conjuncts(text: str) -> set[str]:
    """Receiver-preserving conjuncts of a rendered path condition."""
    if not text.strip():
        return set()
    f = C.parse(text)
    items = f.parts if isinstance(f, C.And) else (f,)
    return {repr(i) for i in items}


def _method(consumer: str) -> str:
    return consumer.rsplit(".", 1)[-1] if consumer else ""


def _read_condition(r: FieldRead) -> str:
    """A read's interprocedural path condition: the call into its helper's, then its own."""
    parts = [c for c in (r.call_condition, r.path_condition) if c]
    return " and ".join(f"({c})" if len(parts) > 1 else c for c in parts)


def _read_conjuncts(r: FieldRead) -> set[str]:
    return _conjuncts(r.call_condition) | _conjuncts(r.path_condition)


def _site(read: FieldRead) -> str:
    return f"{read.file}:{read.line}"


def check_contract(contract: CatalogContract, extraction: Extraction, projects: dict | None = None) -> ContractResult:
    """``projects``: a dict shared by the calls of one check, so the tree's index is opened once."""
    result = _check_contract(contract, extraction, {} if projects is None else projects)
    expected = contract.versions
    version = extraction.version
    if not result.ok and expected and version not in expected and version != "unknown":
        # a version-scoped contract that does not hold where the catalog does not expect it
        return replace(result, status=Status.NOT_APPLICABLE, ok=True,
                       message=f"not expected on {version} (catalog: {', '.join(expected)}): {result.message}")
    return result


def _check_producer(contract: CatalogContract, extraction: Extraction, strict: bool = False) -> ContractResult:
    version = extraction.version
    base = dict(id=contract.id, field=contract.field, consumer=contract.producer, shape=contract.shape,
                expected_condition="", rationale=contract.rationale)
    if contract.owner != extraction.owner:
        return ContractResult(status=Status.GONE, ok=False, **base,
                              message=f"the extraction follows {extraction.owner}, not {contract.owner}")
    found = extraction.producer_paths.get(contract.producer)
    if found is None:  # an Extraction made without this producer (check_catalog asks for it)
        return ContractResult(status=Status.GONE, ok=False, **base,
                              message=f"the extraction did not follow {contract.producer}: pass the source tree to check_catalog")
    if not found:
        if contract.only_if_producer_exists:
            return ContractResult(status=Status.NOT_APPLICABLE, ok=True, **base,
                                  message=f"{contract.producer} is not in this tree (it applies where a patch adds it)")
        return ContractResult(status=Status.GONE, ok=False, **base, message=f"{contract.producer} is not in this tree")
    wanted = contract.fields_for(version)
    problems, unknowns = [], []
    for func in found:
        if not func.paths:
            problems.append((f"{contract.producer} ({func.file}:{func.line}) has no return that yields a {contract.owner}",
                             _definition_found(contract, func)))
        for path in func.paths:
            site = f"{path.file}:{path.line}"
            if path.sets is None:
                unknowns.append((f"{contract.producer} returns at {site} (`{path.shape}`) a value not followed: {path.unresolved}",
                                 _return_found(contract, path)))
                continue
            missing = [f for f in wanted if f not in path.sets]
            if missing:
                via = f" via {' -> '.join(path.via)}" if path.via else ""
                when = f" when {path.path_condition}" if path.path_condition else ""
                problems.append((f"{contract.producer} returns at {site} (`{path.shape}`){via}{when} without setting "
                                 + ", ".join(missing), _return_found(contract, path)))
    if problems:
        message, at = problems[0]
        if len(problems) > 1:
            message += f" (+{len(problems) - 1} more)"
        return ContractResult(status=Status.BROKEN, ok=False, message=message, found=at, **base)
    if unknowns:
        message, at = unknowns[0]
        if len(unknowns) > 1:
            message += f" (+{len(unknowns) - 1} more)"
        return ContractResult(status=Status.UNKNOWN, ok=not strict, message=message, found=at, **base)
    sites = ", ".join(f"{p.file}:{p.line}" for func in found for p in func.paths)
    first = found[0].paths[0]
    return ContractResult(status=Status.PRESENT, ok=True, found=_return_found(contract, first), **base,
                          message=f"every return of {contract.producer} sets {', '.join(wanted)} ({sites})")


def _return_found(contract: CatalogContract, path: ReturnPath) -> ProducerReturn:
    return ProducerReturn(file=path.file, line=path.line, consumer=contract.producer, shape=path.shape,
                          path_condition=path.path_condition, kind=SiteKind.RETURN, sets=path.sets)


def _definition_found(contract: CatalogContract, func: ProducerFunction) -> ProducerReturn:
    """A producer with no return that yields the owner: its ``def`` line."""
    return ProducerReturn(file=func.file, line=func.line, consumer=contract.producer,
                          shape=f"def {contract.producer.split('.')[1]}", path_condition="", kind=SiteKind.RETURN)


_CALL_SHAPE = re.compile(r"^\s*([A-Za-z_]\w*)\((.*)\)\s*$")


def _check_relay(contract: CatalogContract, extraction: Extraction, callback: str) -> ContractResult:
    """A ``relation`` whose shape is a call ``cb(x.field)``: the consumer passes ``cb`` to the worker
    method and every return path of a worker method taking ``cb`` calls it with the field (relays.py),
    set non-None on the result that path returns."""
    method = contract.runtime.get("producer") or roles_of(extraction).worker_method
    base = dict(id=contract.id, field=contract.field, consumer=contract.consumer, shape=contract.shape,
                expected_condition=contract.path_condition, rationale=contract.rationale)
    relay = follow_relay(extraction, method, callback, contract.field, contract.consumer)
    if not relay.wiring:
        return ContractResult(status=Status.GONE, ok=False, **base,
                              message=f"{contract.consumer} no longer passes {callback} to the worker's {method}")
    wire = relay.wiring[0]
    if not relay.workers:
        return ContractResult(status=Status.GONE, ok=False, **base,
                              message=f"no worker's {method} takes {callback} (passed at {wire.file}:{wire.line})")
    site = Site(file=wire.file, line=wire.line, consumer=contract.consumer, shape=wire.text,
                path_condition="", kind=SiteKind.RELAY)
    for w in relay.workers:
        for p in w.paths:
            if not p.relayed:
                cls = w.worker.rsplit(".", 1)[-1]
                when = f" when {p.branch}" if p.branch else ""
                return ContractResult(
                    status=Status.VIOLATED, ok=False, **base,
                    found=Site(file=p.file, line=p.line, consumer=f"{cls}.{method}", shape=p.shape,
                               path_condition=p.branch, kind=SiteKind.RETURN),
                    message=(f"{cls}.{method} returns at {p.file}:{p.line} (`{p.shape}`){when} without calling "
                             f"{callback}({contract.field}): {contract.consumer} relays {contract.field} through it "
                             f"({wire.file}:{wire.line})"))
    # what the callback gets must be set: the return path's own result carries the field
    undecided = []
    for w in relay.workers:
        for p in w.paths:
            cls = w.worker.rsplit(".", 1)[-1]
            for rp in extraction.return_paths:
                if (rp.worker, rp.file, rp.line) != (w.worker, p.file, p.line):
                    continue
                at = Site(file=p.file, line=p.line, consumer=f"{cls}.{method}", shape=p.shape,
                          path_condition=rp.path_condition, kind=SiteKind.RETURN)
                when = f" when {rp.branch}" if rp.branch else ""
                if rp.sets is None:
                    undecided.append((at, f"whether {cls}.{method} sets {contract.field} on its return at {p.file}:"
                                          f"{p.line} (`{p.shape}`), which {callback} relays, is unknown: "
                                          f"{rp.unresolved}"))
                elif contract.field not in rp.sets:
                    return ContractResult(
                        status=Status.VIOLATED, ok=False, **base, found=at,
                        message=(f"{cls}.{method} returns at {p.file}:{p.line} (`{p.shape}`){when} with "
                                 f"{contract.field} unset, so {callback}({contract.field}) relays None: "
                                 f"{contract.consumer} takes {contract.field} through it ({wire.file}:{wire.line})"))
    if undecided:
        at, message = undecided[0]
        more = f" (+{len(undecided) - 1} more)" if len(undecided) > 1 else ""
        return ContractResult(status=Status.UNKNOWN, ok=True, found=at, message=message + more, **base)
    n = sum(len(w.paths) for w in relay.workers)
    return ContractResult(status=Status.PRESENT, ok=True, found=site, **base,
                          message=(f"{contract.consumer} passes {callback} at {wire.file}:{wire.line}; all {n} return "
                                   f"paths of {len(relay.workers)} workers call it with {contract.field}, set"))


def _check_contract(contract: CatalogContract, extraction: Extraction, projects: dict) -> ContractResult:
    if contract.kind == ContractKind.PRODUCER_SETS:
        return _check_producer(contract, extraction)
    call = _CALL_SHAPE.match(contract.shape) if contract.kind == ContractKind.RELATION else None
    if call:
        return _check_relay(contract, extraction, call.group(1))
    version = extraction.version
    expected = contract.versions
    applies = not expected or version in expected or version == "unknown"
    reads = [r for r in extraction.reads if r.owner == contract.owner and r.field == contract.field
             and r.attribute_path[: len(contract.attribute_path)] == contract.attribute_path]
    method = contract.consumer.rsplit(".", 1)[-1]
    # the consumer itself, or a helper it passes the result to (reached from it, under the call's condition)
    same_consumer = [r for r in reads if contract.consumer in (r.consumer, r.caller)]
    renamed = [r for r in reads if method in (_method(r.consumer), _method(r.caller or ""))
               and contract.consumer not in (r.consumer, r.caller)]
    base = dict(id=contract.id, field=contract.field, consumer=contract.consumer, shape=contract.shape,
                expected_condition=contract.path_condition, rationale=contract.rationale)
    pool = same_consumer or renamed
    exact = [r for r in pool if _norm(r.shape) == _norm(contract.shape)]
    want_conds = _conjuncts(contract.path_condition)
    if not any(want_conds <= _read_conjuncts(r) for r in exact):
        # the same read written differently (parentheses, a renamed local): identity is the
        # attribute path, the consumer and the path condition, not the statement's text (the
        # same text elsewhere in the consumer, under another condition, is another read)
        same = [r for r in pool if r.attribute_path == contract.attribute_path and r.kind != ReadKind.CHECK
                and want_conds <= _read_conjuncts(r)]
        exact = same if len(same) == 1 else exact
    if not exact:
        successors, moved_on = _successors(contract, extraction, projects)
        if not applies:
            return ContractResult(status=Status.NOT_APPLICABLE, ok=True, successors=successors,
                                  message=f"not expected on {version} (catalog: {', '.join(expected)}) and absent"
                                  + (f"; {moved_on}" if moved_on else ""), **base)
        near = pool[0] if pool else None
        msg = _drift_message(contract, extraction)
        if near:
            msg += f"; nearest read of {contract.field}: `{near.shape}` at {_site(near)}"
        if moved_on:
            msg += f"; {moved_on}"
        return ContractResult(status=Status.GONE, ok=False, message=msg, found=_found(near) if near else None,
                              successors=successors, **base)
    want = _conjuncts(contract.path_condition)
    # among several matches prefer one that keeps the catalog's condition and classification
    def score(r):
        return (want <= _read_conjuncts(r), (r.kind == ReadKind.UNCONDITIONAL) == (contract.kind == ContractKind.UNCONDITIONAL_READ))
    r = max(exact, key=score)
    found = _found(r)
    if contract.kind == ContractKind.UNCONDITIONAL_READ and r.guarded:
        # a None check added before the consumer only makes the scheduler safer: drift, not a break
        guards = "; ".join(g.text for g in r.guards) or "a check"
        return ContractResult(status=Status.RELAXED, ok=True, found=found,
                              message=f"now guarded at {_site(r)} by {guards}: the scheduler no longer relies on it "
                                      "(drift: the catalog entry can be retired)", **base)
    if contract.kind == ContractKind.GUARDED_READ and not r.guarded:
        return ContractResult(status=Status.UNGUARDED, ok=False, found=found,
                              message=f"lost its guard at {_site(r)}: the read is unconditional now", **base)
    if not want <= _read_conjuncts(r):
        typo = _typo(contract, extraction)
        if typo:  # the read under the catalog's condition now names a misspelt attribute
            return ContractResult(status=Status.GONE, ok=False, found=found, **base,
                                  message=f"{typo[0].message}; the same statement under another condition at {_site(r)}")
        return ContractResult(status=Status.CONDITION_CHANGED, ok=False, found=found,
                              message=f"path condition is now `{_read_condition(r)}` (catalog: `{contract.path_condition}`) at {_site(r)}",
                              **base)
    old = contract.sites.get(version)
    if r.consumer != contract.consumer:
        called = f" (called from {r.caller} at {r.caller_site})" if r.caller else ""
        return ContractResult(status=Status.MOVED, ok=True, found=found, old_site=old,
                              message=f"moved to {r.consumer} at {_site(r)}{called}", **base)
    if old and old != _site(r):
        return ContractResult(status=Status.MOVED, ok=True, found=found, old_site=old,
                              message=f"moved from {old} to {_site(r)}", **base)
    return ContractResult(status=Status.PRESENT, ok=True, found=found, message=f"holds at {_site(r)}", **base)


def _drift_message(contract: CatalogContract, extraction: Extraction) -> str:
    """Why a read contract's statement is not found: the field left the dataclass, the consumer reads
    a name the owner does not declare, or the statement itself is gone."""
    fields = {f.name for f in extraction.owner_fields}
    mine = [u for u in extraction.undeclared
            if _method(contract.consumer) == _method(u.consumer) and u.attribute == contract.field]
    typo = _typo(contract, extraction)
    if contract.field not in fields:
        msg = (f"field {contract.field} is gone from {contract.owner} "
               f"({extraction.owner_file}:{extraction.owner_line})")
        if mine:
            msg += f"; {mine[0].consumer} still reads it at {mine[0].file}:{mine[0].line}"
        return msg
    if typo:
        return typo[0].message
    return f"{contract.consumer} no longer has `{contract.shape}`"


def _typo(contract: CatalogContract, extraction: Extraction) -> list[UndeclaredRead]:
    """The consumer's undeclared reads that look like a misspelling of the contract's field."""
    return [u for u in extraction.undeclared
            if _method(contract.consumer) == _method(u.consumer) and u.suggestion == contract.field]


def _successors(contract: CatalogContract, extraction: Extraction, projects: dict) -> tuple[list[Successor], str]:
    """For a vanished assignment contract: the statements that took over its job (see successors.py)."""
    from spectrace.contracts.successors import assigned_attribute, describe, find_successors

    target = assigned_attribute(contract.shape)
    if not target or not extraction.root:
        return [], ""
    from spectrace.source import from_path
    from spectrace.tracer.project import Project

    project = projects.get(extraction.root)
    if project is None:
        opened = getattr(extraction, "_analysis", None)
        project = opened.symbols.project if opened is not None else Project(from_path(extraction.root))
        projects[extraction.root] = project
    found = find_successors(project, contract.shape, contract.attribute_path, exclude_shape=contract.shape)
    try:
        project.save()
    except OSError as exc:
        warn_cache_unusable("index", exc)
    lhs = contract.shape.split("=", 1)[0].strip()
    return found, describe(found, lhs, contract.attribute_path[-1])


def _found(r: FieldRead | None) -> ReadSite | None:
    if r is None:
        return None
    return ReadSite(file=r.file, line=r.line, consumer=r.consumer, shape=r.shape, path_condition=_read_condition(r),
                    guards=list(r.guards), read_id=r.id, kind=r.kind, caller=r.caller, caller_site=r.caller_site)


def catalog_producers(contracts: list[CatalogContract]) -> dict[str, list[str]]:
    """What ``extract(producers=...)`` must follow for the catalog's producer-sets contracts."""
    out: dict[str, list[str]] = {}
    for c in contracts:
        if c.kind == ContractKind.PRODUCER_SETS:
            names = out.setdefault(c.producer, [])
            names += [n for n in c.all_fields() if n not in names]
    return out


def _obligations(result: ContractResult, extraction: Extraction, strict: bool) -> ContractResult:
    """A read contract whose statement is there but that a worker path breaks (violated) or that a
    worker path could not be followed far enough to decide (unknown)."""
    if result.status == Status.UNKNOWN:
        return replace(result, ok=not strict)
    if result.status not in (Status.PRESENT, Status.MOVED) or not result.found:
        return result
    rid = result.found.read_id
    hits = [v for v in extraction.violations if v.read.id == rid]
    if hits:
        v = hits[0]
        more = f" (+{len(hits) - 1} more)" if len(hits) > 1 else ""
        return replace(result, status=Status.VIOLATED, ok=False, message=v.message + more)
    unknown = [u for u in extraction.unknowns if u.read.id == rid]
    if unknown:
        u = unknown[0]
        more = f" (+{len(unknown) - 1} more)" if len(unknown) > 1 else ""
        return replace(result, status=Status.UNKNOWN, ok=not strict, message=u.message + more)
    return result


def check_catalog(source: SglangSource | Extraction, catalog: list[CatalogContract] | str | None = None,
                  strict: bool = False, use_cache: bool = True) -> CheckReport:
    """Check every catalog contract against ``source`` (an SglangSource, or an Extraction already made).

    ``catalog``: a list from ``load_catalog``, a path to a catalog directory/file, or None for the
    packaged catalog. Returns a ``CheckReport`` (``.ok``, ``.exit_code``, ``.results``, ``.violations``).
    ``use_cache``: a report for the same tree, catalog and checker code is read back
    (result_cache.py) instead of analysing again.
    """
    contracts = catalog if isinstance(catalog, list) else load_catalog(catalog)
    if isinstance(source, Extraction) or not (use_cache and result_cache.enabled()):
        return _check_catalog(source, contracts, strict)
    key = result_cache.report_key(source, contracts, strict)
    report = result_cache.load(key)
    if report is None:
        report = _check_catalog(source, contracts, strict)
        result_cache.store(key, report)
    return report


def _check_catalog(source: SglangSource | Extraction, contracts: list[CatalogContract], strict: bool) -> CheckReport:
    roles = getattr(contracts, "roles", None)
    producers = catalog_producers(contracts)
    if isinstance(source, Extraction):
        extraction = source
        missing = {name: attrs for name, attrs in producers.items()
                   if name not in extraction.producer_paths}
        if missing:  # made without these producers: follow them now, on a copy
            extraction = replace(extraction, producer_paths={**extraction.producer_paths,
                                                             **follow_producers(extraction, missing)})
    else:
        extraction = extract(source, roles=roles, producers=producers, assumptions=getattr(contracts, "assumptions", None))
    report = CheckReport(version=extraction.version, source=extraction.source, extraction=extraction, strict=strict)
    projects: dict = {}
    for c in contracts:
        report.results.append(_obligations(check_contract(c, extraction, projects), extraction, strict))
    report.violations = list(extraction.violations)
    report.unknowns = list(extraction.unknowns)
    report.undeclared = failing(extraction.undeclared)
    return report
