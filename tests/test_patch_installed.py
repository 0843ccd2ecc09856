"""``spectrace patch ... --sglang installed``: the sglang this Python imports, patched in place.

No pip install: a copy of real 0.5.12 source in a temp directory is put on PYTHONPATH for a
subprocess, which is what ``importlib.util.find_spec("sglang")`` finds, as it would find site-packages.
"""

from __future__ import annotations

import importlib.util
import os
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from spectrace.cli import main
from spectrace.patches import engine
from spectrace.patches.series import SERIES_DIR_ENV
from test_patch_engine import SUBDIRS, build_test_series, whole_tree_digest


def _spectrace(args: list[str], env_extra: dict[str, str], cwd: Path) -> subprocess.CompletedProcess:
    env = dict(os.environ, **env_extra)
    return subprocess.run([sys.executable, "-m", "spectrace", *args], capture_output=True, text=True, env=env, cwd=cwd, timeout=600)


@pytest.fixture
def site(tmp_path, sglang_copy):
    """(site-packages stand-in holding sglang/, env for a subprocess that imports from it)."""
    tree = sglang_copy("0.5.12", subdirs=SUBDIRS)
    site = tmp_path / "site-packages"
    tree.rename(site)
    build_test_series(site, tmp_path / "series-root", "0.5.12")
    env = {"PYTHONPATH": str(site), SERIES_DIR_ENV: str(tmp_path / "series-root")}
    return site, env


def test_installed_tree_status_apply_revert(site, tmp_path):
    site, env = site
    before = whole_tree_digest(site)
    elsewhere = tmp_path / "cwd"  # not the site dir: found through sys.path, not the working directory
    elsewhere.mkdir()
    proc = _spectrace(["patch", "status", "--sglang", "installed", "--series", "test-series"], env, elsewhere)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.splitlines() == [f"target: SGLang 0.5.12 at {site.resolve()} (installed package, plain directory)", "not patched"]

    proc = _spectrace(["patch", "apply", "--sglang", "installed", "--series", "test-series", "--no-contract-gate"], env, elsewhere)
    assert proc.returncode == 0, proc.stderr
    state_dir = site.resolve() / ".spectrace" / "patches" / "test-series"  # beside sglang/, as for any tree
    assert f"state: {state_dir}" in proc.stdout
    assert (state_dir / "state.json").is_file()
    proc = _spectrace(["patch", "status", "--sglang", "installed"], env, elsewhere)
    assert "applied: test-series (2 patches" in proc.stdout and "; intact" in proc.stdout

    proc = _spectrace(["patch", "revert", "--sglang", "installed", "--series", "test-series"], env, elsewhere)
    assert proc.returncode == 0, proc.stderr
    assert whole_tree_digest(site) == before  # .spectrace/ gone too


def test_an_uninstalled_sglang_with_leftovers_is_one_line(site, tmp_path):
    """``pip uninstall sglang`` removes the files it installed; the file a series added and the
    engine's record stay. Every patch command says so instead of working on SGLang "unknown"."""
    site, env = site
    pristine = {p for p in (site / "sglang").rglob("*") if p.is_file()}
    proc = _spectrace(["patch", "apply", "--sglang", "installed", "--series", "test-series", "--no-contract-gate"], env, tmp_path)
    assert proc.returncode == 0, proc.stderr
    for path in pristine:  # what pip's RECORD lists
        path.unlink()
    left = whole_tree_digest(site)
    for command in (["status"], ["revert"], ["apply", "--no-contract-gate"], ["check"]):
        proc = _spectrace(["patch", *command, "--sglang", "installed", "--series", "test-series"], env, tmp_path)
        assert proc.returncode == 2, proc.stdout + proc.stderr
        assert proc.stdout == "" and len(proc.stderr.splitlines()) == 1, proc.stderr
        assert proc.stderr.startswith(f"spectrace: --sglang installed: {site.resolve() / 'sglang'} is no sglang package "
                                      "(no __init__.py; uninstalled?); left behind: ")
        assert "spectrace's patch record" in proc.stderr and "remove them by hand" in proc.stderr
        assert whole_tree_digest(site) == left


def test_installed_is_resolved_without_importing_sglang(site, monkeypatch):
    site, _ = site
    monkeypatch.syspath_prepend(str(site))
    importlib.invalidate_caches()
    monkeypatch.delitem(sys.modules, "sglang", raising=False)
    target = engine.resolve_target("installed")
    assert target.root == site.resolve() and target.version == "0.5.12" and target.source.origin == "installed"
    assert "sglang" not in sys.modules


def test_installed_without_sglang_is_one_line(tmp_path):
    if importlib.util.find_spec("sglang") is not None:
        pytest.skip("this Python has an importable sglang")
    out = CliRunner().invoke(main, ["patch", "status", "--sglang", "installed"])
    assert out.exit_code == 2
    assert out.output.strip().splitlines() == ["spectrace: --sglang installed: this Python has no importable sglang package"]


@pytest.mark.parametrize("command", ["apply", "revert", "check", "status"])
def test_a_version_is_not_a_tree(command, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    out = CliRunner().invoke(main, ["patch", command, "--sglang", "0.5.12"])
    assert out.exit_code == 2
    assert out.output.strip().splitlines() == [
        "spectrace: --sglang 0.5.12 is a version; patching needs a tree: a path (a checkout, a directory holding sglang/) or 'installed'"
    ]


def test_list_takes_a_version(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    out = CliRunner().invoke(main, ["patch", "list", "--sglang", "0.5.12"])
    assert out.exit_code == 0, out.output
    assert out.output.startswith("series: dynamic-disable for SGLang 0.5.12")
