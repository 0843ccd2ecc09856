"""Field-flow extraction of the scheduler <-> worker contracts on a result dataclass.

Pipeline (``extract(source)``), passes over one shared ``Analysis`` (``analysis.py``):

1. **Owner** (``scope.py``): the dataclass (``GenerationBatchResult`` by default) is found by class
   name across the tree (its module moved between releases) and its fields read from its body
   (``dataclasses_scan.py``).
2. **Workers** (``selection.py``): the classes ``Scheduler.model_worker`` can be, from the index
   and from tracing the assignments to it. Their modules and ``WORKER_PACKAGES`` are the worker
   side, everything else the scheduler side (``Analysis.side_of``).
3. **Scope** (``scope.py``): the files of the scheduler and speculative packages, the modules of
   the worker classes and of the Scheduler, and every file that names the owner.
4. **Facts** (``facts.py``, ``facts_visitors.py``): the stdlib ``ast`` over the functions that mention a field
   or the owner, cached per file content hash (``facts_cache.py``) and indexed with the tracer's
   Project (``symbols.py``).
5. **Holders** (``holders.py``): per function, the names that hold an owner instance.
6. **Reads** (``reads.py``) and **producers** (``producers.py``) of every scoped function.
7. **Return paths** (``return_paths.py``): for each worker class, each return path of the
   scheduler-called method with the fields it sets non-None (following helper calls with their
   arguments, callables passed on, and the writes helpers make through a parameter: ``arguments.py``).
8. **Violations** (``violations.py``): an unguarded scheduler read of a None-default field that a
   worker's return path leaves unset, when the read's path condition, the worker's selection
   condition (how ``self.model_worker`` comes to be that class, ``selection.py``) and the return
   path's condition can hold together (``conditions.py``).
"""

from __future__ import annotations

from pathlib import Path

from spectrace.contracts import conditions as C
from spectrace.contracts.analysis import Analysis
from spectrace.contracts.cache_warnings import warn_cache_unusable
from spectrace.contracts.complements import complements_in, predicates_in
from spectrace.contracts.construction import Constructions
from spectrace.contracts.facts import Mentions
from spectrace.contracts.facts_cache import FactsCache
from spectrace.contracts.holders import HolderFinder
from spectrace.contracts.producers import fields_set_on_results, producers_in
from spectrace.contracts.reads import field_reads
from spectrace.contracts.relays import RelayReport, relay_report
from spectrace.contracts.records import Extraction, ProducerFunction, WorkerDispatch, dedupe_ids
from spectrace.contracts.return_paths import named_producer_paths, worker_return_paths
from spectrace.contracts.roles import Roles, load_roles
from spectrace.contracts.scope import find_owner, scheduler_class, scope_files
from spectrace.contracts.selection import WorkerSelection
from spectrace.contracts.symbols import Symbols
from spectrace.contracts.undeclared import UndeclaredFinder
from spectrace.errors import SpectraceError
from spectrace.contracts.violations import ViolationFinder, applicable, deep_wants, load_assumptions
from spectrace.sides import SCHEDULER
from spectrace.source import SglangSource
from spectrace.tracer.project import Project

__all__ = ["Extraction", "Roles", "extract", "follow_producers", "load_assumptions", "load_roles"]


def _symbols(source: SglangSource, project: Project | None, use_cache: bool, jobs: int | None) -> Symbols:
    project = project if project is not None else Project(source)
    return Symbols(project, FactsCache(Path(source.root), use_cache=use_cache, jobs=jobs))


def _save_caches(symbols: Symbols) -> None:
    symbols.facts.save()
    try:
        symbols.project.save()
    except OSError as exc:
        warn_cache_unusable("index", exc)


def _fail_on_unparsed(symbols: Symbols) -> None:
    """A module the analysis reached but could not parse hides classes and paths: no answer is honest."""
    errors = sorted(set(symbols.project.errors))
    if errors:
        raise SpectraceError("cannot analyse the contracts, a file they depend on does not parse: " + "; ".join(errors),
                             exit_code=2)


def extract(source: SglangSource, roles: Roles | None = None, project: Project | None = None, use_cache: bool = True,
            jobs: int | None = None, producers: dict[str, list[str]] | None = None,
            assumptions: list[dict] | None = None) -> Extraction:
    """``roles``: the owner, consumer and worker names (default: the packaged catalog's roles.toml).
    ``producers``: {"Class.method": [extra attribute names]} whose return paths to add in
    ``Extraction.producer_paths`` (the catalog's producer-sets contracts; see check.py)."""
    roles = roles if roles is not None else load_roles()
    owner = roles.owner
    symbols = _symbols(source, project, use_cache, jobs)
    a = Analysis(symbols, find_owner(symbols, owner, source.describe()), roles)
    mentions = Mentions(list(a.fields), owner)
    # the functions of the files in scope whatever the workers turn out to be are parsed in the
    # background while the index answers who the workers are
    with symbols.facts.parsing_ahead(scope_files(symbols, owner, [], roles.scope_packages), mentions):
        # and the index reads the modules it has not parsed from their outlines, parsing a function's
        # body when it is first asked for, while a second process parses the modules they import
        # (``Project.parsing_ahead``); it ends before the caches are written, so these are kept
        with symbols.project.parsing_ahead():
            # workers and sides
            selection = WorkerSelection(a)
            a.scheduler_qn = scheduler_class(symbols, roles)
            if a.scheduler_qn is None:
                a.notes.append(f"no {roles.consumer} class found: the worker side falls back to the worker packages")
                targets = []
            else:
                targets = selection.targets()
            a.worker_modules = {qn.rsplit(".", 1)[0] for t in targets for qn in symbols.mro(t)}

            # scope and facts
            files = scope_files(symbols, owner, targets + ([a.scheduler_qn] if a.scheduler_qn else []), roles.scope_packages)
            wanted = {rel: [s for s in symbols.facts.spans(rel) if mentions.search(s.text)] for rel in files}
            scanned = symbols.facts.facts_many({rel: spans for rel, spans in wanted.items() if spans})
            a.complements = complements_in([s for rel in files for s in symbols.facts.spans(rel)])
            enum_files = sorted({rel for name in roles.mode_enums for qn in symbols.find_class(name)
                                 if (rel := symbols.file_of_module(qn.rsplit(".", 1)[0])) and rel not in files})
            a.predicates = predicates_in([s for rel in [*files, *enum_files] for s in symbols.facts.spans(rel)])
            for rel, flist in scanned.items():
                scanned[rel] = symbols.add(rel, flist)

            # reads and producers
            holder_finder = HolderFinder(a, scanned)
            consumer_side = [(symbols.module_of_file(rel), rel, f) for rel, flist in sorted(scanned.items())
                             if a.side_of(symbols.module_of_file(rel)) == SCHEDULER for f in flist]
            holder_finder.find_relays(consumer_side)
            consumer_side += _relay_callers(a, holder_finder, files, wanted, scanned)
            holder_finder.propagate(consumer_side)
            reads, found_producers, scheduler_writes, worker_calls = [], [], set(), set()
            undeclared = UndeclaredFinder(a)
            for rel, flist in sorted(scanned.items()):
                module = symbols.module_of_file(rel)
                side = a.side_of(module)
                for f in flist:
                    holders = holder_finder.of(module, f)
                    worker_calls |= {c for c in holders.calls if c.startswith(f"self.{roles.worker_attr}.")}
                    reads.extend(field_reads(a, rel, module, side, f, holders))
                    undeclared.scan(rel, side, f, holders)
                    found_producers.extend(producers_in(a, rel, module, side, f, holders))
                    if side == SCHEDULER:
                        scheduler_writes |= fields_set_on_results(a, f, holders)
            for r in reads:
                for inbound in holder_finder.inbound.get((r.module, r.consumer), {}).values():
                    if r.holder == inbound.why:
                        r.caller, r.caller_site, r.call_condition = inbound.caller, inbound.site, C.render(inbound.conds)
            dedupe_ids(reads)
            dedupe_ids(found_producers)

            # worker return paths and violations
            methods = sorted({c.split(".")[2] for c in worker_calls}) or [roles.worker_method]
            conditions = selection.conditions(targets)
            violation_finder = ViolationFinder(a, holder_finder, applicable(load_assumptions() if assumptions is None else assumptions,
                                                                            source.version))
            checked = violation_finder.checked(reads, scheduler_writes)
            paths = worker_return_paths(a, targets, methods, deep_wants(checked), {r.field for r in checked},
                                        witnessed=violation_finder.witnessed(checked))
            Constructions(symbols).conditioned(paths)
            violations = violation_finder.find(reads, paths, conditions, scheduler_writes)
            producer_paths = named_producer_paths(a, dict(producers or {}))
            for xid, left_out in sorted(violation_finder.excluded.items()):
                sites = sorted({f"{r.file}:{r.line}" for r in left_out})
                a.notes.append(f"reads left out of the workers' obligations by {xid} (contracts/catalog/assumptions.toml): "
                               + ", ".join(sites))
            if violation_finder.assumptions_used:
                a.notes.append("assumptions used to rule out violations: " + ", ".join(sorted(violation_finder.assumptions_used))
                               + " (contracts/catalog/assumptions.toml)")
            if scheduler_writes:
                a.notes.append("fields the scheduler side sets itself on a result (checked against workers only where "
                               "a read is reached without the write): "
                               + ", ".join(sorted(scheduler_writes)))
        _save_caches(symbols)
    _fail_on_unparsed(symbols)
    extraction = Extraction(
        source=source.describe(),
        version=source.version,
        root=str(Path(source.root)),
        owner=owner,
        owner_file=a.owner.file,
        owner_line=a.owner.line,
        owner_fields=list(a.fields.values()),
        polymorphic={
            roles.worker_attr: WorkerDispatch(
                targets=targets,
                selection={t: C.render_dnf(conditions.get(t)) for t in targets},
                methods=methods,
            )
        },
        reads=sorted(reads, key=lambda r: (r.file, r.line, r.col, r.field)),
        producers=sorted(found_producers, key=lambda p: (p.file, p.line)),
        return_paths=list(paths),
        violations=list(violations),
        unknowns=list(violation_finder.unknowns),
        undeclared=undeclared.find(),
        producer_paths=producer_paths,
        notes=a.notes,
        origin=getattr(source, "origin", ""),
        stats={"files": len(files), "functions_parsed": symbols.facts.parsed, "functions_reused": symbols.facts.reused},
    )
    # the tree's open index, for the check's later questions (not a field: never serialised)
    extraction._analysis = a
    extraction._roles = roles
    return extraction


def _relay_callers(a: Analysis, holder_finder: HolderFinder, files: list[str], wanted: dict, scanned: dict) -> list:
    """The consumer-side functions that name no field but call the worker or a relay of its result
    (``event_loop_pp``: ``result, self.launch_event = self._pp_launch_batch(...)``): parsed too, and
    their relays found, until no new one appears (``scanned`` and ``wanted`` grow in place)."""
    symbols = a.symbols
    added: list = []
    seen = {id(s) for spans in wanted.values() for s in spans}
    for _ in range(3):
        calls = {f".{qn.rsplit('.', 1)[-1]}(" for qn in holder_finder.relays} | {f"self.{a.worker_attr}."}
        more = {rel: [s for s in symbols.facts.spans(rel) if id(s) not in seen and any(c in s.text for c in calls)]
                for rel in files if a.side_of(symbols.module_of_file(rel)) == SCHEDULER}
        more = {rel: spans for rel, spans in more.items() if spans}
        if not more:
            break
        for rel, spans in more.items():
            seen.update(id(s) for s in spans)
            wanted.setdefault(rel, []).extend(spans)
        parsed = symbols.facts.facts_many(more)
        fresh = []
        for rel, flist in parsed.items():
            flist = symbols.add(rel, flist)
            scanned.setdefault(rel, []).extend(flist)
            fresh.extend((symbols.module_of_file(rel), rel, f) for f in flist)
        before = set(holder_finder.relays)
        holder_finder.find_relays(added + fresh)
        added.extend(fresh)
        if set(holder_finder.relays) == before:
            break
    return added


def roles_of(extraction: Extraction) -> Roles:
    """The roles an extraction was made with (an Extraction read back from JSON: the packaged ones)."""
    return getattr(extraction, "_roles", None) or load_roles()


def _analysis_of(extraction: Extraction) -> Analysis:
    """The index the extraction was made with, else the tree's opened again (the caches make that
    cheap; an Extraction read back from JSON has none)."""
    a = getattr(extraction, "_analysis", None)
    if a is None:
        from spectrace.source import from_path

        source = from_path(extraction.root)
        symbols = _symbols(source, None, True, None)
        a = Analysis(symbols, find_owner(symbols, extraction.owner, source.describe()), roles_of(extraction))
    return a


def follow_producers(extraction: Extraction, producers: dict[str, list[str]]) -> dict[str, list[ProducerFunction]]:
    """``producer_paths`` for producers an Extraction was made without (read from its tree again;
    the facts are cached, so this parses at most the producers' own functions)."""
    return named_producer_paths(_analysis_of(extraction), producers)


def follow_relay(extraction: Extraction, method: str, callback: str, field_name: str, consumer: str) -> RelayReport:
    """Where ``consumer`` passes ``callback`` to the workers' ``method`` and whether each worker
    return path calls it with ``field_name`` (relays.py), read from the extraction's tree."""
    a = _analysis_of(extraction)
    symbols = a.symbols
    dispatch = extraction.polymorphic.get(a.worker_attr)
    targets = dispatch.targets if dispatch is not None else []
    return relay_report(a, scheduler_class(symbols, a.roles), targets, method, callback, field_name, consumer)
