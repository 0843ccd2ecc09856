"""bench/gpu/host_profile.py: what the host ran and what launched the device work between two decode
graphs, from torch-profiler traces with Python stacks. Run on a small Chrome trace in the profiler's
format (its categories, correlation ids and the scheduler thread's nested frames)."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import pytest


@pytest.fixture(scope="module")
def tool(bench_gpu_tool):
    return bench_gpu_tool("host_profile")


def host(cat, name, ts, dur, tid=1, **args):
    event = {"ph": "X", "cat": cat, "name": name, "ts": ts, "dur": dur, "pid": 0, "tid": tid}
    if args:
        event["args"] = args
    return event


def device(name, ts, dur, correlation):
    return {"ph": "X", "cat": "kernel", "name": name, "ts": ts, "dur": dur, "pid": 0, "tid": 7,
            "args": {"correlation": correlation}}


def trace(folder: Path, extra_between: bool) -> Path:
    """Two decode steps: the event loop's prefill run_batch, then two graph launches; between the
    graphs a store launched from overlap_utils, and (extra_between) a record from forward_disabled."""
    events = [
        host("python_function", "scheduler.py(1578): event_loop_overlap", 0, 1000),
        host("python_function", "sglang/srt/managers/scheduler.py(2485): get_next_batch_to_run", 10, 20),
        host("python_function", "sglang/srt/managers/scheduler.py(2996): run_batch", 40, 300),
        host("python_function", "<built-in method to of Tensor object at 0x7f00>", 50, 4),
        host("python_function", "helper_on_another_thread", 0, 900, tid=2),  # fewer events: not the scheduler
    ]
    for i, at in enumerate((400, 600)):  # the decode steps' graph launches
        events += [host("cuda_runtime", "cudaGraphLaunch", at, 5, correlation=i + 1),
                   device("gemm", at + 20, 100, i + 1)]
    events += [
        host("python_function", "sglang/srt/managers/overlap_utils.py(161): store_to_map", 450, 30),
        host("cpu_op", "aten::copy_", 455, 10),
        host("cuda_runtime", "cudaMemcpyAsync", 458, 4, correlation=11),
        device("Memcpy DtoD", 525, 2, 11),
    ]
    if extra_between:
        events += [
            host("python_function", "sglang/srt/speculative/dynamic_disable.py(1235): _record_skipped", 490, 40),
            host("cpu_op", "aten::index_put_", 495, 20),
            host("cuda_runtime", "cudaLaunchKernel", 500, 5, correlation=12),
            device("index_put", 540, 4, 12),
        ]
    folder.mkdir(parents=True)
    with gzip.open(folder / "t-TP-0.trace.json.gz", "wt") as f:
        json.dump({"traceEvents": events}, f)
    return folder


def test_the_gap_between_graphs_lists_each_launch_with_its_frames(tool, tmp_path):
    base, dd = tool.Trace(trace(tmp_path / "base", False)), tool.Trace(trace(tmp_path / "dd", True))
    assert base.thread == 1
    # graph 1 ends at 520, graph 2 starts at 620
    [gap] = tool.gaps(dd)
    assert gap["gap"] == 100 and [e["name"] for e in gap["events"]] == ["Memcpy DtoD", "index_put"]
    report = tool.gap_report("dd", dd, 2)
    assert "median 100.0 µs, device busy in it (median) 6.0 µs, kernels and copies (median) 2" in report
    assert "| 5.0 | 2.0 | `Memcpy DtoD` | overlap_utils.py(161): store_to_map > aten::copy_ |" in report
    assert "| 20.0 | 4.0 | `index_put` | dynamic_disable.py(1235): _record_skipped > aten::index_put_ |" in report
    assert report.rstrip().endswith("| 100.0 | | next graph | |")


def test_functions_are_keyed_without_line_numbers_or_addresses_and_the_extra_time_comes_first(tool, tmp_path):
    base, dd = tool.Trace(trace(tmp_path / "base", False)), tool.Trace(trace(tmp_path / "dd", True))
    table = tool.functions_report(("base", "dd"), base, dd, 3).splitlines()
    assert table[2] == "| python_function | `dynamic_disable.py: _record_skipped` | 0 | 1 | 0.00 | 0.04 | +0.04 |"
    assert "`<built-in method to of Tensor object>`" in tool.functions_report(("b", "d"), base, dd, 20)


def test_the_host_before_the_first_graph_is_the_event_loops_top_level_calls(tool, tmp_path):
    report = tool.first_graph_report("dd", tool.Trace(trace(tmp_path / "dd", True)), min_ms=0.01)
    assert "first graph launch 0.40 ms after" in report
    rows = [line for line in report.splitlines() if line.startswith("| 0.")]
    assert rows == ["| 0.01 | 0.02 | scheduler.py(2485): get_next_batch_to_run |",
                    "| 0.04 | 0.30 | scheduler.py(2996): run_batch |"]


def test_a_trace_without_python_events_is_a_one_line_error(tool, tmp_path):
    folder = tmp_path / "plain"
    folder.mkdir()
    with gzip.open(folder / "p-TP-0.trace.json.gz", "wt") as f:
        json.dump({"traceEvents": [device("gemm", 0, 1, 1)]}, f)
    with pytest.raises(SystemExit, match="no Python events"):
        tool.Trace(folder)


def test_op_speed_gives_the_median_duration_of_the_calls_both_traces_made(tool, tmp_path):
    def folder(name, scale):
        events = [host("python_function", "scheduler.py(1): event_loop_overlap", 0, 10_000)]
        events += [host("cpu_op", "aten::empty", 10 + 20 * i, 2 * scale) for i in range(5)]
        events += [host("cuda_runtime", "cudaLaunchKernel", 200 + 20 * i, 4 * scale, correlation=i) for i in range(5)]
        events.append(host("cpu_op", "aten::only_here", 400, 3))  # in one trace only: no row
        path = tmp_path / name
        path.mkdir()
        with gzip.open(path / "t-TP-0.trace.json.gz", "wt") as f:
            json.dump({"traceEvents": events}, f)
        return tool.Trace(path)

    report = tool.op_speed_report(("base", "dd"), folder("base", 1), folder("dd", 2), 5)
    assert "| cpu_op | `aten::empty` | 5 | 5 | 2.00 | 4.00 | 2.00 |" in report
    assert "| cuda_runtime | `cudaLaunchKernel` | 5 | 5 | 4.00 | 8.00 | 2.00 |" in report
    assert "only_here" not in report and "Median of the ratios: 2.00 over 2 calls." in report
    assert "at least 6 times" in tool.op_speed_report(("base", "dd"), folder("b6", 1), folder("d6", 1), 6)
