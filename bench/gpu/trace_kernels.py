"""Compare the GPU work of two configurations from SGLang's torch-profiler traces (probe_dd.py --profile).

    python3 bench/gpu/trace_kernels.py OUT/profile-base/c1 OUT/profile-dd/c1 [--steps N] [--top 25]

Each argument is a folder (or a file) of Chrome traces (``*.trace.json.gz`` or ``*.json``). Per
trace: how many kernels, memcpys and memsets ran, their summed device time, the span from the first
to the last, and the idle time between them on the busiest stream (the device waiting for the
host). With ``--steps``, the totals are also given per scheduler step. Then the kernel names whose
count or time differ most between the two configurations, which is where a per-step cost comes from.
"""

from __future__ import annotations

import argparse
import collections
import gzip
import json
import sys
from pathlib import Path

DEVICE_CATEGORIES = ("kernel", "gpu_memcpy", "gpu_memset")


def trace_files(path: Path) -> list[Path]:
    if path.is_file():
        return [path]
    files = sorted(path.rglob("*.trace.json.gz")) + sorted(path.rglob("*.json"))
    if not files:
        raise SystemExit(f"trace_kernels: no *.trace.json.gz or *.json trace under {path}")
    return files


def device_events(path: Path) -> list[dict]:
    opener = gzip.open if path.suffix == ".gz" else open
    with opener(path, "rt") as f:
        trace = json.load(f)
    events = trace.get("traceEvents", trace) if isinstance(trace, dict) else trace
    return [e for e in events if e.get("ph") == "X" and e.get("cat") in DEVICE_CATEGORIES]


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
    args = ap.parse_args(argv)
    for p in (args.first, args.second):
        if not p.exists():
            raise SystemExit(f"trace_kernels: {p} does not exist")
    try:
        first, second = load(args.first), load(args.second)
    except (OSError, ValueError) as e:
        raise SystemExit(f"trace_kernels: cannot read a trace: {e}")
    print(report(first, second, (str(args.first), str(args.second)), args.steps, args.top))


if __name__ == "__main__":
    sys.exit(main())
