"""``spectrace contracts extract | check | diff``."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import click
import yaml

from spectrace.errors import SpectraceError
from spectrace.source import resolve_source

FORMATS = ["text", "json", "yaml", "sarif"]


def _write(text: str, output: str | None) -> None:
    if output:
        Path(output).write_text(text)
        click.echo(f"wrote {output}", err=True)
    else:
        click.echo(text, nl=False)


def _source(spec):
    src = resolve_source(spec)
    click.echo(f"spectrace: using {src.describe()}", err=True)
    return src


@click.group("contracts")
def contracts_group():
    """Scheduler <-> worker field contracts: extract them, check the catalog, show drift."""


@contracts_group.command("extract")
@click.option("--sglang", "sglang", default=None, help="VERSION, PATH or 'installed' (default: installed, else newest cached).")
@click.option("--format", "fmt", type=click.Choice(FORMATS), default="text", show_default=True)
@click.option("-o", "--output", default=None, help="Write to this file instead of stdout.")
@click.option("--no-cache", is_flag=True, help="Ignore and do not write the per-file facts cache.")
def extract_command(sglang, fmt, output, no_cache):
    """Reads, producers, worker return paths and violations on GenerationBatchResult."""
    from spectrace.contracts.extract import extract
    from spectrace.contracts.report import render_extraction

    x = extract(_source(sglang), use_cache=not no_cache)
    _write(render_extraction(x, fmt), output)
    sys.exit(1 if x.violations else 0)


@contracts_group.command("check")
@click.option("--sglang", "sglang", default=None, help="VERSION, PATH or 'installed'.")
@click.option("--catalog", default=None, type=click.Path(), help="Catalog directory or TOML file (default: the packaged one).")
@click.option("--format", "fmt", type=click.Choice(FORMATS), default="text", show_default=True)
@click.option("-o", "--output", default=None)
def check_command(sglang, catalog, fmt, output):
    """Verify the catalog: present, guarded, moved, gone, plus new violations. Exit 0 all hold, 1 broke, 2 usage."""
    from spectrace.contracts.catalog import load_catalog
    from spectrace.contracts.check import check_catalog
    from spectrace.contracts.report import check_text, sarif

    contracts = load_catalog(catalog)
    report = check_catalog(_source(sglang), contracts)
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
@click.option("--format", "fmt", type=click.Choice(["text", "markdown", "json"]), default="text", show_default=True)
@click.option("-o", "--output", default=None)
def diff_command(a, b, fmt, output):
    """Drift between two SGLang versions or paths: added, removed, moved, guard and condition changes."""
    from spectrace.contracts.diff import diff_extractions, drift_table
    from spectrace.contracts.extract import extract

    xa = extract(_source(a))
    xb = extract(_source(b))
    d = diff_extractions(xa, xb)
    if fmt == "json":
        text = json.dumps(d.to_json(), indent=2) + "\n"
    else:
        text = drift_table(d, markdown=fmt == "markdown")
    _write(text, output)


__all__ = ["contracts_group", "SpectraceError"]
