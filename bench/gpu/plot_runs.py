#!/usr/bin/env python3
"""Plot output tokens/s against concurrency from probe_dd.py results (results.jsonl or .xz).

    python3 plot_runs.py OUT.png TITLE RESULTS:PHASE[:LABEL] ...

Each RESULTS:PHASE names one configuration (a phase of one device call); its timed runs (integer
concurrencies) become one line.  Log-scaled concurrency; with repetitions (--reps), each point is
the median of the concurrency's runs.
"""
import json
import lzma
import statistics
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402


def runs_of(path: str, phase: str) -> list:
    opener = lzma.open if path.endswith(".xz") else open
    with opener(path, "rt") as fh:
        for line in fh:
            rec = json.loads(line)
            if rec["name"] == phase:
                return [r for r in rec["runs"] if isinstance(r["concurrency"], int)]
    raise SystemExit(f"no phase {phase!r} in {path}")


def main() -> None:
    if len(sys.argv) < 4:
        raise SystemExit(__doc__.strip().splitlines()[2].strip())
    out, title, specs = sys.argv[1], sys.argv[2], sys.argv[3:]
    fig, ax = plt.subplots(figsize=(7, 4.5))
    for spec in specs:
        path, phase, *label = spec.split(":")
        by_c = {}
        for r in runs_of(path, phase):
            by_c.setdefault(r["concurrency"], []).append(r["tok_per_s"])
        concs = sorted(by_c)
        ax.plot(concs, [statistics.median(by_c[c]) for c in concs], marker="o",
                label=label[0] if label else phase)
    ax.set_xscale("log", base=2)
    ax.set_yscale("log")
    ax.set_xlabel("concurrency")
    ax.set_ylabel("output tokens/s")
    ax.set_title(title, fontsize=10)
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(out, dpi=120)


if __name__ == "__main__":
    main()
