"""A series that applies over another (patches/draft-steps over dynamic-disable, 0.5.17 and 0.5.23), as quilt
stacks patches: applied only over its base, `apply --with` takes both or neither, the base is not
reverted from under it, and reverting both in turn gives the release back byte for byte. And the
stacked series itself: generated from its sources, formatted as SGLang formats its code."""

from __future__ import annotations

import difflib
import filecmp
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from test_series_format import changed_lines, sglang_format

ROOT = Path(__file__).resolve().parent.parent
STACKED = ROOT / "patches/draft-steps"

pytestmark = [pytest.mark.slow, pytest.mark.skipif(shutil.which("patch") is None, reason="needs patch(1)")]


def spectrace(*args):
    return subprocess.run([sys.executable, "-m", "spectrace", "patch", *map(str, args)],
                          capture_output=True, text=True)


@pytest.fixture(params=["0.5.17", "0.5.23"])
def version(request):
    return request.param


@pytest.fixture
def release(sglang_source, tmp_path, version):
    root = tmp_path / "tree"
    shutil.copytree(sglang_source(version).root / "sglang", root / "sglang")
    return root


def same_as(tree: Path, release_root: Path) -> bool:
    cmp = filecmp.dircmp(tree / "sglang", release_root / "sglang")
    def clean(c):
        return not (c.left_only or c.right_only or c.diff_files) and all(clean(s) for s in c.subdirs.values())
    return clean(cmp)


def test_the_stacked_series_is_refused_without_its_base(release, sglang_source, version):
    proc = spectrace("apply", "--sglang", release, "--series", "draft-steps")
    assert proc.returncode == 2
    assert len(proc.stderr.strip().splitlines()) == 1
    assert "applies over 'dynamic-disable', which is not applied here" in proc.stderr
    assert same_as(release, sglang_source(version).root)


def test_with_applies_both_and_they_revert_in_turn_to_the_release(release, sglang_source, version):
    proc = spectrace("apply", "--sglang", release, "--with", "draft-steps")
    assert proc.returncode == 0, proc.stderr
    assert "applied 2 patches of 'draft-steps'" in proc.stdout
    status = spectrace("status", "--sglang", release).stdout
    assert "applied: draft-steps" in status and "applied: dynamic-disable" in status
    assert "changed since" not in status and "patched over by 'draft-steps'" in status
    base_first = spectrace("revert", "--sglang", release)
    assert base_first.returncode == 2 and "revert 'draft-steps' first" in base_first.stderr
    assert spectrace("revert", "--sglang", release, "--series", "draft-steps").returncode == 0
    assert spectrace("revert", "--sglang", release).returncode == 0
    assert same_as(release, sglang_source(version).root)


def test_with_a_series_that_cannot_apply_leaves_the_release_as_it_was(release, sglang_source, version):
    proc = spectrace("apply", "--sglang", release, "--with", "draft-steps", "--with", "no-such-series")
    assert proc.returncode == 2
    assert "no patch series 'no-such-series'" in proc.stderr
    assert "reverted 'draft-steps', 'dynamic-disable'" in proc.stderr
    assert same_as(release, sglang_source(version).root)


def test_the_stacked_series_is_generated_from_its_sources(version):
    proc = subprocess.run([sys.executable, str(STACKED / "tools/make_series.py"), version, "--check"],
                          capture_output=True, text=True)
    assert proc.returncode == 0, proc.stdout + proc.stderr


def test_what_the_stacked_series_adds_is_formatted_as_sglang_formats(release):
    assert spectrace("apply", "--sglang", release, "--with", "draft-steps").returncode == 0
    module = (release / "sglang/srt/speculative/draft_steps.py").read_text()
    assert sglang_format(module) == module
    worker = release / "sglang/srt/speculative/eagle_worker_v2.py"
    state = release / ".spectrace/patches/draft-steps/originals/sglang/srt/speculative/eagle_worker_v2.py"
    before, after = state.read_text().splitlines(), worker.read_text().splitlines()
    ours = {j for tag, _, _, j1, j2 in difflib.SequenceMatcher(None, before, after, autojunk=False).get_opcodes()
            if tag in ("insert", "replace") for j in range(j1, j2)}
    assert ours and not ours & changed_lines(after, sglang_format(worker.read_text()).splitlines())
