"""bench.png of a serving run (``--workload``): the run over time, one line per configuration in
each panel: requests sent per second (the schedule's conversation rate dashed), requests in flight,
the share of decode steps that verified drafts, output tokens per second, and TPOT p50 / p99 of the
requests that ended in each bin. Where the server's metrics were sampled, its running batch and its
spec-on gauge (1 - sglang:spec_disabled) are dotted beside the client's figures."""

from __future__ import annotations

from pathlib import Path

from spectrace.bench.serving_metrics import mean_in_flight, percentile, request_times
from spectrace.bench.serving_tables import request_records, windows
from spectrace.bench.workload import Workload

BINS = 60  # per run: a few seconds each on a GPU run's workload


def series(records: list[dict], end: float, width: float) -> dict[str, list]:
    """Per bin of ``width`` seconds: sent/s, in flight, spec-step share, tok/s, TPOT p50 and p99 (ms)."""
    edges = [i * width for i in range(int(end / width) + 1)]
    times = [(t, t.end_s) for t in map(request_times, records) if t is not None]
    tokens = [0] * len(edges)  # one pass over every chunk
    for r in records:
        last = 0
        for t, n in r.get("chunks") or []:
            k = int((r["sent_s"] + t) / width)
            if k < len(tokens):
                tokens[k] += n - last
            last = n
    out: dict[str, list] = {k: [] for k in ("t", "sent", "in_flight", "spec", "tok", "tpot50", "tpot99")}
    for i, a in enumerate(edges):
        b = a + width
        ended = [t for t, e in times if a <= e < b]
        tpots = [t.tpot_s * 1000 for t in ended if t.tpot_s is not None]
        steps = sum(t.verify_steps + t.plain_steps for t in ended)
        out["t"].append(a + width / 2)
        out["sent"].append(sum(1 for r in records if a <= r["sent_s"] < b) / width)
        out["in_flight"].append(mean_in_flight(records, a, b))
        out["spec"].append(sum(t.verify_steps for t in ended) / steps if steps else None)
        out["tok"].append(tokens[i] / width)
        out["tpot50"].append(percentile(tpots, 50))
        out["tpot99"].append(percentile(tpots, 99))
    return out


def render_serving_plot(results: list[dict], workload: Workload, path: Path) -> bool:
    """Write the picture; False (and no file) when no configuration has a finished request."""
    shown = [r for r in results if any(request_times(x) for x in request_records(r))]
    if not shown:
        return False
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    end = windows(workload, shown)[-1][2]
    width = max(end / BINS, 0.5)
    fig, axes = plt.subplots(5, 1, figsize=(9, 12), sharex=True)
    starts = workload.phase_starts()
    nominal_t = [t for s, p in zip(starts, workload.phases) for t in (s, s + p.duration_s)]
    axes[0].plot(nominal_t, [p.rate for p in workload.phases for _ in (0, 1)], "k--", lw=1, label="schedule (conversations / s)")
    for r in shown:
        s = series(request_records(r), end, width)
        line, = axes[0].plot(s["t"], s["sent"], label=r["name"])
        color = line.get_color()
        axes[1].plot(s["t"], s["in_flight"], color=color)
        samples = (r.get("serving") or {}).get("samples") or []
        running = [(x["t_s"], x["values"]["running"]) for x in samples if "running" in x["values"]]
        if running:
            axes[1].plot(*zip(*running), ":", color=color)
        axes[2].plot(s["t"], s["spec"], color=color)
        disabled = [(x["t_s"], 1 - x["values"]["spec_disabled"]) for x in samples if "spec_disabled" in x["values"]]
        if disabled:  # the dynamic-disable gauge: 1 while the scheduler decodes plainly
            axes[2].plot(*zip(*disabled), ":", color=color)
        axes[3].plot(s["t"], s["tok"], color=color)
        axes[4].plot(s["t"], s["tpot50"], color=color)
        axes[4].plot(s["t"], s["tpot99"], "--", color=color, lw=0.8)
    axes[4].axhline(workload.tpot_limit_ms, color="grey", lw=0.8)
    labels = ("requests sent / s", "in flight (running :)", "verify-step share (gauge :)", "output tok/s",
              "TPOT ms p50 (p99 --)")
    for ax, label in zip(axes, labels):
        ax.set_ylabel(label)
        ax.grid(True, alpha=0.3)
        for s in starts[1:]:
            ax.axvline(s, color="grey", lw=0.5)
    for p, s in zip(workload.phases, starts):
        axes[0].text(s + p.duration_s / 2, 1.02, p.name, transform=axes[0].get_xaxis_transform(), ha="center")
    axes[2].set_ylim(-0.05, 1.05)
    axes[-1].set_xlabel("seconds into the run")
    axes[0].legend(loc="upper right", fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return True
