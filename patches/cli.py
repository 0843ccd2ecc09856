"""``spectrace patch list | check | apply | status | revert``: the patch engine's command line."""

from __future__ import annotations

import functools
from pathlib import Path

import click

from spectrace.errors import SpectraceError, describe
from spectrace.ui import plural
from spectrace.output import write_output
from spectrace.patches import engine
from spectrace.patches.series import DEFAULT_SERIES, available_series, load_series, render_manifest

sglang_option = click.option(
    "--sglang", "sglang_path", required=True, metavar="PATH|installed",
    help="An SGLang git checkout (python/sglang), a directory holding sglang/, or 'installed' "
         "(the sglang this Python imports, e.g. in site-packages).",
)
series_option = click.option("--series", "series_name", default=DEFAULT_SERIES, show_default=True, help="Patch series name.")


def one_line_errors(command):
    """The filesystem's own errors (permissions, a full disk) as one line, never a traceback."""

    @functools.wraps(command)
    def wrapper(*args, **kwargs):
        try:
            return command(*args, **kwargs)
        except BrokenPipeError:
            raise  # stdout's reader went away (`| head`): the CLI ends quietly, not with an error
        except OSError as exc:
            raise SpectraceError(describe(exc)) from exc

    return wrapper


def _echo_lines(lines):
    for line in lines:
        click.echo(line)


@click.group("patch")
def patch_group():
    """Apply vetted patch series to an SGLang tree, only where the contracts they rely on hold."""


@patch_group.command("list")
@click.option("--sglang", "sglang_path", default=None, metavar="PATH|installed|VERSION", help="Show only what fits this tree's version.")
@series_option
@one_line_errors
def list_command(sglang_path, series_name):
    """The series shipped with spectrace, their SGLang versions and patches."""
    found = available_series()
    if not found:
        raise SpectraceError("no patch series are installed")
    if sglang_path is None:
        for name, versions in found.items():
            base = load_series(name, versions[-1]).manifest.get("applies_over")
            click.echo(f"{name}: SGLang {', '.join(versions)}" + (f" (applies over {base}: --with {name})" if base else ""))
        return
    if engine.is_version_spec(sglang_path):
        series = load_series(series_name, sglang_path)  # only reading the series: no tree needed
    else:
        target = engine.resolve_target(sglang_path)
        click.echo(f"target: {target.describe()}")
        series = load_series(series_name, target.version)
    click.echo(f"series: {series.name} for SGLang {series.version} ({plural(len(series.patches), 'patch', 'patches')})")
    if series.manifest.get("applies_over"):
        click.echo(f"applies over: {series.manifest['applies_over']} (spectrace patch apply --with {series.name})")
    for patch in series.patches:
        first = patch.description.splitlines()[0] if patch.description else "(no description)"
        click.echo(f"  {patch.name}: {first}")
        click.echo(f"    files: {', '.join(patch.touched)}")
        if patch.requires_contracts:
            click.echo(f"    requires contracts: {', '.join(patch.requires_contracts)}")
        if patch.adds_contracts:
            click.echo(f"    adds contracts: {', '.join(patch.adds_contracts)}")


@patch_group.command("check")
@sglang_option
@series_option
@click.option("--no-contract-gate", is_flag=True, help="Do not run the contract catalog (reported as skipped).")
@one_line_errors
def check_command(sglang_path, series_name, no_contract_gate):
    """Run the series' gates on a tree and say, per patch, whether it would apply. Exit 1 if apply would refuse."""
    report, recovered = engine.check(sglang_path, series_name, use_contracts=not no_contract_gate)
    _echo_lines(recovered)
    click.echo(f"target: {report.target.describe()}")
    click.echo(f"series: {report.series.name} for SGLang {report.series.version} "
               f"({plural(len(report.series.patches), 'patch', 'patches')}, {plural(len(report.series.touched_files), 'file')})")
    for gate in report.gates:
        click.echo(gate.line())
        for extra in gate.details[1:]:
            click.echo(f"  {extra}")
    for verdict in report.dry.verdicts:
        click.echo(verdict.line())
    for note in report.notes:
        click.echo(f"note: {note}")
    if report.applied_state is not None:
        click.echo(f"state: applied ({report.applied_state.get('series')}, {report.applied_state.get('applied_at')})")
    refusal = report.refusal
    if refusal:
        click.echo(f"result: apply would refuse: {refusal}")
        click.get_current_context().exit(1)
    skipped = [g.name for g in report.gates if g.status == "skipped"]
    click.echo("result: apply would succeed" + (f" (skipped: {', '.join(skipped)})" if skipped else ""))


@patch_group.command("apply")
@sglang_option
@series_option
@click.option("--no-contract-gate", is_flag=True, help="Apply without the contract catalog gates (reported, never silent).")
@click.option("--with", "stacked", multiple=True, metavar="NAME",
              help="Then a series that applies over it (e.g. draft-steps); all of them or none.")
@one_line_errors
def apply_command(sglang_path, series_name, no_contract_gate, stacked):
    """Apply every patch of the series, or none."""
    applied = []
    try:
        for name in (series_name, *stacked):
            _apply_one(sglang_path, name, no_contract_gate)
            applied.append(name)
    except SpectraceError as exc:
        if not applied:
            raise
        for name in reversed(applied):  # all or none: undo the ones this command applied
            engine.revert(sglang_path, name)
        raise SpectraceError(f"{exc}; reverted {', '.join(repr(n) for n in reversed(applied))}") from None


def _apply_one(sglang_path, series_name, no_contract_gate):
    result = engine.apply(sglang_path, series_name, use_contracts=not no_contract_gate, progress=click.echo)
    if no_contract_gate:
        click.echo("warning: applied WITHOUT the contract gates (--no-contract-gate)")
    for note in result.notes:
        click.echo(f"note: {note}")
    state = result.state
    click.echo(
        f"applied {plural(len(state['patches']), 'patch', 'patches')} of '{result.series.name}' to {plural(len(state['files']), 'file')} "
        f"in {result.target.root}; state: {result.target.state_dir(result.series.name)}"
    )


@patch_group.command("status")
@sglang_option
@click.option("--series", "series_name", default=DEFAULT_SERIES, show_default=True,
              help="Without spectrace's record, the series to look for in the files (applied by hand).")
@one_line_errors
def status_command(sglang_path, series_name):
    """Which series is applied to a tree, and whether its files are still as applied."""
    report = engine.status(sglang_path, series_name)
    _echo_lines(report.recovered)
    click.echo(f"target: {report.target.describe()}")
    for name in report.orphaned:
        state_dir = report.target.state_dir(name)
        click.echo(
            f"applied: {name}, but its record {state_dir / engine.STATE} is missing; the originals are kept in "
            f"{state_dir / engine.ORIGINALS}: 'spectrace patch revert --sglang {sglang_path} --series {name}' restores them"
        )
    if not report.applied and not report.orphaned:
        hand = report.by_hand
        if hand is not None and hand.complete:
            click.echo(
                f"applied by hand (no spectrace state): series '{hand.series}', patches {', '.join(hand.found)}; "
                f"revert with 'patch -R -p1' (last patch first), or let spectrace take it over: "
                f"spectrace patch adopt --sglang {sglang_path} --series {hand.series}"
            )
        elif hand is not None and hand.found:
            click.echo(
                f"partly applied by hand (no spectrace state): series '{hand.series}': {', '.join(hand.found)} in the tree, "
                f"{', '.join(hand.missing)} not; undo them with 'patch -R -p1', then 'spectrace patch apply'"
            )
        else:
            click.echo("not patched")
        return
    for state, files in report.applied:
        edited = [f for f in files if not f.state.startswith("patched")]
        original = [f for f in files if f.state == "original"]
        if original and len(original) == len(edited):
            since = (f"; {plural(len(original), 'file')} original again (a reinstall?): "
                     f"'spectrace patch revert' removes the rest and the record")
        else:
            since = f"; {plural(len(edited), 'file')} changed since" if edited else "; intact"
        click.echo(
            f"applied: {state['series']} ({plural(len(state['patches']), 'patch', 'patches')}, {state['applied_at']})"
            + since
            + ("; adopted: applied by hand" if state.get("adopted") else "")
        )
        for patch in state["patches"]:
            click.echo(f"  {patch['name']}")
        for f in files:
            click.echo(f"  {f.path}: {f.state}")


@patch_group.command("revert")
@sglang_option
@series_option
@click.option("--force", is_flag=True, help="Restore the originals even over edits made since apply (listed first), "
                                            "or when the state record is damaged.")
@click.option("--reset-state", is_flag=True, help="Only forget spectrace's record of the series; leave every file as it is.")
@one_line_errors
def revert_command(sglang_path, series_name, force, reset_state):
    """Restore every file the series changed to its bytes before apply."""
    if force and reset_state:
        raise SpectraceError("--force restores the files, --reset-state leaves them: pass one of them")
    state, _ = engine.revert(sglang_path, series_name, force=force, progress=click.echo, reset_state=reset_state)
    if reset_state:
        click.echo(f"forgot the record of '{series_name}' ({', '.join(state['reset'])}); the files are as they were; "
                   f"'spectrace patch status' says what is in them")
        return
    restored = len(state["files"]) - len(state["already_original"])
    already = (f" ({plural(len(state['already_original']), 'file')} already as before apply)"
               if state["already_original"] else "")
    click.echo(f"reverted '{state['series']}': {plural(restored, 'file')} restored byte for byte{already}")


@patch_group.command("adopt")
@sglang_option
@series_option
@one_line_errors
def adopt_command(sglang_path, series_name):
    """Record a series applied by hand (patch -p1, git apply) as applied, so that revert can undo it."""
    state = engine.adopt(sglang_path, series_name)
    target = engine.resolve_target(sglang_path)
    click.echo(
        f"adopted '{state['series']}': {plural(len(state['patches']), 'patch', 'patches')} in {plural(len(state['files']), 'file')} of {target.root}; "
        f"originals kept in {target.state_dir(state['series']) / engine.ORIGINALS}; 'spectrace patch revert' undoes it"
    )


@patch_group.command("manifest")
@click.option("--sglang", "sglang_path", required=True, metavar="PATH", help="A PRISTINE tree of the series' SGLang version.")
@series_option
@click.option("--series-dir", type=click.Path(file_okay=False, path_type=Path), default=None,
              help="Root holding <series>/<version>/ (default: SPECTRACE_SERIES_DIR, else the installed patches/).")
@one_line_errors
def manifest_command(sglang_path, series_name, series_dir):
    """(Series authors) write manifest.toml: sha256 of each patch and of each pristine file it touches."""
    target = engine.resolve_target(sglang_path)
    series = load_series(series_name, target.version, root=series_dir)
    dry = engine.dry_run(series, target.root)
    if not dry.ok:
        bad = next(v for v in dry.verdicts if not v.applies)
        raise SpectraceError(f"not a pristine tree for this series: {bad.line()}")
    path = series.directory / "manifest.toml"
    write_output(str(path), render_manifest(series, target.root))
    click.echo(f"wrote {path} ({plural(len(series.patches), 'patch', 'patches')}, {plural(len(series.touched_files), 'file')})")
