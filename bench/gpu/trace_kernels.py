"""Compare the GPU work of two configurations from SGLang's torch-profiler traces (probe_dd.py --profile).

    python3 bench/gpu/trace_kernels.py OUT/profile-base/c1 OUT/profile-dd/c1 [--steps N] [--top 25]

Each argument is a folder (or a file) of Chrome traces (``*.trace.json.gz`` or ``*.json``). Per
trace: how many kernels, memcpys and memsets ran, their summed device time, the span from the first
to the last, and the idle time between them on the busiest stream (the device waiting for the
host). With ``--steps``, the totals are also given per scheduler step. Then the kernel names whose
count or time differ most between the two configurations, which is where a per-step cost comes from.

``--graph-steps`` adds the decode steps seen through their CUDA-graph launches: the host's
``cudaGraphLaunch`` and the device work with its correlation id mark where each step's graph began
on the device. Per trace (one trace per argument):
- the median period from one graph's start to the next (the steady step);
- the median span and summed device time of one graph's work;
- the periods longer than the median by more than 50 µs, and their summed excess (catch-up
  flushes and other occasional work);
- the median device work outside the graph per step (the scheduler's and the worker's small
  kernels and copies);
- the time before the first graph (the prefill and what precedes the first decode graph).

``--by-position NAME`` compares one kernel inside the graphs occurrence by occurrence: its k-th
launch in each graph (a GEMM's k-th is the k-th layer's), the median over the graphs in each trace.
A per-step difference spread evenly over every layer and one confined to some layers have different
causes. A trace without graph launches (``--cuda-graph 0``) is read with ``--per-step N``: its
kernels of that name in time order, the k-th one counted as occurrence k mod N (N launches per step).
"""

from __future__ import annotations

import argparse
import bisect
import collections
import functools
import gzip
import json
import statistics
import sys
from pathlib import Path

DEVICE_CATEGORIES = ("kernel", "gpu_memcpy", "gpu_memset")
GRAPH_LAUNCHES = ("cudaGraphLaunch", "cuGraphLaunch")
SLOW_STEP_US = 50.0  # a period this much above the median counts as an occasional slow step


def trace_files(path: Path) -> list[Path]:
    if path.is_file():
        return [path]
    files = sorted(path.rglob("*.trace.json.gz")) + sorted(path.rglob("*.json"))
    if not files:
        raise SystemExit(f"trace_kernels: no *.trace.json.gz or *.json trace under {path}")
    return files


@functools.lru_cache(maxsize=4)  # one report reads a trace for its totals, steps and positions
def trace_events(path: Path) -> list[dict]:
    opener = gzip.open if path.suffix == ".gz" else open
    with opener(path, "rt") as f:
        trace = json.load(f)
    events = trace.get("traceEvents", trace) if isinstance(trace, dict) else trace
    return [e for e in events if e.get("ph") == "X"]


def device_events(path: Path) -> list[dict]:
    return [e for e in trace_events(path) if e.get("cat") in DEVICE_CATEGORIES]


def _correlation(event: dict):
    return (event.get("args") or {}).get("correlation")


def graph_work(events: list[dict]) -> dict:
    """{correlation id of a CUDA-graph launch: the device events it ran, in time order}."""
    launched = {_correlation(e) for e in events if e.get("name") in GRAPH_LAUNCHES} - {None}
    work = collections.defaultdict(list)
    for e in sorted((e for e in events if e.get("cat") in DEVICE_CATEGORIES), key=lambda e: e["ts"]):
        if _correlation(e) in launched:
            work[_correlation(e)].append(e)
    return work


def graph_steps(events: list[dict]) -> dict:
    """The decode steps of one trace, from its graph launches (see the module docstring; µs)."""
    device = sorted((e for e in events if e.get("cat") in DEVICE_CATEGORIES), key=lambda e: e["ts"])
    work_by_launch = graph_work(events)
    launched = set(work_by_launch)
    starts = sorted(min(e["ts"] for e in work) for work in work_by_launch.values())
    if len(starts) < 2:
        return {"steps": len(starts)}
    periods = [b - a for a, b in zip(starts, starts[1:])]
    median = statistics.median(periods)
    slow = [p - median for p in periods if p > median + SLOW_STEP_US]
    graph_spans = [max(e["ts"] + e["dur"] for e in work) - min(e["ts"] for e in work)
                   for work in work_by_launch.values()]
    device_ts = [e["ts"] for e in device]  # sorted: each period's events by bisection
    outside = []
    for a, b in zip(starts, starts[1:]):
        period = device[bisect.bisect_left(device_ts, a):bisect.bisect_left(device_ts, b)]
        work = [e for e in period if _correlation(e) not in launched]
        outside.append((len(work), sum(e["dur"] for e in work)))
    before = [e for e in device if e["ts"] < starts[0]]
    return {
        "steps": len(starts),
        "median_period_us": median,
        "slow_steps": len(slow),
        "slow_excess_us": sum(slow),
        "graph_span_us": statistics.median(graph_spans),
        "graph_busy_us": statistics.median(sum(e["dur"] for e in work) for work in work_by_launch.values()),
        "outside_events": statistics.median(n for n, _ in outside),
        "outside_busy_us": statistics.median(t for _, t in outside),
        "before_first_us": starts[0] - device[0]["ts"],
        "before_first_busy_us": sum(e["dur"] for e in before),
        "span_us": max(e["ts"] + e["dur"] for e in device) - device[0]["ts"],
    }


def named_kernels(events: list[dict], prefix: str) -> list[dict]:
    """The device events named ``prefix...``, in time order."""
    return sorted((e for e in events if e.get("cat") in DEVICE_CATEGORIES and e["name"].startswith(prefix)),
                  key=lambda e: e["ts"])


def graph_positions(events: list[dict], prefix: str, per_step: int | None = None) -> dict[int, float]:
    """{k: median duration (µs) of the k-th kernel named ``prefix...`` in a graph launch's work}, or
    with ``per_step`` (eager traces), of every kernel so named whose index in time order is k mod N."""
    by_position = collections.defaultdict(list)
    if per_step:
        named = named_kernels(events, prefix)
        for i, e in enumerate(named[: len(named) - len(named) % per_step]):
            by_position[i % per_step].append(e["dur"])
    else:
        for work in graph_work(events).values():
            for k, e in enumerate(e for e in work if e["name"].startswith(prefix)):
                by_position[k].append(e["dur"])
    return {k: statistics.median(v) for k, v in sorted(by_position.items())}


def positions_report(a: dict[int, float], b: dict[int, float], names: tuple[str, str], prefix: str) -> str:
    def cell(v):
        return f"{v:.2f}" if v is not None else "-"

    lines = [f"| `{prefix[:60]}` occurrence | µs {names[0]} | µs {names[1]} | difference µs |",
             "|---|---|---|---|"]
    for k in sorted(set(a) | set(b)):
        x, y = a.get(k), b.get(k)
        diff = f"{y - x:+.2f}" if x is not None and y is not None else "-"
        lines.append(f"| {k} | {cell(x)} | {cell(y)} | {diff} |")
    both = [k for k in a if k in b]
    lines.append(f"| all | {sum(a[k] for k in both):.1f} | {sum(b[k] for k in both):.1f} | "
                 f"{sum(b[k] - a[k] for k in both):+.1f} |")
    return "\n".join(lines)


def summarize(events: list[dict]) -> dict:
    """Counts, summed device time, span and idle time (µs) of one trace's device events."""
    if not events:
        return {"events": 0, "busy_us": 0.0, "span_us": 0.0, "idle_us": 0.0, "by_name": {}}
    by_stream = collections.defaultdict(list)
    for e in events:
        by_stream[(e.get("pid"), e.get("tid"))].append(e)
    busiest = max(by_stream.values(), key=lambda evs: sum(e["dur"] for e in evs))
    busiest.sort(key=lambda e: e["ts"])
    idle, end = 0.0, busiest[0]["ts"]
    for e in busiest:
        idle += max(0.0, e["ts"] - end)
        end = max(end, e["ts"] + e["dur"])
    by_name = collections.defaultdict(lambda: [0, 0.0])
    for e in events:
        by_name[e["name"]][0] += 1
        by_name[e["name"]][1] += e["dur"]
    start = min(e["ts"] for e in events)
    stop = max(e["ts"] + e["dur"] for e in events)
    return {
        "events": len(events),
        "busy_us": sum(e["dur"] for e in events),
        "span_us": stop - start,
        "idle_us": idle,
        "by_name": {k: tuple(v) for k, v in by_name.items()},
    }


def load(path: Path) -> dict:
    return summarize([e for f in trace_files(path) for e in device_events(f)])


def one_trace(path: Path, option: str) -> Path:
    files = trace_files(path)
    if len(files) != 1:  # steps across traces (ranks, runs) would interleave
        raise SystemExit(f"trace_kernels: {option} reads one trace, {path} has {len(files)}")
    return files[0]


def load_graph_steps(path: Path) -> dict:
    return graph_steps(trace_events(one_trace(path, "--graph-steps")))


GRAPH_STEP_COLUMNS = (  # (header, cell) of the --graph-steps table
    ("graph steps", lambda s: f"{s['steps']}"),
    ("median step period µs", lambda s: f"{s['median_period_us']:,.1f}"),
    ("median graph span µs", lambda s: f"{s['graph_span_us']:,.1f}"),
    ("median graph device time µs", lambda s: f"{s['graph_busy_us']:,.1f}"),
    ("slower steps (> median + 50 µs)", lambda s: f"{s['slow_steps']}"),
    ("their excess µs", lambda s: f"{s['slow_excess_us']:,.1f}"),
    ("median device work outside the graph per step: events, µs",
     lambda s: f"{s['outside_events']:g}, {s['outside_busy_us']:,.1f}"),
    ("before the first graph µs (device busy)", lambda s: f"{s['before_first_us']:,.1f} ({s['before_first_busy_us']:,.1f})"),
    ("whole trace µs", lambda s: f"{s['span_us']:,.1f}"),
)


def graph_steps_report(a: dict, b: dict, names: tuple[str, str]) -> str:
    lines = ["| trace | " + " | ".join(h for h, _ in GRAPH_STEP_COLUMNS) + " |",
             "|---" * (len(GRAPH_STEP_COLUMNS) + 1) + "|"]
    for name, s in zip(names, (a, b)):
        if "median_period_us" not in s:  # fewer than two graph launches
            cells = [f"{s['steps']}"] + ["-"] * (len(GRAPH_STEP_COLUMNS) - 1)
        else:
            cells = [cell(s) for _, cell in GRAPH_STEP_COLUMNS]
        lines.append(f"| {name} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def report(a: dict, b: dict, names: tuple[str, str], steps: int | None, top: int) -> str:
    per = f" per step (/{steps})" if steps else ""
    div = steps or 1
    lines = [f"| trace | device events{per} | device time µs{per} | span µs{per} | idle µs on the busiest stream{per} |",
             "|---|---|---|---|---|"]
    for name, s in zip(names, (a, b)):
        lines.append(f"| {name} | {s['events'] / div:,.1f} | {s['busy_us'] / div:,.1f} | "
                     f"{s['span_us'] / div:,.1f} | {s['idle_us'] / div:,.1f} |")
    keys = set(a["by_name"]) | set(b["by_name"])
    rows = []
    for k in keys:
        ca, ta = a["by_name"].get(k, (0, 0.0))
        cb, tb = b["by_name"].get(k, (0, 0.0))
        rows.append((abs(tb - ta), k, ca, cb, ta, tb))
    rows.sort(reverse=True)
    lines += ["", f"| kernel (largest time difference first) | count {names[0]} | count {names[1]} | "
              f"µs {names[0]} | µs {names[1]} |", "|---|---|---|---|---|"]
    for _, k, ca, cb, ta, tb in rows[:top]:
        lines.append(f"| `{k[:90]}` | {ca} | {cb} | {ta:,.1f} | {tb:,.1f} |")
    return "\n".join(lines)


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("first", type=Path)
    ap.add_argument("second", type=Path)
    ap.add_argument("--steps", type=int, default=None, help="scheduler steps each trace covers")
    ap.add_argument("--top", type=int, default=25)
    ap.add_argument("--graph-steps", action="store_true", help="also the decode steps seen through their graph launches")
    ap.add_argument("--by-position", metavar="NAME", help="also one kernel (name prefix) per occurrence in the graphs")
    ap.add_argument("--per-step", type=int, metavar="N", help="--by-position in eager traces: N launches of it per step")
    args = ap.parse_args(argv)
    for p in (args.first, args.second):
        if not p.exists():
            raise SystemExit(f"trace_kernels: {p} does not exist")
    names = (str(args.first), str(args.second))
    try:
        first, second = load(args.first), load(args.second)
        steps = (load_graph_steps(args.first), load_graph_steps(args.second)) if args.graph_steps else None
        positions = [graph_positions(trace_events(one_trace(p, "--by-position")), args.by_position, args.per_step)
                     for p in (args.first, args.second)] if args.by_position else None
    except (OSError, ValueError) as e:
        raise SystemExit(f"trace_kernels: cannot read a trace: {e}")
    if positions is not None and not all(positions):
        where = f"{args.per_step} or more times" if args.per_step else "inside a graph launch"
        raise SystemExit(f"trace_kernels: no kernel named {args.by_position}... {where}")
    print(report(first, second, names, args.steps, args.top))
    if steps is not None:
        print()
        print(graph_steps_report(*steps, names))
    if positions is not None:
        print()
        print(positions_report(*positions, names, args.by_position))
        if args.per_step:
            # a count that is not a multiple of N means launches that are not one per layer per step
            # (e.g. a catch-up's draft layer): the positions after the first of them are shifted
            for p in (args.first, args.second):
                count = len(named_kernels(trace_events(one_trace(p, "--by-position")), args.by_position))
                if count % args.per_step:
                    print(f"\nnote: {p} has {count} launches of {args.by_position}..., not a multiple of "
                          f"{args.per_step}: the last {count % args.per_step} are left out, and the occurrence "
                          "numbers may be shifted from there on")


if __name__ == "__main__":
    sys.exit(main())
