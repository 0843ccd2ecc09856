"""``spectrace contracts extract | check | diff``."""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path

import click
import yaml

from spectrace import ui
from spectrace.errors import SpectraceError
from spectrace.output import output_option_callback, write_output
from spectrace.progress import waiting
from spectrace.source import resolve_source

FORMATS = ["text", "json", "yaml", "sarif"]

output_option = click.option("-o", "--output", default=None, callback=output_option_callback,
                             help="Write to this file instead of stdout.")


catalog_option = click.option("--catalog", default=None, type=click.Path(),
                              help="Catalog directory or TOML file (default: the packaged one); its [roles] name the owner, consumer and worker.")


def _catalog_path(catalog: str | None):
    """The catalog path, or one line saying it does not exist."""
    if catalog is not None and not Path(catalog).exists():
        raise SpectraceError(f"no contract catalog at {catalog}: no such file or directory")
    return catalog


def _write(text: str, output: str | None) -> None:
    if output:
        write_output(output, text)
        ui.info(f"wrote {output}")
    else:
        click.echo(text, nl=False)


def _source(spec):
    src = resolve_source(spec)
    ui.info(f"spectrace: using {src.describe()}")
    return src


def _extracted(src, what: str, run):
    """``run()`` behind a progress line (a cold extraction takes a while), timed under --verbose."""
    t0 = time.perf_counter()
    with waiting(f"{what} SGLang {src.version}"):
        result = run()
    extraction = getattr(result, "extraction", result)
    stats = ", ".join(f"{k} {v}" for k, v in (getattr(extraction, "stats", None) or {}).items())
    ui.detail(f"spectrace: {what} SGLang {src.version} in {time.perf_counter() - t0:.1f} s" + (f" ({stats})" if stats else ""))
    return result


@click.group("contracts")
def contracts_group():
    """Scheduler <-> worker field contracts: extract them, check the catalog, show drift."""


@contracts_group.command("extract")
@click.option("--sglang", "sglang", default=None, help="VERSION, PATH or 'installed' (default: installed, else newest cached).")
@click.option("--format", "fmt", type=click.Choice(FORMATS), default="text", show_default=True)
@output_option
@click.option("--no-cache", is_flag=True, help="Ignore and do not write the per-file facts cache.")
@catalog_option
@click.option("--cache-stats", is_flag=True,
              help="JSON/YAML: add the counts of functions parsed and taken from the cache (they differ cold and warm).")
def extract_command(sglang, fmt, output, no_cache, catalog, cache_stats):
    """Reads, producers, worker return paths and violations on the catalog's owner (GenerationBatchResult)."""
    from spectrace.contracts.extract import extract
    from spectrace.contracts.report import render_extraction
    from spectrace.contracts.roles import load_roles

    roles = load_roles(_catalog_path(catalog))
    src = _source(sglang)
    x = _extracted(src, "extracting contracts from", lambda: extract(src, roles, use_cache=not no_cache))
    _write(render_extraction(x, fmt, cache_stats=cache_stats), output)
    from spectrace.contracts.undeclared import failing

    sys.exit(1 if x.violations or failing(x.undeclared) else 0)


@contracts_group.command("check")
@click.option("--sglang", "sglang", default=None, help="VERSION, PATH or 'installed'.")
@catalog_option
@click.option("--format", "fmt", type=click.Choice(FORMATS), default="text", show_default=True)
@click.option("--strict", is_flag=True,
              help="An obligation the checker cannot decide (a worker path it cannot follow) fails the check.")
@output_option
@click.option("--no-result-cache", is_flag=True,
              help="Analyse even when the tree, the catalog and the checker are those of a cached report.")
def check_command(sglang, catalog, fmt, output, strict, no_result_cache):
    """Verify the catalog: present, relaxed, moved, gone, unknown, plus new violations. Exit 0 all hold, 1 broke, 2 usage."""
    from spectrace.contracts.catalog import load_catalog
    from spectrace.contracts.check import check_catalog
    from spectrace.contracts.report import check_text, sarif

    contracts = load_catalog(catalog)
    src = _source(sglang)
    report = _extracted(src, "checking the contracts of", lambda: check_catalog(src, contracts, strict=strict,
                                                                                      use_cache=not no_result_cache))
    if fmt == "json":
        text = json.dumps(report.to_json(), indent=2) + "\n"
    elif fmt == "yaml":
        text = yaml.safe_dump(report.to_json(), sort_keys=False, width=120)
    elif fmt == "sarif":
        text = json.dumps(sarif(report.extraction, report), indent=2) + "\n"
    else:
        text = check_text(report)
    _write(text, output)
    sys.exit(report.exit_code)


@contracts_group.command("diff")
@click.argument("a")
@click.argument("b")
@catalog_option
@click.option("--format", "fmt", type=click.Choice(["text", "markdown", "json"]), default="text", show_default=True)
@output_option
@click.option("--exit-code", is_flag=True, help="Exit 1 when there is drift, 0 when there is none (as git diff --exit-code).")
def diff_command(a, b, catalog, fmt, output, exit_code):
    """Drift between two SGLang versions or paths: added, removed, moved, guard and condition changes."""
    from spectrace.contracts.diff import diff_extractions, drift_table
    from spectrace.contracts.extract import extract
    from spectrace.contracts.roles import load_roles

    roles = load_roles(_catalog_path(catalog))
    src_a = _source(a)
    xa = _extracted(src_a, "extracting contracts from", lambda: extract(src_a, roles))
    src_b = _source(b)
    xb = _extracted(src_b, "extracting contracts from", lambda: extract(src_b, roles))
    d = diff_extractions(xa, xb)
    drift = bool(d.changes) or d.a_fields != d.b_fields
    if fmt == "json":
        text = json.dumps(d.to_json(), indent=2) + "\n"
    elif not drift:
        text = "no drift between {} and {}\n".format(*d.labels)
    else:
        text = drift_table(d, markdown=fmt == "markdown")
    _write(text, output)
    if exit_code and drift:
        sys.exit(1)


__all__ = ["contracts_group", "SpectraceError"]
