"""SpecDisableRuntime and the start-up refusal of the 0.5.17 and 0.5.23 cores against SGLang's own
objects on the CPU: ServerArgs (its whole resolution), ModelConfig, Req, ScheduleBatch,
ReqToTokenPool, TokenToKVPoolAllocator and RadixCache from the release with the series applied, in a subprocess
(tests/core_runtime_cpu.py says what it stands in for and why). Needs torch and SGLang's Python
dependencies; where they are missing the tests skip with the import that failed."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
SERIES_DIR = ROOT / "patches/dynamic-disable"

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module", params=["0.5.17", "0.5.23"])
def probe(request, tmp_path_factory):
    from spectrace.bench.models import write_dummy_models
    from spectrace.source import fetch_version

    pytest.importorskip("torch")
    if shutil.which("patch") is None:
        pytest.skip("needs patch(1)")
    version = request.param
    tree = tmp_path_factory.mktemp(f"sglang-{version}")
    shutil.copytree(fetch_version(version, offline=True).root / "sglang", tree / "sglang")
    series = SERIES_DIR / version
    for name in (n for n in (series / "series").read_text().split() if n.endswith(".patch")):
        subprocess.run(["patch", "-p1", "-s", "--batch", "-d", str(tree), "-i", str(series / name)], check=True)
    models = write_dummy_models("small", tmp_path_factory.mktemp("models"))
    env = dict(os.environ, PYTHONPATH=str(tree))
    env.pop("SGLANG_SPEC_DYNAMIC_DISABLE_ALLOW_UNVERIFIED", None)
    proc = subprocess.run([sys.executable, str(ROOT / "tests/core_runtime_cpu.py"), models["target"], models["draft"]],
                          capture_output=True, text=True, env=env, cwd=tmp_path_factory.mktemp("cwd"), timeout=600)
    last = (proc.stdout.strip().splitlines() or [""])[-1]
    if last.startswith("SKIP: "):
        pytest.skip(last[6:])
    assert proc.returncode == 0, proc.stderr[-3000:]
    return json.loads(last)


def test_a_configuration_no_gpu_run_covered_is_refused_in_one_line_naming_its_option(probe):
    # on the CPU, SGLang's own resolution turns the overlap scheduler off for speculative decoding
    assert probe["cpu_default"] == "--speculative-dynamic-disable refused: --disable-overlap-schedule"
    assert probe["page_size"] == "--speculative-dynamic-disable refused: --page-size > 1"
    assert probe["allowed"] is None  # SGLANG_SPEC_DYNAMIC_DISABLE_ALLOW_UNVERIFIED=1


def test_a_server_without_the_flag_is_not_checked(probe):
    assert probe["without_the_flag"] is None


def test_the_runtime_decides_on_a_real_schedule_batch(probe):
    s = probe["speculate"]
    assert s["first_decision"] is True  # a bucket measures speculation first
    assert s["return_logprob"] is True  # logprobs take the verify-shaped output path
    assert s["above_bound_plain"] is False  # --speculative-disable-above-bs 16, 20 requests
    assert s["above_bound_with_hidden_states"] is True


def test_no_stale_draft_kv_reaches_the_radix_cache(probe):
    """A finished request of 8 prompt and 6 output tokens whose positions 11-13 were decoded plainly
    and never caught up: the radix cache (EAGLE's bigram keys) holds its first 11 tokens' KV, 10
    bigrams, and the stale slots go back to the allocator. The next request in that row, fully
    written (a prefill reset the row), is cached whole: 13 bigrams."""
    assert probe["stale_tail"] == {"cached": 10, "held": 10}
    assert probe["after_prefill"] == {"cached": 13}
