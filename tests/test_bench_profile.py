"""``spectrace bench --profile`` on the CPU: a chrome trace reduced to the GPU's busy and idle time
per output token, the run between the driver's start_profile and stop_profile, the table, and a
profile that cannot be taken (the HTTP stand-in writes no trace) reported in one line while the
timed runs stand."""

from __future__ import annotations

import gzip
import json

import pytest
from click.testing import CliRunner

from spectrace.bench import profile, sweep, tables
from spectrace.cli import main
from spectrace.errors import SpectraceError


def kernel(ts, dur, stream=7, cat="kernel", name="k"):
    return {"ph": "X", "cat": cat, "name": name, "pid": 0, "tid": stream, "ts": ts, "dur": dur}


# microseconds: two overlapping kernels on two streams (busy 0-150), a copy (200-250), a 2 ms gap,
# a kernel (2250-2350); a host op, which is no GPU time, spans the gap
TRACE = {"traceEvents": [
    kernel(0, 100), kernel(50, 100, stream=8), kernel(200, 50, cat="gpu_memcpy"), kernel(2250, 100),
    {"ph": "X", "cat": "cpu_op", "name": "aten::mm", "pid": 1, "tid": 1, "ts": 100, "dur": 3000},
    {"ph": "M", "name": "process_name", "pid": 0, "args": {"name": "GPU 0"}},
]}


def test_a_trace_is_reduced_to_busy_and_idle_time_per_output_token():
    assert profile.busy_spans(TRACE) == [(0.0, 150.0), (200.0, 250.0), (2250.0, 2350.0)]
    s = profile.summarize_trace(TRACE, output_tokens=10)
    assert s["window_ms"] == pytest.approx(2.35) and s["busy_ms"] == pytest.approx(0.3)
    assert s["busy_ms_per_token"] == pytest.approx(0.03) and s["idle_ms_per_token"] == pytest.approx(0.205)
    assert s["gaps_over_1ms"] == 1 and s["gaps_over_1ms_total"] == pytest.approx(2.0)
    assert s["longest_gaps_ms"] == [2.0, 0.05]


def test_each_kernel_adds_up_its_instantiations_per_output_token():
    assert profile.kernel_name("void flashinfer::BatchDecodeKernel<128u, 8u>(Params)") == "flashinfer::BatchDecodeKernel"
    assert profile.kernel_name("Memcpy HtoD (Pinned -> Device)") == "Memcpy HtoD"
    assert profile.kernel_name("void at::native::(anonymous namespace)::indexSelectSmallIndex<c10::BFloat16, "
                               "long>(int)") == "at::native::indexSelectSmallIndex"
    assert profile.kernel_name("void (anonymous namespace)::elementwise_kernel<128, 2>(int)") == "elementwise_kernel"
    assert profile.kernel_name("_fwd_kernel_stage1") == "_fwd_kernel_stage1"
    trace = {"traceEvents": [kernel(0, 30, name="void gemm<1>(A)"), kernel(40, 10, name="void gemm<2>(B)"),
                             kernel(60, 5, cat="gpu_memcpy", name="Memcpy DtoD (Device -> Device)")]}
    s = profile.summarize_trace(trace, output_tokens=4)
    assert s["kernels"] == {"gemm": [10.0, 0.5], "Memcpy DtoD": [1.25, 0.25]}
    assert list(s["kernels"]) == ["gemm", "Memcpy DtoD"]  # the longest first


def test_the_kernel_table_puts_first_what_a_configuration_runs_more_of_than_the_reference():
    def result(name, kernels, engines=1):
        rank = {"rank": 0, "kernels": kernels}
        return {"name": name, "runs": [], "profiles": [{"concurrency": 64, "ranks": [rank], "engine": e}
                                                       for e in range(engines)]}

    base = result("baseline", {"gemm": [100.0, 1.0], "attn": [20.0, 0.5]})
    core = result("core", {"gemm": [100.5, 1.0], "attn": [20.0, 0.5], "scatter": [1.5, 0.02]}, engines=2)
    lines = tables._kernel_table([base, core], "baseline")
    rows = [line for line in lines if line.startswith("| `")]
    assert rows[0] == "| `scatter` | - | 1.500 (0.02) |"
    assert rows[1] == "| `gemm` | 100.000 (1) | 100.500 (1) |"
    assert "C=64:" in lines and "| kernel | baseline | core |" in lines
    assert tables._kernel_table([base], "baseline") == []  # nothing to set it against


def test_a_trace_without_gpu_activity_or_not_a_trace_is_refused(tmp_path):
    with pytest.raises(SpectraceError, match="no GPU activity"):
        profile.summarize_trace({"traceEvents": [TRACE["traceEvents"][4]]}, 10)
    bad = tmp_path / "x.trace.json.gz"
    bad.write_bytes(b"not gzip")
    with pytest.raises(SpectraceError, match="cannot read the profiler trace"):
        profile.read_trace(bad)
    (tmp_path / "y.trace.json").write_text("[]")
    with pytest.raises(SpectraceError, match="not a chrome trace"):
        profile.read_trace(tmp_path / "y.trace.json")


class TracingDriver:
    """The driver calls profile_run makes, with a profiler that writes one trace per TP rank on stop,
    as SGLang's scheduler does (``<id>-TP-<rank>.trace.json.gz``)."""

    def __init__(self, ranks=2):
        self.ranks, self.calls, self.folder = ranks, [], None

    def start_profile(self, output_dir):
        self.calls.append("start")
        self.folder = output_dir

    def stop_profile(self):
        self.calls.append("stop")
        for rank in reversed(range(self.ranks)):
            path = f"{self.folder}/1764590000.0-TP-{rank}.trace.json.gz"
            with gzip.open(path, "wt") as fh:
                json.dump(TRACE, fh)


def test_the_run_is_profiled_between_start_and_stop_and_each_rank_summarized(tmp_path):
    driver = TracingDriver(ranks=2)

    def run():
        driver.calls.append("run")
        return ["outs"]

    ranks = profile.profile_run(driver, tmp_path / "C1", run, lambda outs: 10 * len(outs))
    assert driver.calls == ["start", "run", "stop"]
    assert [r["rank"] for r in ranks] == [0, 1] and ranks[1]["trace"] == "1764590000.0-TP-1.trace.json.gz"
    assert ranks[0]["output_tokens"] == 10 and ranks[0]["busy_ms_per_token"] == pytest.approx(0.03)


def test_the_profiler_is_stopped_when_the_run_fails(tmp_path):
    driver = TracingDriver(ranks=1)

    def run():
        raise RuntimeError("engine died")

    with pytest.raises(RuntimeError):
        profile.profile_run(driver, tmp_path, run, len)
    assert driver.calls == ["start", "stop"]


def test_profiles_are_tabled_per_engine_and_rank():
    summary = profile.summarize_trace(TRACE, 10)
    first = {"name": "core", "runs": [], "profiles": [{"concurrency": 1, "ranks": [dict(summary, rank=0)]}]}
    second = {"name": "core", "runs": [], "profiles": [{"concurrency": 1, "error": "RuntimeError: no"}]}
    merged = sweep.merge_engine(sweep.merge_engine(None, first, 0, 1), second, 1, 1)
    lines = tables._profile_table([merged])
    assert "| core | 1 engine 1 | 0 | 0.0300 | 0.2050 | 1 (2) | 2, 0.05 |" in lines
    assert "| core | 1 engine 2 | - | no profile: RuntimeError: no | | | |" in lines


def test_a_profile_that_cannot_be_taken_is_one_line_and_the_timed_runs_stand(server, tmp_path):
    out = tmp_path / "out"
    res = CliRunner().invoke(main, ["bench", "--url", server, "--config", "a=", "--concurrency", "1,4",
                                    "--input-len", "8", "--output-len", "5", "--seq-reps", "2",
                                    "--vocab-size", "500", "--no-plot", "--profile", "-o", str(out)])
    assert res.exit_code == 0, res.output
    (a,) = json.loads((out / "bench.json").read_text())["results"]
    assert [r["tok_per_s"] > 0 for r in a["runs"]] == [True, True]
    assert [p["concurrency"] for p in a["profiles"]] == [1, 4]
    assert all("wrote no trace" in p["error"] for p in a["profiles"])
    md = (out / "bench.md").read_text()
    assert "| a | 4 | - | no profile: SpectraceError: SGLang's profiler wrote no trace into" in md
