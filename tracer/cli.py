"""``spectrace map`` and ``spectrace index``."""

from __future__ import annotations

import sys
import time

import click

from spectrace.errors import SpectraceError

FORMATS = ("text", "json", "dot", "svg", "png", "mermaid")
SGLANG_HELP = "SGLang source: a path (checkout or dir holding sglang/), 'installed', or a version such as 0.5.9"


def open_project(sglang: str | None, quiet: bool = False):
    from spectrace.source import resolve_source
    from spectrace.tracer.project import Project

    source = resolve_source(sglang)
    if not quiet:
        click.echo(f"spectrace: using {source.describe()}", err=True)
    return Project(source)


class _Progress:
    """A one-line progress bar on stderr, only when stderr is a terminal."""

    def __init__(self, label: str):
        self.label = label
        self.tty = sys.stderr.isatty()
        self.last = 0.0

    def __call__(self, done: int, total: int):
        if not self.tty or total == 0:
            return
        now = time.monotonic()
        if done != total and now - self.last < 0.1:
            return
        self.last = now
        width = 30
        filled = int(width * done / total)
        sys.stderr.write(f"\r{self.label} [{'#' * filled}{'.' * (width - filled)}] {done}/{total}")
        if done == total:
            sys.stderr.write("\n")
        sys.stderr.flush()


def _choose_format(fmt: str | None, output: str | None) -> str:
    from spectrace.tracer.render import format_for_path

    if fmt:
        return fmt
    if output:
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
            raise SpectraceError(f"unknown root '{spec}' in SGLang {proj.source.version}{hint}")
        if len(found) > 1:
            raise SpectraceError(
                f"ambiguous root '{spec}': {', '.join(found)} (use module:Class.method or the full name)"
            )
        roots.extend(found)
    return roots


@click.command("map")
@click.argument("roots", nargs=-1)
@click.option("--sglang", "sglang", metavar="SOURCE", help=SGLANG_HELP)
@click.option("--depth", type=click.IntRange(min=0), default=2, show_default=True, help="Call depth from the roots.")
@click.option("--format", "fmt", type=click.Choice(FORMATS), help="Output format (default: from -o, else text on a terminal, json otherwise).")
@click.option("-o", "--output", type=click.Path(dir_okay=False), help="Write here instead of stdout.")
@click.option("--include", multiple=True, metavar="GLOB", help="Keep only callees whose qualified name matches.")
@click.option("--exclude", multiple=True, metavar="GLOB", help="Drop callees whose qualified name matches.")
@click.option("--external", is_flag=True, help="Keep calls into the stdlib, torch and other non-SGLang code.")
@click.option("--field", "field", metavar="NAME", help="Map producers -> consumers of a field instead of calls.")
@click.option("--owner", metavar="CLASS", help="With --field: only constructors of this class count as producers.")
def map_command(roots, sglang, depth, fmt, output, include, exclude, external, field, owner):
    """Draw the call graph below ROOTS (Class.method, module:Class.method or a full name),
    or with --field every producer and consumer of a field."""
    from spectrace.tracer.graph import call_graph, field_graph
    from spectrace.tracer.render import render

    if not roots and not field:
        raise SpectraceError("give a root (e.g. Scheduler.run_batch) or --field NAME")
    fmt = _choose_format(fmt, output)
    if fmt in ("svg", "png") and not output and sys.stdout.isatty():
        raise SpectraceError(f"--format {fmt} writes binary data: pass -o FILE")
    proj = open_project(sglang)
    if field:
        proj.index_all(progress=_Progress("indexing"))
        graph = field_graph(proj, field, owner=owner)
        if graph.number_of_edges() == 0:
            raise SpectraceError(f"no reads or writes of a field named '{field}' in SGLang {proj.source.version}")
    else:
        graph = call_graph(proj, resolve_roots(proj, roots), depth=depth, include=include,
                           exclude=exclude, external=external)
    proj.save()
    data = render(graph, fmt, out_path=output)  # writes the file when -o is given
    if not output:
        if isinstance(data, bytes):
            sys.stdout.buffer.write(data)
        else:
            click.echo(data, nl=not data.endswith("\n"))
    for err in proj.errors:
        click.echo(f"spectrace: skipped {err}", err=True)
    click.echo(
        f"spectrace: {graph.number_of_nodes()} nodes, {graph.number_of_edges()} edges, "
        f"{graph.graph.get('unresolved', 0)} unresolved calls" + (f" -> {output}" if output else ""),
        err=True,
    )


@click.command("index")
@click.option("--sglang", "sglang", metavar="SOURCE", help=SGLANG_HELP)
@click.option("--jobs", type=click.IntRange(min=1), help="Worker processes (default: all cores).")
def index_command(sglang, jobs):
    """Index every module of an SGLang tree (warms the cache for --field maps and contracts)."""
    proj = open_project(sglang)
    t0 = time.perf_counter()
    proj.index_all(jobs=jobs, progress=_Progress("indexing"))
    mods = list(proj.loaded_modules())
    n_cls = sum(len(m.classes) for m in mods)
    n_fn = sum(len(m.functions) for m in mods)
    n_calls = sum(len(f.calls) for m in mods for f in m.functions.values())
    click.echo(
        f"{len(mods)} modules, {n_cls} classes, {n_fn} functions, {n_calls} call sites, "
        f"{len(proj.errors)} files with errors, {time.perf_counter() - t0:.1f} s"
    )
    for err in proj.errors:
        click.echo(f"spectrace: skipped {err}", err=True)
