"""bench/gpu/trace_kernels.py: the device-time comparison of two torch-profiler traces that attributes
a disabled step's extra cost (docs/gpu-plan.md). Run on small Chrome traces in the profiler's format."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import pytest


@pytest.fixture(scope="module")
def tool(bench_gpu_tool):
    return bench_gpu_tool("trace_kernels")


def kernel(name, ts, dur, stream=7, cat="kernel"):
    return {"ph": "X", "cat": cat, "name": name, "ts": ts, "dur": dur, "pid": 0, "tid": stream}


def write_trace(folder: Path, events) -> Path:
    folder.mkdir(parents=True)
    # host-side events of the same trace are not device work and must not be counted
    events = events + [{"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "ts": 0, "dur": 5,
                        "pid": 0, "tid": 1}]
    with gzip.open(folder / "x-TP-0.trace.json.gz", "wt") as f:
        json.dump({"traceEvents": events}, f)
    return folder


def test_counts_device_time_idle_gaps_and_the_kernels_that_differ(tool, tmp_path, capsys):
    base = write_trace(tmp_path / "base", [kernel("gemm", 0, 100), kernel("gemm", 100, 100),
                                           kernel("index", 200, 4)])
    # two more small kernels, a copy, and a 30 µs gap in which the device waited for the host
    dd = write_trace(tmp_path / "dd", [kernel("gemm", 0, 100), kernel("gemm", 100, 100),
                                       kernel("index", 200, 4), kernel("index", 204, 4),
                                       kernel("index", 238, 4), kernel("Memcpy HtoD", 242, 2, cat="gpu_memcpy")])
    a, b = tool.load(base), tool.load(dd)
    assert (a["events"], a["busy_us"], a["span_us"], a["idle_us"]) == (3, 204, 204, 0)
    assert (b["events"], b["busy_us"], b["span_us"], b["idle_us"]) == (6, 214, 244, 30)
    assert b["by_name"]["index"] == (3, 12)

    tool.main([str(base), str(dd), "--steps", "2", "--top", "2"])
    out = capsys.readouterr().out
    assert f"| {dd} | 3.0 | 107.0 | 122.0 | 15.0 |" in out  # per step
    kernel_rows = [line for line in out.splitlines() if line.startswith("| `")]
    assert kernel_rows[0] == "| `index` | 1 | 3 | 4.0 | 12.0 |" and len(kernel_rows) == 2


def test_a_missing_or_empty_folder_is_a_one_line_error(tool, tmp_path):
    with pytest.raises(SystemExit, match="does not exist"):
        tool.main([str(tmp_path / "nope"), str(tmp_path / "nope")])
    (tmp_path / "empty").mkdir()
    with pytest.raises(SystemExit, match="no \\*.trace.json.gz"):
        tool.main([str(tmp_path / "empty"), str(tmp_path / "empty")])


def launch(ts, correlation):
    return {"ph": "X", "cat": "cuda_runtime", "name": "cudaGraphLaunch", "ts": ts, "dur": 3, "pid": 0, "tid": 1,
            "args": {"correlation": correlation}}


def work(name, ts, dur, correlation, stream=7):
    return dict(kernel(name, ts, dur, stream), args={"correlation": correlation})


def test_graph_steps_split_each_decode_step_into_its_graph_and_the_work_around_it(tool, tmp_path, capsys):
    # four decode graphs (correlations 1-4) 100 µs apart except one step 80 µs slower (a flush);
    # before the first graph, a prefill kernel; between graphs, small kernels launched one by one
    events = [work("prefill_gemm", 0, 40, 100)]
    starts = [50, 150, 330, 430]
    for i, (s, c) in enumerate(zip(starts, (1, 2, 3, 4))):
        events += [launch(s - 30, c), work("gemm", s, 60, c), work("norm", s + 60, 10, c)]
        events += [work("resolve", s + 75, 2, 10 + i), work("record", s + 80, 3, 20 + i)]
    events.append(work("flush_gemm", 250, 70, 99))  # the slow step's extra work (no graph)
    a = tool.graph_steps(events)
    assert a["steps"] == 4
    assert a["median_period_us"] == 100 and (a["slow_steps"], a["slow_excess_us"]) == (1, 80)
    assert a["graph_span_us"] == 70 and a["graph_busy_us"] == 70
    assert (a["outside_events"], a["outside_busy_us"]) == (2, 5)  # the flush step has 3 (75 µs)
    assert (a["before_first_us"], a["before_first_busy_us"]) == (50, 40)
    assert a["span_us"] == 430 + 83 - 0

    folder = write_trace(tmp_path / "t", events)
    tool.main([str(folder), str(folder), "--top", "1", "--graph-steps"])
    out = capsys.readouterr().out
    header = next(line for line in out.splitlines() if line.startswith("| trace | graph steps"))
    assert header.split(" | ")[2:6] == ["median step period µs", "median graph span µs",
                                        "median graph device time µs", "slower steps (> median + 50 µs)"]
    assert header.count("|") == out.splitlines()[out.splitlines().index(header) + 1].count("|")
    assert f"| {folder} | 4 | 100.0 | 70.0 | 70.0 | 1 | 80.0 | 2, 5.0 | 50.0 (40.0) | 513.0 |" in out


def test_graph_steps_want_one_trace_per_argument(tool, tmp_path):
    folder = write_trace(tmp_path / "two", [kernel("gemm", 0, 1)])
    (folder / "y-TP-1.trace.json.gz").write_bytes((folder / "x-TP-0.trace.json.gz").read_bytes())
    with pytest.raises(SystemExit, match="reads one trace"):
        tool.main([str(folder), str(folder), "--graph-steps"])


def test_by_position_compares_each_occurrence_of_a_kernel_inside_the_graphs(tool, tmp_path, capsys):
    # two graph launches per trace, each with three "gemm" layers and a "norm"; in the second trace
    # the third layer's gemm is 4 µs slower in one graph and 2 µs in the other (median 3)
    def graphs(extra):
        events = []
        for c, at, slow in ((1, 0, extra[0]), (2, 1000, extra[1])):
            events += [launch(at - 10, c), work("gemm", at, 50, c), work("norm", at + 50, 5, c),
                       work("gemm", at + 60, 50, c), work("gemm", at + 120, 50 + slow, c)]
        events.append(work("gemm", 3000, 999, 77))  # not in a graph: not counted
        return events

    assert tool.graph_positions(graphs((0, 0)), "gemm") == {0: 50, 1: 50, 2: 50}
    assert tool.graph_positions(graphs((4, 2)), "gemm") == {0: 50, 1: 50, 2: 53}
    base = write_trace(tmp_path / "base", graphs((0, 0)))
    dd = write_trace(tmp_path / "dd", graphs((4, 2)))
    tool.main([str(base), str(dd), "--top", "1", "--by-position", "gemm"])
    out = capsys.readouterr().out
    assert "| 2 | 50.00 | 53.00 | +3.00 |" in out and "| all | 150.0 | 153.0 | +3.0 |" in out
    with pytest.raises(SystemExit, match="no kernel named nope"):
        tool.main([str(base), str(dd), "--by-position", "nope"])


def test_by_position_in_an_eager_trace_counts_occurrences_modulo_the_launches_per_step(tool, tmp_path):
    # two eager steps of three gemms (no graph launch), the third one slower, plus a stray fourth
    # "gemm" of an unfinished step that is dropped
    durations = [50, 50, 60, 50, 50, 64, 999]
    events = [kernel("gemm", 100 * i, d) for i, d in enumerate(durations)]
    assert tool.graph_positions(events, "gemm") == {}
    assert tool.graph_positions(events, "gemm", per_step=3) == {0: 50, 1: 50, 2: 62}
    folder = write_trace(tmp_path / "eager", events)
    with pytest.raises(SystemExit, match="no kernel named gemm... inside a graph launch"):
        tool.main([str(folder), str(folder), "--by-position", "gemm"])


def test_an_eager_count_that_is_not_a_multiple_of_the_launches_per_step_is_reported(tool, tmp_path, capsys):
    # call 4 of 2026-11-30's sixth session: 4,025 launches of a per-layer GEMM against 32 per step
    events = [kernel("gemm", 100 * i, 50) for i in range(7)]
    aligned = write_trace(tmp_path / "aligned", events[:6])
    ragged = write_trace(tmp_path / "ragged", events)
    tool.main([str(aligned), str(ragged), "--by-position", "gemm", "--per-step", "3"])
    out = capsys.readouterr().out
    assert f"note: {ragged} has 7 launches of gemm..., not a multiple of 3: the last 1 are left out" in out
    assert f"note: {aligned}" not in out
