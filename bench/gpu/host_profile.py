"""The host side of two torch-profiler traces taken with Python stacks (probe_dd.py --profile-cpu 1).

    python3 bench/gpu/host_profile.py OUT/profile-base/c1 OUT/profile-dd/c1 [--functions 40] [--frames 4]

``trace_kernels.py`` says how much device work each configuration ran; this says what the host did
and what launched the device work between two decode steps. Per trace, on the scheduler's thread
(the thread with the most Python events):
- **the gap between two decode graphs**: from the end of one step's CUDA-graph work on the device to
  the start of the next graph's. Its median length, the device time and the number of kernels and
  copies in it, and, for the step with the median gap, each of those with the innermost Python
  frames that launched it (``--frames``);
- **the host before the first graph**: the top-level calls of the event loop from the trace's start
  to the first graph launch (the request's prefill), each with its duration;
- **host time per function**: the inclusive time of each Python function and each operator
  (line numbers and object addresses dropped, so that one function is one row), in both traces,
  largest difference first (``--functions`` rows);
- **the speed of the same host calls** (``--op-speed N``): the median duration of each operator and
  CUDA runtime call that both traces made at least N times. When every one of them is slower in one
  trace, that process's host ran slower (its CPU, or the profiler's own cost), not its code.
"""

from __future__ import annotations

import argparse
import collections
import re
import statistics
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from trace_kernels import DEVICE_CATEGORIES, GRAPH_LAUNCHES, graph_work, trace_events, trace_files  # noqa: E402

HOST_CATEGORIES = ("python_function", "cpu_op", "cuda_runtime")


def _short(name: str) -> str:
    """A frame's name without its object address and with the path cut to the package."""
    name = re.sub(r" at 0x[0-9a-f]+", "", name)
    return re.sub(r"^.*/(?:sglang/srt/)?", "", name)


def _function(name: str) -> str:
    """One key per function: line numbers dropped too."""
    return re.sub(r"\(\d+\)", "", _short(name))


class Trace:
    def __init__(self, path: Path):
        events = [e for f in trace_files(path) for e in trace_events(f)]
        python = collections.Counter(e.get("tid") for e in events if e.get("cat") == "python_function")
        if not python:
            raise SystemExit(f"host_profile: {path} has no Python events (take it with --profile-cpu 1)")
        self.thread = python.most_common(1)[0][0]
        self.host = sorted(
            (e for e in events if e.get("cat") in HOST_CATEGORIES and e.get("tid") == self.thread),
            key=lambda e: (e["ts"], -e["dur"]),
        )
        self.device = sorted((e for e in events if e.get("cat") in DEVICE_CATEGORIES), key=lambda e: e["ts"])
        self.runtime = {
            e["args"]["correlation"]: e
            for e in events
            if e.get("cat") == "cuda_runtime" and "correlation" in e.get("args", {})
        }
        self.start = min(e["ts"] for e in self.host)
        # (start, end) on the device of each graph launch's work, in time order
        self.graph_spans = sorted(
            (work[0]["ts"], max(e["ts"] + e["dur"] for e in work)) for work in graph_work(events).values()
        )

    def launcher(self, device_event: dict):
        return self.runtime.get(device_event.get("args", {}).get("correlation"))

    def frames(self, at: dict, depth: int) -> list[str]:
        """The innermost ``depth`` Python frames (and operators) around host event ``at``."""
        around = [
            e
            for e in self.host
            if e is not at
            and e["cat"] != "cuda_runtime"
            and e["ts"] <= at["ts"]
            and e["ts"] + e["dur"] >= at["ts"] + at["dur"]
        ]
        return [_short(e["name"]) for e in around[-depth:]]


def gaps(trace: Trace) -> list[dict]:
    """Per pair of consecutive graphs: the gap, and the device events that start inside it."""
    graphs = trace.graph_spans
    out = []
    i = 0
    for (_, end), (start, _) in zip(graphs, graphs[1:]):
        while i < len(trace.device) and trace.device[i]["ts"] < end:
            i += 1
        j = i
        inside = []
        while j < len(trace.device) and trace.device[j]["ts"] < start:
            inside.append(trace.device[j])
            j += 1
        out.append({"gap": start - end, "end": end, "start": start, "events": inside})
    return out


def gap_report(name: str, trace: Trace, depth: int) -> str:
    found = gaps(trace)
    if not found:
        return f"{name}: fewer than two graph launches\n"
    ordered = sorted(found, key=lambda g: g["gap"])
    median = ordered[len(ordered) // 2]
    busy = statistics.median(sum(e["dur"] for e in g["events"]) for g in found)
    count = statistics.median(len(g["events"]) for g in found)
    lines = [
        f"**{name}**: {len(found)} gaps between decode graphs; median {median['gap']:.1f} µs, "
        f"device busy in it (median) {busy:.1f} µs, kernels and copies (median) {count:g}",
        "",
        "The step with the median gap, from the end of its graph (µs):",
        "",
        "| at µs | device µs | what | launched from (innermost frames last) |",
        "|---|---|---|---|",
    ]
    for e in median["events"]:
        r = trace.launcher(e)
        where = " > ".join(trace.frames(r, depth)) if r is not None else "-"
        lines.append(f"| {e['ts'] - median['end']:.1f} | {e['dur']:.1f} | `{e['name'][:60]}` | {where} |")
    lines.append(f"| {median['start'] - median['end']:.1f} | | next graph | |")
    return "\n".join(lines) + "\n"


def first_graph_report(name: str, trace: Trace, min_ms: float = 0.2) -> str:
    launches = [e["ts"] for e in trace.host if e["cat"] == "cuda_runtime" and e["name"] in GRAPH_LAUNCHES]
    if not launches:
        return f"{name}: no graph launch\n"
    loops = [e for e in trace.host if "event_loop" in e["name"] and e["cat"] == "python_function"]
    outer = loops[-1] if loops else None  # the innermost event loop frame
    lo = outer["ts"] if outer else trace.start
    tops, end = [], lo
    for e in trace.host:
        if e is outer or e["ts"] < lo or e["ts"] >= launches[0] or e["cat"] != "python_function":
            continue
        if e["ts"] >= end:
            tops.append(e)
            end = e["ts"] + e["dur"]
    lines = [
        f"**{name}**: first graph launch {(launches[0] - trace.start) / 1e3:.2f} ms after the trace's "
        "first host event; the event loop's top-level calls before it (over "
        f"{min_ms} ms):",
        "",
        "| at ms | ms | call |",
        "|---|---|---|",
    ]
    for e in tops:
        if e["dur"] >= min_ms * 1e3:
            lines.append(f"| {(e['ts'] - trace.start) / 1e3:.2f} | {e['dur'] / 1e3:.2f} | {_short(e['name'])} |")
    return "\n".join(lines) + "\n"


def functions_report(names: tuple[str, str], a: Trace, b: Trace, rows: int) -> str:
    def totals(trace: Trace):
        time, count = collections.defaultdict(float), collections.Counter()
        for e in trace.host:
            key = (e["cat"], _function(e["name"]))
            time[key] += e["dur"]
            count[key] += 1
        return time, count

    (ta, ca), (tb, cb) = totals(a), totals(b)
    # the second trace's extra host time first
    keys = sorted(set(ta) | set(tb), key=lambda k: (ta.get(k, 0.0) - tb.get(k, 0.0), k[1]))
    lines = [
        f"| kind | function or operator | calls {names[0]} | calls {names[1]} | ms {names[0]} | ms {names[1]} | difference ms |",
        "|---|---|---|---|---|---|---|",
    ]
    for k in keys[:rows]:
        x, y = ta.get(k, 0.0) / 1e3, tb.get(k, 0.0) / 1e3
        lines.append(f"| {k[0]} | `{k[1][:90]}` | {ca[k]} | {cb[k]} | {x:.2f} | {y:.2f} | {y - x:+.2f} |")
    return "\n".join(lines) + "\n"


def op_speed_report(names: tuple[str, str], a: Trace, b: Trace, min_calls: int) -> str:
    def durations(trace: Trace):
        out = collections.defaultdict(list)
        for e in trace.host:
            if e["cat"] in ("cpu_op", "cuda_runtime"):
                out[(e["cat"], e["name"])].append(e["dur"])
        return out

    da, db = durations(a), durations(b)
    keys = [k for k in da if k in db and min(len(da[k]), len(db[k])) >= min_calls]
    if not keys:
        return f"no operator or runtime call made at least {min_calls} times in both traces\n"
    ratio = {k: statistics.median(db[k]) / max(statistics.median(da[k]), 1e-9) for k in keys}
    lines = [
        f"| kind | call | calls {names[0]} | calls {names[1]} | median µs {names[0]} | median µs {names[1]} | ratio |",
        "|---|---|---|---|---|---|---|",
    ]
    for k in sorted(keys, key=lambda k: -ratio[k]):
        lines.append(f"| {k[0]} | `{k[1][:60]}` | {len(da[k])} | {len(db[k])} | {statistics.median(da[k]):.2f} | "
                     f"{statistics.median(db[k]):.2f} | {ratio[k]:.2f} |")
    lines += ["", f"Median of the ratios: {statistics.median(ratio.values()):.2f} over {len(keys)} calls."]
    return "\n".join(lines) + "\n"


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("first", type=Path, help="trace folder or file (the reference, e.g. the baseline)")
    ap.add_argument("second", type=Path, help="trace folder or file to compare with it")
    ap.add_argument("--functions", type=int, default=40, help="rows of the per-function table (0: none)")
    ap.add_argument("--frames", type=int, default=4, help="Python frames shown per launch")
    ap.add_argument("--op-speed", type=int, default=0, metavar="N",
                    help="also the median duration of the host calls both traces made N or more times")
    args = ap.parse_args(argv)
    names = (str(args.first), str(args.second))  # as trace_kernels.py names them
    traces = [Trace(args.first), Trace(args.second)]
    out = ["## The gap between two decode graphs", ""]
    for name, t in zip(names, traces):
        out += [gap_report(name, t, args.frames), ""]
    out += ["## The host before the first decode graph", ""]
    for name, t in zip(names, traces):
        out += [first_graph_report(name, t), ""]
    if args.functions:
        out += ["## Host time per function (scheduler thread, inclusive)", "",
                functions_report(names, *traces, args.functions)]
    if args.op_speed:
        out += ["## The same host calls, median duration (scheduler thread)", "",
                op_speed_report(names, *traces, args.op_speed)]
    sys.stdout.write("\n".join(out))


if __name__ == "__main__":
    main()
