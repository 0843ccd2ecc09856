"""What one decision of the dynamic-disable core costs on the host: the simulated server of
tests/test_core_policy.py runs a sweep's shrinking runs (C = 16, 64, 128, output lengths from 13 to
243 tokens, half-accepted drafts, the H200's step times, 3 ms of finish work per ended request) 20
times, and every SpecDisableController.decide() call is timed.

    python bench/core_decision.py [CORE_MODULE.py ...]

Without arguments it times the 0.5.17 and 0.5.23 cores of this checkout; a path times that file
(for example an older core from `git show REV:patches/dynamic-disable/src/0.5.17/speculative/dynamic_disable.py`)."""

from __future__ import annotations

import importlib.util
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))
from test_core_policy import Server  # noqa: E402

ROUNDS, REPEATS = 20, 5


def load(path: Path):
    spec = importlib.util.spec_from_file_location(f"core_{abs(hash(path))}", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def spec_ms(bs):  # half-accepted drafts on the H200 (docs/results.md)
    return 9.2 if bs <= 16 else 19.0 if bs <= 64 else 33.0


def plain_ms(bs):
    return 4.9 if bs <= 16 else 5.5 if bs <= 64 else 6.8


def decision_us(core) -> tuple[float, int]:
    """Mean microseconds of one decide() over the sweep, and the number of decisions."""
    server = Server(core, accept=2.0, spec_ms=spec_ms, plain_ms=plain_ms, finish_ms=3.0)
    decide, spent = server.controller.decide, [0.0, 0]

    def timed(bs, needs_verify=False):
        start = time.perf_counter()
        speculate = decide(bs, needs_verify)
        spent[0] += time.perf_counter() - start
        spent[1] += 1
        return speculate

    server.controller.decide = timed
    for _ in range(ROUNDS):
        for c in (16, 64, 128):
            server.run([c] * 32)  # the bench's untimed request at its batch size
            server.decode([13 + round(i * 230 / (c - 1)) for i in range(c)])
    return spent[0] / spent[1] * 1e6, spent[1]


def main(paths: list[str]) -> int:
    cores = [Path(p) for p in paths] or [ROOT / f"patches/dynamic-disable/src/{v}/speculative/dynamic_disable.py"
                                         for v in ("0.5.17", "0.5.23")]
    for path in cores:
        if not path.is_file():
            print(f"no such core module: {path}", file=sys.stderr)
            return 2
        runs = [decision_us(load(path)) for _ in range(REPEATS)]
        us = sorted(r[0] for r in runs)
        print(f"{path}: {runs[0][1]} decisions; µs per decision, median of {REPEATS} sweeps "
              f"{statistics.median(us):.1f} (least {us[0]:.1f}, most {us[-1]:.1f})")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
