"""Replay draft-step policies on the CPU against an oracle, on a per-tier cost model.

    python bench/core_sim.py --scenario FILE.json --policy tiers       # the tier policy
    python bench/core_sim.py --scenario FILE.json --policy upstream    # upstream's adaptive rule
    python bench/core_sim.py --scenario FILE.json --policy core:3      # the core, on/off at 3 steps
    python bench/core_sim.py --scenario FILE.json --policy fixed:7     # always 7 steps

FILE.json gives a step-time model per tier and phases of acceptance:

    {"plain_ms": [a, b],                       # the plain step: a + b x batch size ms
     "tier_ms": {"1": [a, b], "3": [a, b]},    # a speculative step of k draft steps
     "noise": 0.05, "seed": 1,
     "phases": [{"tokens": N, "bs": B, "alpha": 0.8, "decay": 0.9}, ...]}

In a phase draft i (from 0) is accepted with chance `alpha` x `decay`^i (decay: 1 unless given) once
those before it were, each request drawn on its own; a step of k drafts gives a request one token
more than the drafts it accepted. A phase
lasts until N tokens are produced at batch size B. Accept reports reach the policy after the next
decision, as under SGLang's overlap scheduler. The oracle runs the tier with the most expected
tokens per second at every step, without noise; the last line is `sim: ratio_to_oracle=X`.

`upstream` is SGLang's own `AdaptiveSpeculativeParams` (adaptive_spec_params.py of the release,
from spectrace's source cache; its default tier table, started at the largest tier), with the
core's plain step as its steps-0 tier. `core:K` is the dynamic-disable core's controller deciding
between plain steps and K draft steps.
"""

from __future__ import annotations

import dataclasses
import inspect
import math
import random
import sys
import types
from pathlib import Path
from typing import Optional

from core_sim import load_core, load_module  # bench/ is on the path: core_sim puts it there

ROOT = Path(__file__).resolve().parent.parent
TIER_POLICIES = ROOT / "patches/draft-steps/src"


@dataclasses.dataclass(frozen=True)
class TierPhase:
    tokens: int
    bs: int
    alpha: float
    decay: float = 1.0

    def rate(self, position: int) -> float:
        return self.alpha * self.decay**position


@dataclasses.dataclass(frozen=True)
class TierScenario:
    plain_ms: tuple[float, float]
    tier_ms: dict[int, tuple[float, float]]
    noise: float
    seed: int
    phases: tuple[TierPhase, ...]

    @classmethod
    def from_json(cls, data: dict) -> "TierScenario":
        try:
            phases = tuple(TierPhase(int(p["tokens"]), int(p["bs"]), float(p["alpha"]), float(p.get("decay", 1.0)))
                           for p in data["phases"])
            tiers = {int(k): tuple(map(float, v)) for k, v in data["tier_ms"].items()}
            scenario = cls(tuple(map(float, data["plain_ms"])), tiers, float(data["noise"]), int(data["seed"]), phases)
        except (KeyError, TypeError, ValueError, AttributeError) as exc:
            raise ValueError(f"not a tier scenario ({exc.__class__.__name__}: {exc})") from None
        if len(scenario.plain_ms) != 2 or any(len(v) != 2 or k <= 0 for k, v in tiers.items()) or not tiers:
            raise ValueError("plain_ms takes [a, b]; tier_ms maps draft steps > 0 to [a, b]")
        if not phases or any(p.tokens <= 0 or p.bs <= 0 or not 0 <= p.alpha <= 1 or not 0 <= p.decay <= 1
                             for p in phases):
            raise ValueError("each phase needs tokens > 0, bs > 0, 0 <= alpha <= 1 and 0 <= decay <= 1")
        return scenario

    @property
    def tiers(self) -> tuple[int, ...]:
        return (0, *sorted(self.tier_ms))

    def step_ms(self, tier: int, bs: int) -> float:
        a, b = self.tier_ms[tier] if tier else self.plain_ms
        return a + b * bs


def expected_tokens(phase: TierPhase, steps: int) -> float:
    tokens = reach = 1.0
    for position in range(steps):
        reach *= phase.rate(position)
        tokens += reach
    return tokens


def accepted_drafts(rng: random.Random, phase: TierPhase, steps: int) -> int:
    """One request's accepted drafts of `steps`: each accepted at its rate once those before it were."""
    accepted = 0
    while accepted < steps and rng.random() < phase.rate(accepted):
        accepted += 1
    return accepted


def accepts_rid(controller) -> bool:
    """A policy from before the controllers saw request ids takes none."""
    return "rid" in inspect.signature(controller.decide).parameters


class TierPolicyAdapter:
    """The tier policy module (patches/draft-steps/src/VERSION/speculative/draft_steps.py)."""

    def __init__(self, module, tiers, clock):
        self.controller = module.TierController(tiers, clock=clock)

    def decide(self, bs: int, rid=None) -> int:
        return self.controller.decide(bs, rid=rid) if accepts_rid(self.controller) else self.controller.decide(bs)

    def observe(self, steps: int, accepted: list[int]) -> None:
        self.controller.observe(accepted)  # it knows which decision a report answers


class CoreAdapter:
    """The dynamic-disable core: plain steps or `steps` draft steps."""

    def __init__(self, core, steps: int, clock):
        self.controller, self.steps = core.SpecDisableController(clock=clock), steps

    def decide(self, bs: int, rid=None) -> int:
        speculate = self.controller.decide(bs, rid=rid) if accepts_rid(self.controller) else self.controller.decide(bs)
        return self.steps if speculate else 0

    def observe(self, steps: int, accepted: list[int]) -> None:
        self.controller.observe(accepted)


class UpstreamAdapter:
    """SGLang's AdaptiveSpeculativeParams with its default tier table."""

    def __init__(self, params_module, tiers):
        self.params = params_module.AdaptiveSpeculativeParams(initial_steps=max(tiers))

    def decide(self, bs: int, rid=None) -> int:
        return self.params.get_steps_for_batch(bs)

    def observe(self, steps: int, accepted: list[int]) -> None:
        self.params.on_verify_complete(accepted, len(accepted))


class FixedAdapter:
    def __init__(self, steps: int):
        self.steps = steps

    def decide(self, bs: int, rid=None) -> int:
        return self.steps

    def observe(self, steps: int, accepted: list[int]) -> None:
        pass


def load_upstream_params(version: str):
    """adaptive_spec_params.py of the release, its one SGLang import (a log helper) stood in for."""
    from spectrace.source import fetch_version

    path = fetch_version(version, offline=True).root / "sglang/srt/speculative/adaptive_spec_params.py"
    names = [name for name in ("sglang", "sglang.srt", "sglang.srt.utils") if name not in sys.modules]
    for name in names:  # only while it imports: a stand-in left behind breaks find_spec("sglang")
        sys.modules[name] = types.ModuleType(name)
    if "sglang.srt.utils" in names:
        sys.modules["sglang.srt.utils"].log_info_on_rank0 = lambda logger, message: None
    try:
        return load_module(path, f"upstream_adaptive_{version.replace('.', '_')}")
    finally:
        for name in names:
            del sys.modules[name]


@dataclasses.dataclass
class TierPhaseResult:
    phase: TierPhase
    steps: int
    tier_steps: dict[int, int]
    policy_s: float
    oracle_s: float


def tier_oracle_s(scenario: TierScenario, phase: TierPhase) -> float:
    return min(math.ceil(phase.tokens / (phase.bs * expected_tokens(phase, k))) * scenario.step_ms(k, phase.bs)
               for k in scenario.tiers) / 1e3


def make_policy(spec: str, scenario: TierScenario, version: str, clock):
    name, _, arg = spec.partition(":")
    if name == "tiers":
        module = load_module(TIER_POLICIES / version / "speculative/draft_steps.py", f"draft_steps_{version}")
        return TierPolicyAdapter(module, scenario.tiers, clock)
    if name == "upstream":
        return UpstreamAdapter(load_upstream_params(version), scenario.tiers)
    if name in ("core", "fixed") and arg.isdigit() and (int(arg) in scenario.tier_ms or (name, arg) == ("fixed", "0")):
        if name == "fixed":
            return FixedAdapter(int(arg))
        return CoreAdapter(load_core(version), int(arg), clock)
    raise ValueError(f"no policy {spec!r}: tiers, upstream, core:K or fixed:K with K in tier_ms")


def simulate_tiers(spec: str, scenario: TierScenario, version: str = "0.5.17") -> list[TierPhaseResult]:
    rng, now = random.Random(scenario.seed), [0.0]
    policy = make_policy(spec, scenario, version, clock=lambda: now[0])
    report, results = None, []
    for rid, phase in enumerate(scenario.phases, start=1):  # a new request at each phase
        produced, steps, tier_steps, start = 0, 0, {k: 0 for k in scenario.tiers}, now[0]
        while produced < phase.tokens:
            tier = policy.decide(phase.bs, rid if phase.bs == 1 else None)  # the server's id at bs 1
            if report is not None:  # the previous step's verify, processed after this launch
                policy.observe(*report)
            accepted = [accepted_drafts(rng, phase, tier) for _ in range(phase.bs)]
            report = (tier, accepted) if tier else None
            produced += phase.bs + sum(accepted)
            noise = max(0.05, 1.0 + scenario.noise * rng.gauss(0.0, 1.0))
            now[0] += scenario.step_ms(tier, phase.bs) * noise / 1e3
            tier_steps[tier] += 1
            steps += 1
        if report is not None:  # the batch empties: the last step's verify, with no launch after it
            policy.observe(*report)
            report = None
        results.append(TierPhaseResult(phase, steps, tier_steps, now[0] - start, tier_oracle_s(scenario, phase)))
    return results


def tier_ratio_to_oracle(results: list[TierPhaseResult]) -> float:
    return sum(r.oracle_s for r in results) / sum(r.policy_s for r in results)


def print_tier_results(results: list[TierPhaseResult]) -> None:
    tiers = list(results[0].tier_steps)
    print("phase  tokens      bs  alpha   steps  " + "  ".join(f"k={k:<3d}" for k in tiers) + "  ratio to oracle")
    for i, r in enumerate(results, 1):
        shares = "  ".join(f"{r.tier_steps[k] / r.steps:5.2f}" for k in tiers)
        print(f"{i:5d}  {r.phase.tokens:9d}  {r.phase.bs:4d}  {r.phase.alpha:5.2f}  {r.steps:6d}  {shares}  "
              f"{r.oracle_s / r.policy_s:15.3f}")
    print(f"sim: ratio_to_oracle={tier_ratio_to_oracle(results):.4f}")
