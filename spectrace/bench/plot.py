"""bench.png: median output tokens/s against concurrency, one line per configuration."""

from __future__ import annotations

from pathlib import Path

from spectrace.bench.tables import median_tok_per_s, timed_runs


def plot_points(result: dict) -> list[tuple[int, float]]:
    points = sorted((c, median_tok_per_s(runs)) for c, runs in timed_runs(result).items())
    return [(c, m) for c, m in points if m]


def render_plot(results: list[dict], path: Path, title: str) -> bool:
    """Write the plot; False (and no file) when no configuration has a timed run."""
    lines = [(r, plot_points(r)) for r in results]
    lines = [(r, points) for r, points in lines if points]
    if not lines:
        return False
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(7, 4.5))
    for r, points in lines:
        label = r["name"] + ("" if r.get("shims", "off") == "off" else f" (shims {r['shims']})")
        ax.plot([c for c, _ in points], [m for _, m in points], marker="o", label=label)
    ax.set_xscale("log", base=2)
    ax.set_xlabel("concurrency")
    ax.set_ylabel("output tokens/s")
    ax.set_title(title)
    ax.grid(True, which="both", alpha=0.3)
    ax.legend()
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)
    return True
