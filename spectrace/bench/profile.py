"""``--profile``: where a configuration's GPU time goes. After an engine's timed runs, one more
untimed run per concurrency under SGLang's own torch profiler (``start_profile`` / ``stop_profile``,
GPU activity only); each trace it writes (one per TP rank) is reduced here to the GPU's busy and
idle time per output token and its longest idle gaps. Two configurations that decode at different
speeds then show whether the difference is GPU work (busy) or the host leaving the GPU waiting
(idle), the gaps say where the waits are (a prefill boundary, a sync), and the time per kernel says
which kernels a busier one runs more of."""

from __future__ import annotations

import gzip
import json
import re
from pathlib import Path

from spectrace.errors import SpectraceError

# the chrome trace's device-side events (torch.profiler through Kineto); CPU ops are not recorded
DEVICE_CATEGORIES = {"kernel", "gpu_memcpy", "gpu_memset"}
GAP_MS = 1.0  # idle gaps at least this long are counted and the longest listed
LONGEST = 3
# a kernel's name up to its template or argument list: the instantiations of one kernel add up
KERNEL_NAME = re.compile(r"^(?:void )?([^<(]+)")


def read_trace(path: Path) -> dict:
    """A chrome trace (``.json`` or ``.json.gz``) as written by ``torch.profiler.export_chrome_trace``."""
    try:
        raw = gzip.decompress(path.read_bytes()) if path.suffix == ".gz" else path.read_bytes()
        trace = json.loads(raw)
    except (OSError, ValueError) as exc:  # gzip.BadGzipFile is an OSError
        raise SpectraceError(f"cannot read the profiler trace {path}: {exc}")
    if not isinstance(trace, dict) or not isinstance(trace.get("traceEvents"), list):
        raise SpectraceError(f"{path} is not a chrome trace (no traceEvents list)")
    return trace


def device_events(trace: dict):
    """The trace's complete events on the GPU: kernels, copies and memsets."""
    return (e for e in trace["traceEvents"]
            if isinstance(e, dict) and e.get("cat") in DEVICE_CATEGORIES and e.get("ph") == "X" and "ts" in e)


def busy_spans(trace: dict) -> list[tuple[float, float]]:
    """The GPU's busy time as disjoint (start, end) spans in microseconds, over every stream."""
    spans = sorted((float(e["ts"]), float(e["ts"]) + float(e.get("dur", 0))) for e in device_events(trace))
    merged: list[list[float]] = []
    for start, end in spans:
        if merged and start <= merged[-1][1]:
            merged[-1][1] = max(merged[-1][1], end)
        else:
            merged.append([start, end])
    return [(s, e) for s, e in merged]


def kernel_name(name: str) -> str:
    m = KERNEL_NAME.match(name.replace("(anonymous namespace)::", "").strip())
    return (m.group(1) if m else name).strip() or name


def kernel_times(trace: dict) -> dict[str, tuple[float, int]]:
    """Each device event's name (kernel_name) with its total microseconds and its count."""
    totals: dict[str, list] = {}
    for e in device_events(trace):
        t = totals.setdefault(kernel_name(str(e.get("name", "?"))), [0.0, 0])
        t[0] += float(e.get("dur", 0))
        t[1] += 1
    return {name: (us, n) for name, (us, n) in totals.items()}


def summarize_trace(trace: dict, output_tokens: int) -> dict:
    """Busy and idle milliseconds from the first to the last device event, per output token, the
    idle gaps of at least GAP_MS, and each kernel's microseconds and calls per output token."""
    spans = busy_spans(trace)
    if not spans:
        raise SpectraceError("the trace holds no GPU activity")
    busy = sum(e - s for s, e in spans) / 1e3
    window = (spans[-1][1] - spans[0][0]) / 1e3
    gaps = sorted(((b[0] - a[1]) / 1e3 for a, b in zip(spans, spans[1:])), reverse=True)
    long_gaps = [g for g in gaps if g >= GAP_MS]
    per = max(output_tokens, 1)
    return {"output_tokens": output_tokens, "window_ms": round(window, 3), "busy_ms": round(busy, 3),
            "busy_ms_per_token": round(busy / per, 4), "idle_ms_per_token": round((window - busy) / per, 4),
            "gaps_over_1ms": len(long_gaps), "gaps_over_1ms_total": round(sum(long_gaps), 3),
            "longest_gaps_ms": [round(g, 2) for g in gaps[:LONGEST]],
            "kernels": {name: [round(us / per, 3), round(n / per, 4)]
                        for name, (us, n) in sorted(kernel_times(trace).items(), key=lambda kv: -kv[1][0])}}


def rank_of(path: Path) -> int:
    """The TP rank in SGLang's trace file name (``<id>-TP-<rank>[...].trace.json.gz``)."""
    m = re.search(r"-TP-(\d+)", path.name)
    return int(m.group(1)) if m else 0


def profile_run(driver, folder: Path, run, output_tokens) -> list[dict]:
    """``run()`` between the driver's start_profile and stop_profile; one summary per trace file,
    rank by rank. ``output_tokens(outs)`` counts the run's tokens."""
    folder.mkdir(parents=True, exist_ok=True)
    before = set(folder.glob("*.trace.json*"))
    driver.start_profile(str(folder))
    try:
        outs = run()
    finally:
        driver.stop_profile()  # SGLang writes the traces before it answers
    traces = sorted(set(folder.glob("*.trace.json*")) - before, key=rank_of)
    if not traces:
        raise SpectraceError(f"SGLang's profiler wrote no trace into {folder}")
    tokens = output_tokens(outs)
    return [dict(summarize_trace(read_trace(t), tokens), rank=rank_of(t), trace=t.name) for t in traces]
