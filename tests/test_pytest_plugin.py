"""The pytest11 plugin: catalog contracts as test items."""

from __future__ import annotations

import pytest


pytest_plugins = ["pytester"]

CATALOG = __import__("pathlib").Path(__file__).resolve().parents[1] / "contracts" / "catalog"


@pytest.mark.slow  # the plugin analyses 0.5.9 whole
def test_contracts_become_items(pytester):
    result = pytester.runpytest("--spectrace-sglang", "0.5.9",
                                "--spectrace-catalog", str(CATALOG), "-v")
    # skipped: five contracts of other versions (0.5.12's SPEC2-OUT-RESOLVE-TOKENS, four of
    # 0.5.17+), and the two the dynamic-disable series adds (their producer exists only in a patched tree)
    result.assert_outcomes(passed=6, skipped=7)
    result.stdout.fnmatch_lines(["*SPEC2-DISABLED-NDI SKIPPED*", "*SPEC2-NDI-SPECINFO PASSED*", "*SPEC2-NDI-SEQLENS PASSED*"])
    # collected (and counted) once, by the session, each reported on one line under its node id
    result.stdout.fnmatch_lines(["collecting ... collected 13 items"])
    lines = result.stdout.lines
    assert sum("SPEC2-NDI-SEQLENS" in line for line in lines) == 1
    result.stdout.fnmatch_lines(["spectrace: contracts of SGLang 0.5.9 from *contracts/catalog",
                                 "*contracts/catalog::spectrace-contracts::SPEC2-NDI-SEQLENS PASSED*"])
    assert not any(line.startswith(("::", "[location]")) for line in lines)


@pytest.mark.slow  # the plugin analyses 0.5.9 whole
def test_contracts_beside_other_tests_and_k_selection(pytester):
    pytester.makepyfile(test_other="def test_plain():\n    pass\n")
    result = pytester.runpytest("--spectrace-sglang", "0.5.9", "--spectrace-catalog", str(CATALOG),
                                "-k", "plain or SEQLENS", "-v")
    result.assert_outcomes(passed=2)
    result.stdout.fnmatch_lines(["collecting ... collected 14 items / 12 deselected / 2 selected"])


def test_bad_catalog_is_one_collection_error(pytester, tmp_path):
    bad = tmp_path / "bad.toml"
    bad.write_text("[[contract]]\nid = 1 2\n")
    result = pytester.runpytest("--spectrace-sglang", "0.5.9", "--spectrace-catalog", str(bad))
    assert result.ret != 0
    result.stdout.fnmatch_lines(["*spectrace: *bad.toml: not valid TOML*"])
    assert "Traceback" not in result.stdout.str()


def test_failure_prints_both_sites(pytester, sglang_copy):
    root = sglang_copy("0.5.9", subdirs=("sglang/srt/managers", "sglang/srt/speculative"))
    worker = root / "sglang/srt/speculative/eagle_worker_v2.py"
    worker.write_text(worker.read_text().replace("batch_output.next_draft_input = (", "_dropped = ("))
    result = pytester.runpytest("--spectrace-sglang", str(root),
                                "--spectrace-catalog", str(CATALOG))
    outcomes = result.parseoutcomes()
    assert outcomes.get("failed", 0) >= 2
    result.stdout.fnmatch_lines([
        "*scheduler read:*sglang/srt/managers/scheduler.py:2347*",
        "*worker return path:*sglang/srt/speculative/eagle_worker_v2.py:673*",
    ])


def test_patched_0_5_12_passes_by_default(pytester, sglang_copy, monkeypatch):
    """The plugin fails on an unknown by default; the dynamic-disable series' debug path passes a
    lambda the checker follows, so the patched tree has none."""
    from spectrace.patches import engine
    from spectrace.patches.series import SERIES_DIR_ENV

    monkeypatch.delenv(SERIES_DIR_ENV, raising=False)
    root = sglang_copy("0.5.12", subdirs=("sglang/srt",))
    engine.apply(root, "dynamic-disable")
    result = pytester.runpytest("--spectrace-sglang", str(root), "--spectrace-catalog", str(CATALOG), "-v")
    result.assert_outcomes(passed=8, skipped=5)
    result.stdout.fnmatch_lines(["*SPEC2-DISABLED-NDI PASSED*", "*SPEC2-NDI-SEQLENS PASSED*"])
