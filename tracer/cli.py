"""``spectrace map`` and ``spectrace index``."""

from __future__ import annotations

import difflib
import sys
import time

import click

from spectrace import ui
from spectrace.errors import SpectraceError
from spectrace.output import output_option_callback, write_output
from spectrace.progress import Bar, waiting
from spectrace.ui import plural

FORMATS = ("text", "json", "dot", "svg", "png", "mermaid")
SGLANG_HELP = "SGLang source: a path (checkout or dir holding sglang/), 'installed', or a version such as 0.5.9"


def open_source(sglang: str | None, source_path: str | None = None, package: str | None = None):
    """The source tree of ``--sglang`` or of ``--source PATH [--package NAME]`` (any Python package)."""
    from spectrace.source import package_source, resolve_source

    if source_path and sglang:
        raise SpectraceError("--source and --sglang exclude each other")
    if package and not source_path:
        raise SpectraceError("--package goes with --source")
    source = package_source(source_path, package=package) if source_path else resolve_source(sglang)
    ui.info(f"spectrace: using {source.describe()}")
    return source


def source_reference(source) -> dict:
    """What was analysed, without where it lies on this machine: a JSON output's ``source``."""
    return {"package": "sglang" if not hasattr(source, "packages") else ",".join(source.packages),
            "version": source.version, "origin": source.origin}


def _choose_format(fmt: str | None, output: str | None) -> str:
    if fmt:
        return fmt
    if output:
        from spectrace.tracer.render import format_for_path

        found = format_for_path(output, default="")
        if not found:
            raise SpectraceError(f"cannot tell the format from '{output}': pass --format ({', '.join(FORMATS)})")
        return found
    return "text" if sys.stdout.isatty() else "json"


def resolve_roots(proj, specs) -> list[str]:
    roots = []
    for spec in specs:
        found = proj.find_functions(spec)
        if not found:
            close = proj.close_matches(spec)
            hint = f"; close matches: {', '.join(close)}" if close else ""
            raise SpectraceError(f"unknown root '{spec}' in {proj.source.describe()}{hint}")
        if len(found) > 1:
            raise SpectraceError(
                f"ambiguous root '{spec}': {', '.join(found)} (use module:Class.method or the full name)"
            )
        roots.extend(found)
    return roots


def _close(name: str, names) -> str:
    close = difflib.get_close_matches(name, sorted(set(names)), n=5, cutoff=0.6)
    return f"; did you mean {', '.join(close)}?" if close else ""


def check_field_names(proj, field: str, owner: str | None) -> None:
    """A field nothing reads or writes, or an ``--owner`` no class of that name declaring the field,
    is a typo: refused with the names that come close, rather than drawn as a smaller map. Only the
    modules whose text names the field are read for a field that exists; the whole tree only to
    find the names close to one that does not."""
    where = proj.source.describe()
    declaring: set[str] = set()  # classes whose annotations hold the field
    found = False
    for summary in proj.modules_naming(field):
        for c in summary.classes.values():
            if field in c.annotations:
                declaring.add(c.name)
                found = True
        found = found or any(field in f.reads or field in f.writes
                              for _qn, f in proj.store.functions_naming(summary, field))
    if not found:
        proj.index_all(progress=Bar("indexing"))
        fields: set[str] = set()
        for summary in proj.loaded_modules():
            for c in summary.classes.values():
                fields.update(c.annotations)
            for f in summary.functions.values():
                fields.update(f.reads)
                fields.update(f.writes)
        raise SpectraceError(f"no reads or writes of a field named '{field}' in {where}{_close(field, fields)}")
    if owner is None or owner in declaring:
        return
    proj.index_all(progress=Bar("indexing"))
    classes = {c.name for summary in proj.loaded_modules() for c in summary.classes.values()}
    if owner not in classes:
        raise SpectraceError(f"no class named '{owner}' in {where}{_close(owner, declaring or classes)}")
    raise SpectraceError(f"class '{owner}' declares no field '{field}' in {where}; "
                         f"classes that do: {', '.join(sorted(declaring)) or 'none'}")


@click.command("map")
@click.argument("roots", nargs=-1)
@click.option("--sglang", "sglang", metavar="SOURCE", help=SGLANG_HELP)
@click.option("--source", "source_path", metavar="PATH",
              help="Any Python package instead of SGLang: a package folder, a .py file, or a folder holding packages.")
@click.option("--package", metavar="NAME", help="With --source: the top-level package to index when PATH holds several.")
@click.option("--depth", type=click.IntRange(min=0), default=2, show_default=True, help="Call depth from the roots.")
@click.option("--format", "fmt", type=click.Choice(FORMATS), help="Output format (default: from -o, else text on a terminal, json otherwise).")
@click.option("-o", "--output", callback=output_option_callback, help="Write here instead of stdout.")
@click.option("--include", multiple=True, metavar="GLOB", help="Keep only callees whose qualified name matches.")
@click.option("--exclude", multiple=True, metavar="GLOB", help="Drop callees whose qualified name matches.")
@click.option("--external", is_flag=True, help="Keep calls into the stdlib, torch and other non-SGLang code.")
@click.option("--field", "field", metavar="NAME", help="Map producers -> consumers of a field instead of calls.")
@click.option("--owner", metavar="CLASS", help="With --field: only constructors of this class count as producers.")
@click.option("--no-cha", "no_cha", is_flag=True,
              help="No class-hierarchy expansion: a receiver typed as a base class reaches the base's method only.")
@click.option("--exact", is_flag=True, help="Only calls resolved to one target: no expansion, no polymorphic call sites.")
@click.option("--closures", type=click.Choice(("fold", "separate")), default="fold", show_default=True,
              help="Count the calls of nested functions as the enclosing function's, or draw them apart.")
@click.option("--lambdas", type=click.Choice(("inline", "nodes")), default="inline", show_default=True,
              help="A call of a lambda reaches what its body calls (inline), or each lambda is a node of its own "
                   "named <lambdaN> in the function that writes it, as PyCG and jarviscg draw them (nodes).")
@click.option("--collapse", "collapse_by", type=click.Choice(("class", "module")),
              help="Draw one node per class or per module, each arrow labelled with the calls it stands for "
                   "(not json: json holds every node and edge).")
@click.option("--max-nodes", "max_nodes", type=click.IntRange(min=0), metavar="N",
              help="Draw at most N nodes, those nearest the roots; the rest become '+N more' nodes per caller "
                   "(default 60 for svg, png, dot and mermaid, none for text; 0: no limit; json: never).")
@click.option("--no-result-cache", "no_result_cache", is_flag=True,
              help="Build the map even when the same map of the same unchanged tree is in the cache.")
def map_command(roots, sglang, source_path, package, depth, fmt, output, include, exclude, external, field, owner,
                no_cha, exact, closures, lambdas, collapse_by, max_nodes, no_result_cache):
    """Draw the call graph below ROOTS (Class.method, module:Class.method or a full name),
    or with --field every producer and consumer of a field."""
    from spectrace.tracer import map_cache

    if not roots and not field:
        raise SpectraceError("give a root (e.g. Scheduler.run_batch) or --field NAME")
    fmt = _choose_format(fmt, output)
    if fmt in ("svg", "png") and not output and sys.stdout.isatty():
        raise SpectraceError(f"--format {fmt} writes binary data: pass -o FILE")
    if owner and not field:
        raise SpectraceError("--owner goes with --field")
    request = map_cache.MapRequest(tuple(roots), depth, fmt, tuple(include), tuple(exclude), external, field, owner,
                                   not no_cha, exact, closures, lambdas, collapse_by, max_nodes)
    source = open_source(sglang, source_path, package)
    t0 = time.perf_counter()
    results = map_cache.MapResults(source, request) if map_cache.enabled() and not no_result_cache else None
    answer = results.load() if results is not None else None
    if answer is not None:
        ui.detail(f"spectrace: the same map of the unchanged tree, from the result cache in "
                  f"{time.perf_counter() - t0:.2f} s")
    else:
        answer = build_map(source, request, results.tree if results is not None else None)
        ui.detail(f"spectrace: graph built in {time.perf_counter() - t0:.1f} s")
        if results is not None:
            results.store(answer)
    _write_map(answer, output)


def build_map(source, request, tree=None):
    """A map's output, its summary line and the files it skipped (``tree``: the tree's files and
    fingerprint, when read already)."""
    from spectrace.tracer.graph import call_graph, field_graph
    from spectrace.tracer.map_cache import MapAnswer
    from spectrace.tracer.project import Project
    from spectrace.tracer.render import render, summary_line
    from spectrace.tracer.views import for_display

    r = request
    proj = Project(source, lambdas=r.lambdas, tree=tree)
    if r.field:
        check_field_names(proj, r.field, r.owner)
        graph = field_graph(proj, r.field, owner=r.owner)
        if graph.number_of_edges() == 0:
            raise SpectraceError(f"no reads or writes of a field named '{r.field}' in {proj.source.describe()}")
    else:
        with waiting("building the call graph"), proj.parsing_ahead():
            graph = call_graph(proj, resolve_roots(proj, r.roots), depth=r.depth, include=r.include,
                               exclude=r.exclude, external=r.external, cha=r.cha, exact=r.exact,
                               closures=r.closures, networkx=r.fmt != "json")
    proj.save()
    if r.fmt == "json":  # the same bytes wherever the cache or the checkout is
        graph.graph["source"] = source_reference(proj.source)
    data = render(for_display(graph, r.fmt, r.collapse_by, r.max_nodes), r.fmt)
    # the same counts, in the same words, as the picture's legend
    return MapAnswer(data, summary_line(graph), tuple(proj.errors))


def _write_map(answer, output: str | None) -> None:
    data = answer.data
    if output:
        write_output(output, data)
    elif isinstance(data, bytes):
        sys.stdout.buffer.write(data)
        sys.stdout.buffer.flush()
    else:
        click.echo(data, nl=not data.endswith("\n"))
    for err in answer.skipped:
        click.echo(f"spectrace: skipped {err}", err=True)
    ui.info(f"spectrace: {answer.summary}" + (f" -> {output}" if output else ""))


@click.command("index")
@click.option("--sglang", "sglang", metavar="SOURCE", help=SGLANG_HELP)
@click.option("--source", "source_path", metavar="PATH", help="Any Python package instead of SGLang (as for map).")
@click.option("--package", metavar="NAME", help="With --source: the top-level package to index.")
@click.option("--jobs", type=click.IntRange(min=1), help="Worker processes (default: all cores).")
def index_command(sglang, source_path, package, jobs):
    """Index every module of an SGLang tree or a package: what each defines outside function bodies
    (the bodies are summarised when a map or a check first needs them)."""
    from pathlib import Path

    from spectrace.tracer.modules import ModuleStore
    from spectrace.tracer.summary_cache import SummaryCache
    from spectrace.tracer.tree import source_packages

    source = open_source(sglang, source_path, package)
    t0 = time.perf_counter()
    # Brings the cache up to date; a warm run reads the counts kept beside each module's summary
    # (the store alone: nothing here resolves a name, so the resolver's modules are not imported).
    store = ModuleStore(Path(source.root), SummaryCache(), source_packages(source))
    stats = store.refresh(jobs=jobs, progress=Bar("indexing"))
    errors = [s[2] for s in stats if s[2]]
    click.echo(  # what is defined outside function bodies: the index summarises no body
        f"{len(stats)} modules, {sum(s[0] for s in stats)} classes, {sum(s[1] for s in stats)} functions, "
        f"{plural(len(errors), 'file')} with errors, {time.perf_counter() - t0:.1f} s"
    )
    for err in errors:
        click.echo(f"spectrace: skipped {err}", err=True)
