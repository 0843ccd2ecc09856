"""Steady decode-step times from SGLang's decode log (one line per 40 decode steps), per batch size.

    python3 bench/gpu/decode_windows.py LOG [LOG ...] [--bs 1,4,16,64,128] [--boundaries 1]

LOG is a phase's log (``log-NAME.txt``) or a ``.tar.xz`` of them (every ``log-*.txt`` inside).
For each batch size: the windows whose ``#running-req`` is that size; the steady ones are the
upper half by ``gen throughput`` (the lower half holds a prefill, a request boundary or an idle
gap), and ms per step is ``bs / median throughput``: a plain step's time (for speculative steps,
the time per bs output tokens).

``--boundaries BS`` adds what the slow windows of that batch size cost: at C=1 (requests one after
another) a window below 0.97 of the steady throughput holds a request boundary (the finished request's
reply, the next request's arrival and prefill) or the rule's speculative measurement steps. Its excess
is its time beyond that of 40 steady steps; windows below 0.6 of steady hold an idle gap between runs
and are left out.
"""

from __future__ import annotations

import argparse
import re
import statistics
import tarfile
from pathlib import Path

LINE = re.compile(r"#running-req: (\d+),.*gen throughput \(token/s\): ([\d.]+)")


def logs(path: Path) -> dict[str, str]:
    if path.name.endswith(".tar.xz"):
        with tarfile.open(path) as tar:
            return {Path(m.name).stem.removeprefix("log-"): tar.extractfile(m).read().decode(errors="replace")
                    for m in tar.getmembers() if Path(m.name).name.startswith("log-") and m.isfile()}
    return {path.stem.removeprefix("log-"): path.read_text(errors="replace")}


def windows(text: str) -> dict[int, list[float]]:
    out: dict[int, list[float]] = {}
    for m in LINE.finditer(text):
        out.setdefault(int(m.group(1)), []).append(float(m.group(2)))
    return out


def steady_ms(values: list[float], bs: int) -> float:
    """ms per decode step: bs over the median of the upper half of the windows' throughput."""
    ordered = sorted(values)
    return bs / statistics.median(ordered[len(ordered) // 2:]) * 1e3


WINDOW_STEPS = 40  # SGLang's default --decode-log-interval (the logs here use it)
SLOW, IDLE = 0.97, 0.6


def boundary_excess_ms(values: list[float], bs: int) -> list[float]:
    """Excess ms of each slow (not idle) window over WINDOW_STEPS steady steps, in log order."""
    steady_tp = bs / steady_ms(values, bs) * 1e3
    return [WINDOW_STEPS * bs / tp * 1e3 - WINDOW_STEPS * bs / steady_tp * 1e3
            for tp in values if IDLE * steady_tp <= tp < SLOW * steady_tp]


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("logs", nargs="+", type=Path)
    ap.add_argument("--bs", default="1,4,16,64,128")
    ap.add_argument("--boundaries", type=int, default=0, metavar="BS",
                    help="also the excess ms of the slow windows of this batch size")
    args = ap.parse_args(argv)
    sizes = [int(x) for x in args.bs.split(",")]
    texts = []
    print("| phase | " + " | ".join(f"bs {bs}: ms per step" for bs in sizes) + " |")
    print("|---" * (len(sizes) + 1) + "|")
    for path in args.logs:
        if not path.exists():
            raise SystemExit(f"decode_windows: {path} does not exist")
        for name, text in sorted(logs(path).items()):
            per_bs = windows(text)
            texts.append((name, per_bs))
            cells = [f"{steady_ms(per_bs[bs], bs):.3f}" if per_bs.get(bs) else "-" for bs in sizes]
            print(f"| {name} | " + " | ".join(cells) + " |")
    if args.boundaries:
        bs = args.boundaries
        print(f"\n| phase | slow windows at bs {bs} | median excess ms | mean excess ms | each, in log order |")
        print("|---|---|---|---|---|")
        for name, per_bs in texts:
            excess = boundary_excess_ms(per_bs[bs], bs) if per_bs.get(bs) else []
            if not excess:
                print(f"| {name} | 0 | - | - | - |")
                continue
            each = " ".join(f"{e:.1f}" for e in excess)
            print(f"| {name} | {len(excess)} | {statistics.median(excess):.1f} | "
                  f"{statistics.fmean(excess):.1f} | {each} |")


if __name__ == "__main__":
    main()
