"""Steady decode-step times from SGLang's decode log (one line per 40 decode steps), per batch size.

    python3 bench/gpu/decode_windows.py LOG [LOG ...] [--bs 1,4,16,64,128]

LOG is a phase's log (``log-NAME.txt``) or a ``.tar.xz`` of them (every ``log-*.txt`` inside).
For each batch size: the windows whose ``#running-req`` is that size; the steady ones are the
upper half by ``gen throughput`` (the lower half holds a prefill, a request boundary or an idle
gap), and ms per step is ``bs / median throughput``: a plain step's time (for speculative steps,
the time per bs output tokens).
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


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("logs", nargs="+", type=Path)
    ap.add_argument("--bs", default="1,4,16,64,128")
    args = ap.parse_args(argv)
    sizes = [int(x) for x in args.bs.split(",")]
    print("| phase | " + " | ".join(f"bs {bs}: ms per step" for bs in sizes) + " |")
    print("|---" * (len(sizes) + 1) + "|")
    for path in args.logs:
        if not path.exists():
            raise SystemExit(f"decode_windows: {path} does not exist")
        for name, text in sorted(logs(path).items()):
            per_bs = windows(text)
            cells = [f"{steady_ms(per_bs[bs], bs):.3f}" if per_bs.get(bs) else "-" for bs in sizes]
            print(f"| {name} | " + " | ".join(cells) + " |")


if __name__ == "__main__":
    main()
