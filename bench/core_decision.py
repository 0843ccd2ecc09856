"""What one decision of the dynamic-disable core costs on the host: the simulated server of
bench/core_sim.py runs a sweep's shrinking runs (C = 16, 64, 128, output lengths from 13 to 243
tokens, half-accepted drafts, the H200's step times, 3 ms of finish work per ended request) 20
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
sys.path.insert(0, str(ROOT / "bench"))
import core_sim  # noqa: E402

ROUNDS, REPEATS = 20, 5
# half-accepted drafts on the H200 (docs/results.md): a + b x batch size ms
SCENARIO = core_sim.Scenario.from_json({"plain_ms": [4.9, 0.015], "spec_ms": [6.5, 0.2], "noise": 0.03,
                                        "seed": 1, "phases": [{"tokens": 1, "bs": 1, "accept": 2.0}]})


def load(path: Path):
    spec = importlib.util.spec_from_file_location(f"core_{abs(hash(path))}", path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


def decision_us(core) -> tuple[float, int]:
    """Mean microseconds of one decide() over the sweep, and the number of decisions."""
    replay = core_sim.Replay(core, SCENARIO)
    decide, spent = replay.controller.decide, [0.0, 0]

    def timed(bs, needs_verify=False):
        start = time.perf_counter()
        speculate = decide(bs, needs_verify)
        spent[0] += time.perf_counter() - start
        spent[1] += 1
        return speculate

    replay.controller.decide = timed
    for _ in range(ROUNDS):
        for c in (16, 64, 128):
            for _ in range(32):  # the bench's untimed request at its batch size
                replay.step(c, 2.0)
            left = [13 + round(i * 230 / (c - 1)) for i in range(c)]
            while left:
                speculate = replay.step(len(left), 2.0)
                left = [n - (2 if speculate else 1) for n in left]
                replay.now += 3e-3 * sum(n <= 0 for n in left)  # finish work
                left = [n for n in left if n > 0]
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
