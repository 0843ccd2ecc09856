"""docs/dynamic-disable-options.md lists every switch of the shipped dynamic-disable series: each
server argument that patch 0002 adds and each SGLANG_SPEC_DISABLE_* variable the series reads, in
every SGLang version it targets, and nothing that no series has. Read from the shipped series: the manifests' environment lists (checked against their patches) and patch 0002."""

from __future__ import annotations

import importlib.util
import re
from pathlib import Path

import pytest

from spectrace.patches.series import available_series, load_series

ROOT = Path(__file__).resolve().parent.parent
DOC = ROOT / "docs/dynamic-disable-options.md"
VERSIONS = available_series(ROOT / "patches")["dynamic-disable"]


def shipped(version: str):
    return load_series("dynamic-disable", version, ROOT / "patches")


def _make_series():
    path = ROOT / "patches/dynamic-disable/tools/make_series.py"
    spec = importlib.util.spec_from_file_location("make_series", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.mark.parametrize("version", VERSIONS)
def test_each_manifest_lists_the_variables_its_patches_read(version):
    """The manifest's environment list is the one make_series derives from the patches (a
    hand-edited or stale manifest would hide a switch from the options page below)."""
    series = shipped(version)
    texts = [p.path.read_text() for p in series.patches]
    assert series.manifest["environment"] == _make_series().environment(texts)


@pytest.mark.parametrize("version", VERSIONS)
def test_each_manifest_lists_the_server_arguments_its_patches_add(version):
    """The manifest's server_args are the parser.add_argument options the series adds (derived by
    make_series, not typed by hand), every one of them."""
    series = shipped(version)
    texts = [p.path.read_text() for p in series.patches]
    assert series.manifest["server_args"] == _make_series().server_args(texts)
    added = "\n".join(line for t in texts for line in t.splitlines() if line.startswith("+"))
    if "parser.add_argument" in added:
        assert set(series.manifest["server_args"]) == set(re.findall(r"[\"'](--speculative-[a-z-]+)[\"']", added))
    else:  # annotated ServerArgs fields (0.5.17): each option's field is added
        assert all(f"+    {a[2:].replace('-', '_')}: A[" in added for a in series.manifest["server_args"])


def switches() -> tuple[set[str], set[str]]:
    arguments, variables = set(), set()
    for version in VERSIONS:
        series = shipped(version)
        variables |= set(series.manifest["environment"])
        arguments |= set(series.manifest["server_args"])  # derived from the code (test above)
    return arguments, variables


def test_the_options_page_lists_every_switch_of_every_series_and_no_other():
    arguments, variables = switches()
    assert "--speculative-dynamic-disable" in arguments and "SGLANG_SPEC_DISABLE_PREFILL_KV_ONLY" in variables
    listed = set(re.findall(r"^\| `([^`]+)`", DOC.read_text(), re.M))
    assert arguments | variables <= listed, sorted((arguments | variables) - listed)
    assert listed <= arguments | variables, sorted(listed - arguments - variables)
