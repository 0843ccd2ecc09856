"""The pytest11 plugin: catalog contracts as test items."""

from __future__ import annotations


pytest_plugins = ["pytester"]

CATALOG = __import__("pathlib").Path(__file__).resolve().parents[1] / "contracts" / "catalog"


def test_contracts_become_items(pytester):
    result = pytester.runpytest("--spectrace-sglang", "0.5.9",
                                "--spectrace-catalog", str(CATALOG), "-v")
    # skipped: four contracts of other versions (0.5.12's SPEC2-OUT-RESOLVE-TOKENS, three of
    # 0.5.17+), and the two the dynamic-disable series adds (their producer exists only in a patched tree)
    result.assert_outcomes(passed=6, skipped=6)
    result.stdout.fnmatch_lines(["*SPEC2-DISABLED-NDI SKIPPED*", "*SPEC2-NDI-SPECINFO PASSED*", "*SPEC2-NDI-SEQLENS PASSED*"])


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
