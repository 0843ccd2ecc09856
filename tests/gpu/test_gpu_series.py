"""GPU tests (``pytest -m gpu``): the dynamic-disable series and the runtime shims in real SGLang
engines with the bench's 8B-shaped dummy model. They need CUDA and SPECTRACE_GPU_SGLANG, the
unpacked SGLang tree (patched with the series for the switching test); `bash bench/gpu/run.sh
--patch --pytest .gpu/b0512` sets both up. Results go to SPECTRACE_GPU_OUT (else a temporary
folder): each bench's bench.md, bench.json and engine logs."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

torch = pytest.importorskip("torch")
if not torch.cuda.is_available():
    pytest.skip("no CUDA device", allow_module_level=True)

pytestmark = pytest.mark.gpu

SPEC = ("--speculative-algorithm EAGLE3 --speculative-draft-model-path {draft} --speculative-eagle-topk 1 "
        "--speculative-num-steps 3 --speculative-num-draft-tokens 4")
FAULT_DIR = Path(__file__).resolve().parent / "fault"


@pytest.fixture(scope="module")
def sglang_tree() -> Path:
    tree = os.environ.get("SPECTRACE_GPU_SGLANG")
    if not tree:
        pytest.skip("SPECTRACE_GPU_SGLANG (the unpacked SGLang tree) is not set: see bench/gpu/README.md")
    if not (Path(tree) / "sglang").is_dir():
        pytest.skip(f"SPECTRACE_GPU_SGLANG={tree} holds no sglang package")
    return Path(tree)


@pytest.fixture(scope="module")
def out_root(tmp_path_factory) -> Path:
    root = os.environ.get("SPECTRACE_GPU_OUT")
    return Path(root) if root else tmp_path_factory.mktemp("gpu")


def run_bench(tree: Path, out: Path, toml: str, timeout: float = 560) -> tuple[int, dict]:
    """`spectrace bench --configs` in a subprocess with the tree on PYTHONPATH; (exit status, bench.json)."""
    out.mkdir(parents=True, exist_ok=True)
    config = out / "config.toml"
    config.write_text(toml)
    env = dict(os.environ)
    path = [p for p in env.get("PYTHONPATH", "").split(os.pathsep) if p]
    if str(tree) not in path:
        env["PYTHONPATH"] = os.pathsep.join([str(tree)] + path)
    proc = subprocess.run([sys.executable, "-m", "spectrace", "bench", "--configs", str(config), "-o", str(out)],
                          env=env, cwd=out, timeout=timeout, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                          text=True)
    (out / "bench-stdout.txt").write_text(proc.stdout)
    data = json.loads((out / "bench.json").read_text()) if (out / "bench.json").exists() else {}
    return proc.returncode, data


@pytest.fixture(scope="module")
def switching(sglang_tree, out_root):
    """A baseline engine and a patched one that switches by load alone (static rule, accept rule
    off): C=64 above --speculative-disable-above-bs (24), C=1 and C=4 below the enable threshold
    (16). Dummy drafts: attention still shapes the greedy outputs, so equal outputs mean equal KV."""
    if not (sglang_tree / "sglang" / "srt" / "speculative" / "dynamic_disable.py").exists():
        pytest.skip(f"{sglang_tree} is not patched: spectrace patch apply --sglang {sglang_tree}")
    toml = f"""
[defaults]
args = "--max-running-requests 128 --cuda-graph-max-bs 128"
dummy_model = "8b"
concurrency = "1,64,4"
seq_reps = 2
plot = false
reference = "baseline"
timeout = 240

[[config]]
name = "baseline"
shims = "raise"
args = ""

[[config]]
name = "patched"
shims = "raise"
args = "{SPEC} --speculative-dynamic-disable --speculative-disable-load-rule static --speculative-disable-below-accept-len 0"
"""
    rc, data = run_bench(sglang_tree, out_root / "switching", toml)
    return rc, {r["name"]: r for r in data.get("results", [])}


def test_the_patched_engine_runs_without_violations_in_raise_mode(switching):
    rc, results = switching
    assert rc == 0, [(r["name"], r.get("error"), r.get("log")) for r in results.values()]
    for r in results.values():
        assert r["shim_total"]["violations"] == 0 and r["shim_total"]["checks"] > 0, r["shim_total"]


def test_the_patched_engine_switches_both_ways_under_load(switching):
    _, results = switching
    log = Path(results["patched"]["log"]).read_text(errors="replace")
    assert "[spec-dynamic-disable] speculation OFF at batch size" in log
    assert "[spec-dynamic-disable] speculation ON at batch size" in log


def test_greedy_outputs_equal_the_baselines(switching):
    _, results = switching
    base = {(r["concurrency"], r.get("rep", 0)): r["output_ids"] for r in results["baseline"]["runs"]}
    patched = {(r["concurrency"], r.get("rep", 0)): r["output_ids"] for r in results["patched"]["runs"]}
    assert patched.keys() == base.keys() == {(1, 0), (64, 0), (4, 0)}
    for key, outs in patched.items():
        assert outs == base[key], f"C={key[0]}: greedy outputs differ from the baseline's"


def test_kv_pools_are_restored_after_every_run(switching):
    _, results = switching
    for r in results.values():
        for run in r["runs"]:
            before, after = run["pool_before"], run["pool_after"]
            assert before and after, f"{r['name']} C={run['concurrency']}: no pool counters"
            assert after["token_free"] == before["token_free"], (r["name"], run["concurrency"], before, after)
            if "req_free" in before:
                assert after["req_free"] == before["req_free"]


def test_the_shims_catch_a_naive_disable(sglang_tree, out_root):
    toml = f"""
[defaults]
args = "--max-running-requests 128 --cuda-graph-max-bs 128"
dummy_model = "8b"
seq_reps = 2
warmup = false
plot = false
timeout = 150

[[config]]
name = "naive-warn"
shims = "warn"
concurrency = "1,16"
args = "{SPEC}"
env = {{ PYTHONPATH = "{FAULT_DIR}", NAIVE_DISABLE_ABOVE_BS = "8" }}
"""
    _, data = run_bench(sglang_tree, out_root / "fault", toml, timeout=300)
    (result,) = data["results"]  # the engine may die after the fault: the report is what counts
    assert "[fault] pid" in Path(result["log"]).read_text(errors="replace"), "the fault fixture did not load"
    checks = result.get("shim_checks") or {}
    assert checks.get("SPEC2-NDI-SPECINFO", {}).get("violations", 0) > 0, result.get("shim_total")
