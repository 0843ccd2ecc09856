"""Replay the dynamic-disable core's decision rule on the CPU, against an oracle.

    python bench/core_sim.py --version 0.5.17 --scenario FILE.json
    python bench/core_sim.py --core OLD_CORE.py --scenario FILE.json   # e.g. a core from `git show`
    python bench/core_sim.py --scenario TIERS.json --policy tiers       # draft steps: bench/tier_replay.py

FILE.json gives a cost model and phases:

    {"plain_ms": [a, b], "spec_ms": [a, b],    # a step costs a + b x batch size ms
     "noise": 0.05,                            # relative step-time noise (normal)
     "seed": 1,
     "phases": [{"tokens": N, "bs": B, "accept": A}, ...],
     "request_tokens": T}                      # optional: a request's output length

A phase lasts until N tokens are produced at batch size B: a speculative step gives each request A
tokens (it reports A - 1 accepted drafts per request), a plain step one. The controller sees a
request's id at batch size 1, as the server's does: each phase starts a new request (another
acceptance is other traffic), which with "request_tokens" ends after T tokens, a new one taking
its place, and else runs through the phase.

The core's own
SpecDisableController (patches/dynamic-disable/src/VERSION/) decides every step on a simulated
clock, which advances by each step's noisy time; as under SGLang's overlap scheduler, a verify
step's accept report reaches the controller after the next decision. The oracle takes the better
mode at every step, without noise. The last line is `sim: ratio_to_oracle=X`, the oracle's time
for all phases over the core's (1.0: as good as the oracle).
"""

from __future__ import annotations

import argparse
import dataclasses
import importlib.util
import inspect
import json
import math
import random
import sys
from pathlib import Path
from typing import Optional

sys.path.insert(0, str(Path(__file__).resolve().parent))  # bench/tier_replay.py

ROOT = Path(__file__).resolve().parent.parent
CORES = ROOT / "patches/dynamic-disable/src"


def load_module(path: Path, name: str):
    """A module of a series' src/ (it imports no SGLang at module level) loaded from its file."""
    if not path.is_file():
        raise SystemExit(f"core_sim: no module at {path}")
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # its dataclasses look their module up
    spec.loader.exec_module(module)
    return module


def load_core(version: str, path: Optional[Path] = None):
    """The core module of one release, as the series adds it, or the core module at ``path``."""
    path = path or CORES / version / "speculative/dynamic_disable.py"
    return load_module(path, f"core_{abs(hash(str(path)))}")


@dataclasses.dataclass(frozen=True)
class Phase:
    tokens: int
    bs: int
    accept: float


@dataclasses.dataclass(frozen=True)
class Scenario:
    plain_ms: tuple[float, float]
    spec_ms: tuple[float, float]
    noise: float
    seed: int
    phases: tuple[Phase, ...]
    request_tokens: Optional[int] = None

    @classmethod
    def from_json(cls, data: dict) -> "Scenario":
        try:
            phases = tuple(Phase(int(p["tokens"]), int(p["bs"]), float(p["accept"])) for p in data["phases"])
            scenario = cls(tuple(map(float, data["plain_ms"])), tuple(map(float, data["spec_ms"])),
                           float(data["noise"]), int(data["seed"]), phases,
                           None if data.get("request_tokens") is None else int(data["request_tokens"]))
        except (KeyError, TypeError, ValueError) as exc:
            raise ValueError(f"not a scenario ({exc.__class__.__name__}: {exc})") from None
        if len(scenario.plain_ms) != 2 or len(scenario.spec_ms) != 2 or not phases:
            raise ValueError("plain_ms and spec_ms take [a, b]; phases at least one phase")
        if any(p.tokens <= 0 or p.bs <= 0 or p.accept < 1 for p in phases):
            raise ValueError("each phase needs tokens > 0, bs > 0 and accept >= 1")
        if scenario.request_tokens is not None and scenario.request_tokens <= 0:
            raise ValueError("request_tokens must be > 0")
        return scenario

    def step_ms(self, speculate: bool, bs: int) -> float:
        a, b = self.spec_ms if speculate else self.plain_ms
        return a + b * bs


class Replay:
    """A simulated server around one SpecDisableController: step() is one decode step."""

    def __init__(self, core, scenario: Scenario, share=None, bound: Optional[int] = None,
                 rng: Optional[random.Random] = None):
        self.scenario, self.now = scenario, 0.0
        self.rng = rng or random.Random(scenario.seed)
        self.controller = core.SpecDisableController(bound, share, clock=lambda: self.now)
        # a core from before the controller saw request ids takes none
        self.sees_rid = "rid" in inspect.signature(self.controller.decide).parameters
        self.report = None  # the last verify step's accept report, not yet delivered
        self.rid = 0  # the request running at batch size 1 (0: none started)
        self.tokens_left = math.inf  # its tokens still to come

    def new_request(self) -> None:
        self.rid += 1
        length = self.scenario.request_tokens
        self.tokens_left = math.inf if length is None else length

    def produce(self, tokens: float) -> None:
        """The request at batch size 1 got ``tokens``: once done, a new one takes its place."""
        self.tokens_left -= tokens
        if self.tokens_left <= 0:
            self.new_request()

    def step(self, bs: int, accept: float, needs_verify: bool = False) -> bool:
        if self.sees_rid:  # the server passes the request's id at batch size 1
            rid = self.rid if bs == 1 and self.rid else None
            speculate = self.controller.decide(bs, needs_verify, rid)
        else:
            speculate = self.controller.decide(bs, needs_verify)
        if self.report is not None:  # the previous step's result, processed after this launch
            self.controller.observe(self.report)
        self.report = [accept - 1.0] * bs if speculate else None
        noise = max(0.05, 1.0 + self.scenario.noise * self.rng.gauss(0.0, 1.0))
        self.now += self.scenario.step_ms(speculate, bs) * noise / 1e3
        return speculate


@dataclasses.dataclass
class PhaseResult:
    phase: Phase
    steps: int
    spec_steps: int
    core_s: float
    oracle_s: float
    first_spec_step: Optional[int]  # the phase's first speculative step (index in the phase)


def oracle_s(scenario: Scenario, phase: Phase) -> float:
    per_step = [(phase.bs * phase.accept, scenario.step_ms(True, phase.bs)),
                (phase.bs, scenario.step_ms(False, phase.bs))]
    return min(math.ceil(phase.tokens / tokens) * ms for tokens, ms in per_step) / 1e3


def simulate(core, scenario: Scenario, share=None, rng=None) -> list[PhaseResult]:
    replay, results = Replay(core, scenario, share=share, rng=rng), []
    for phase in scenario.phases:
        produced, steps, spec_steps, first, start = 0.0, 0, 0, None, replay.now
        replay.new_request()
        while produced < phase.tokens:
            speculate = replay.step(phase.bs, phase.accept)
            replay.produce(phase.accept if speculate else 1)
            produced += phase.bs * (phase.accept if speculate else 1)
            if speculate:
                first = steps if first is None else first
                spec_steps += 1
            steps += 1
        results.append(PhaseResult(phase, steps, spec_steps, replay.now - start, oracle_s(scenario, phase), first))
    return results


def ratio_to_oracle(results: list[PhaseResult]) -> float:
    return sum(r.oracle_s for r in results) / sum(r.core_s for r in results)


def replay_tiers(args, data: dict) -> int:
    """A scenario with a step-time model per tier: bench/tier_replay.py."""
    import tier_replay

    scenario = tier_replay.TierScenario.from_json(data)
    tier_replay.print_tier_results(tier_replay.simulate_tiers(args.policy or "tiers", scenario, args.version))
    return 0


def main(argv: Optional[list[str]] = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--version", default="0.5.17", help="SGLang release of the core: 0.5.17 (default) or 0.5.23")
    parser.add_argument("--core", type=Path, help="a core module file instead of the release's")
    parser.add_argument("--scenario", required=True, type=Path, help="a scenario JSON file")
    parser.add_argument("--policy", help="for a scenario with tier_ms (bench/tier_replay.py): tiers (default), "
                        "upstream, core:K or fixed:K")
    args = parser.parse_args(argv)
    try:
        data = json.loads(args.scenario.read_text())
        if isinstance(data, dict) and "tier_ms" in data:
            return replay_tiers(args, data)
        if args.policy is not None:
            raise ValueError("--policy needs a scenario with tier_ms")
        scenario = Scenario.from_json(data)
    except (OSError, ValueError) as exc:
        print(f"core_sim: {args.scenario}: {exc}", file=sys.stderr)
        return 2
    results = simulate(load_core(args.version, args.core), scenario)
    print("phase  tokens      bs  accept  steps   spec share  ratio to oracle")
    for i, r in enumerate(results, 1):
        print(f"{i:5d}  {r.phase.tokens:9d}  {r.phase.bs:4d}  {r.phase.accept:6.2f}  {r.steps:6d}  "
              f"{r.spec_steps / r.steps:10.3f}  {r.oracle_s / r.core_s:15.3f}")
    print(f"sim: ratio_to_oracle={ratio_to_oracle(results):.4f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
