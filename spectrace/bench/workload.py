"""A serving workload (``spectrace bench --workload FILE``, or a ``[workload]`` table in a
``--configs`` file): phases of open-loop arrivals at their own rates, request kinds mixed per phase,
conversations of several turns; and the seeded schedule it gives, the same for every configuration.

    [workload]
    input_len = 512          # first-turn prompt tokens
    output_len = 128         # output tokens, spread uniformly over (1 -/+ output_spread) x output_len
    output_spread = 0.5
    turn_input_len = 64      # new tokens of each later turn, after the earlier turn's prompt and output
    tpot_limit_ms = 25       # goodput: the requests whose time per output token is within it
    seed = 1

    [[workload.kind]]        # drafts: the vocabulary set its prompts come from (kinds.py)
    name = "code"
    drafts = "accepted"

    [[workload.phase]]
    name = "busy"
    duration_s = 30
    rate = 40                # conversations per second (Poisson with burstiness 1)
    burstiness = 1.0         # gamma shape of the gaps: below 1 burstier, as sglang.bench_serving's
    mix = { code = 1, chat = 3 }
    turns = 2                # turns per conversation that starts in this phase
    think_s = 2.0            # mean pause between a turn's end and the next turn

A conversation's first turn is sent at its arrival time whatever the server's state (open loop);
each later turn waits for the earlier one's output, which it resends (a shared prefix)."""

from __future__ import annotations

import random
from dataclasses import asdict, dataclass, field

from spectrace.bench.kinds import KIND_REGIMES, VocabularySplit
from spectrace.errors import SpectraceError

WORKLOAD_KEYS = {"input_len", "output_len", "output_spread", "turn_input_len", "tpot_limit_ms", "seed", "kind",
                 "phase"}
KIND_KEYS = {"name", "drafts"}
PHASE_KEYS = {"name", "duration_s", "rate", "burstiness", "mix", "turns", "think_s"}


@dataclass(frozen=True)
class Kind:
    name: str
    drafts: str  # one of kinds.KIND_REGIMES


@dataclass(frozen=True)
class Phase:
    name: str
    duration_s: float
    rate: float
    mix: dict[str, float]
    burstiness: float = 1.0
    turns: int = 1
    think_s: float = 0.0


@dataclass(frozen=True)
class Workload:
    phases: tuple[Phase, ...]
    kinds: tuple[Kind, ...]
    input_len: int = 512
    output_len: int = 128
    output_spread: float = 0.0
    turn_input_len: int = 64
    tpot_limit_ms: float = 50.0
    seed: int = 1

    @property
    def duration_s(self) -> float:
        return sum(p.duration_s for p in self.phases)

    def phase_starts(self) -> list[float]:
        starts, t = [], 0.0
        for p in self.phases:
            starts.append(t)
            t += p.duration_s
        return starts

    def phase_at(self, t: float) -> str:
        """The phase running at ``t`` seconds into the run (the last one after the schedule's end)."""
        for p, start in zip(self.phases, self.phase_starts()):
            if t < start + p.duration_s:
                return p.name
        return self.phases[-1].name

    def as_dict(self) -> dict:
        return asdict(self)


@dataclass(frozen=True)
class Turn:
    new_tokens: tuple[int, ...]  # the tokens this turn adds after the conversation so far
    output_len: int
    think_s: float  # pause after the earlier turn's end (0 for the first turn)


@dataclass(frozen=True)
class Conversation:
    id: int
    phase: str
    kind: str
    arrival_s: float
    turns: tuple[Turn, ...] = field(default_factory=tuple)


def workload_from_dict(data: dict, where: str) -> Workload:
    """A workload from its table; SpectraceError naming the key where the table is wrong."""
    if not isinstance(data, dict):
        raise SpectraceError(f"{where}: [workload] must be a table")
    _unknown(data, WORKLOAD_KEYS, where)
    kinds = []
    for k in data.get("kind") or []:
        _unknown(k, KIND_KEYS, f"{where}: [[workload.kind]]")
        if not isinstance(k.get("name"), str) or k.get("drafts") not in KIND_REGIMES:
            raise SpectraceError(f"{where}: each [[workload.kind]] needs a name and drafts = one of "
                                 f"{', '.join(KIND_REGIMES)}, got {k!r}")
        kinds.append(Kind(k["name"], k["drafts"]))
    names = [k.name for k in kinds]
    if not kinds or len(set(names)) != len(names):
        raise SpectraceError(f"{where}: [workload] needs [[workload.kind]] tables with unique names, got {names}")
    phases = [_phase(p, names, f"{where}: [[workload.phase]] {p.get('name', '?')!r}") for p in data.get("phase") or []]
    if not phases or len({p.name for p in phases}) != len(phases):
        raise SpectraceError(f"{where}: [workload] needs [[workload.phase]] tables with unique names")
    types = {"input_len": int, "output_len": int, "output_spread": float, "turn_input_len": int,
             "tpot_limit_ms": float, "seed": int}
    try:
        w = Workload(tuple(phases), tuple(kinds), **{k: types[k](v) for k, v in data.items() if k in types})
    except (TypeError, ValueError) as exc:
        raise SpectraceError(f"{where}: [workload]: {exc}")
    if min(w.input_len, w.output_len, w.turn_input_len) < 1 or not 0 <= w.output_spread < 1 or w.tpot_limit_ms <= 0:
        raise SpectraceError(f"{where}: [workload]: input_len, output_len and turn_input_len must be at least 1, "
                             "output_spread in [0, 1), tpot_limit_ms above 0")
    return w


def workload_from_file(path: str) -> Workload:
    """The ``[workload]`` table of a TOML or JSON file (a --workload file or a --configs file)."""
    from spectrace.bench.config import read_table_file

    data = read_table_file(path)
    if "workload" not in data:
        raise SpectraceError(f"{path}: no [workload] table")
    return workload_from_dict(data["workload"], path)


def _unknown(table, known: set[str], where: str) -> None:
    if not isinstance(table, dict):
        raise SpectraceError(f"{where}: expected a table, got {table!r}")
    unknown = sorted(set(table) - known)
    if unknown:
        raise SpectraceError(f"{where}: unknown keys {unknown} (known: {', '.join(sorted(known))})")


def _phase(table, kinds: list[str], where: str) -> Phase:
    _unknown(table, PHASE_KEYS, where)
    try:
        p = Phase(name=str(table["name"]), duration_s=float(table["duration_s"]), rate=float(table["rate"]),
                  mix={str(k): float(v) for k, v in (table.get("mix") or {}).items()},
                  burstiness=float(table.get("burstiness", 1.0)), turns=int(table.get("turns", 1)),
                  think_s=float(table.get("think_s", 0.0)))
    except KeyError as exc:
        raise SpectraceError(f"{where}: needs {exc.args[0]}")
    except (TypeError, ValueError, AttributeError) as exc:
        raise SpectraceError(f"{where}: {exc}")
    if p.duration_s <= 0 or p.rate < 0 or p.burstiness <= 0 or p.turns < 1 or p.think_s < 0:
        raise SpectraceError(f"{where}: duration_s and burstiness must be above 0, rate and think_s at least 0, "
                             "turns at least 1")
    unknown = sorted(set(p.mix) - set(kinds))
    if unknown or any(v < 0 for v in p.mix.values()) or (p.rate > 0 and not sum(p.mix.values())):
        raise SpectraceError(f"{where}: mix must give kinds of [[workload.kind]] ({', '.join(kinds)}) weights "
                             f"at least 0, not all 0, got {p.mix}")
    return p


def arrival_times(phase: Phase, start: float, rng: random.Random) -> list[float]:
    """Arrivals inside [start, start + duration): gaps drawn from a gamma distribution of mean
    1 / rate and shape ``burstiness`` (1: exponential, a Poisson process)."""
    if phase.rate <= 0:
        return []
    times, t, end = [], start, start + phase.duration_s
    scale = 1.0 / (phase.rate * phase.burstiness)
    while True:
        t += rng.gammavariate(phase.burstiness, scale)
        if t >= end:
            return times
        times.append(t)


def build_schedule(workload: Workload, split: VocabularySplit) -> list[Conversation]:
    """Every conversation of the run, by arrival time: seeded by the workload's seed alone, so
    every configuration gets the same arrivals, kinds, prompts and output lengths."""
    rng = random.Random(workload.seed)
    by_kind = {k.name: split.sets[k.drafts] for k in workload.kinds}
    low = max(1, round(workload.output_len * (1 - workload.output_spread)))
    high = max(low, round(workload.output_len * (1 + workload.output_spread)))
    out: list[Conversation] = []
    for phase, start in zip(workload.phases, workload.phase_starts()):
        kinds = [k for k in phase.mix if phase.mix[k] > 0]
        for t in arrival_times(phase, start, rng):
            kind = rng.choices(kinds, weights=[phase.mix[k] for k in kinds])[0]
            ids = by_kind[kind]
            turns = tuple(
                Turn(new_tokens=tuple(rng.choice(ids) for _ in range(workload.input_len if i == 0
                                                                       else workload.turn_input_len)),
                     output_len=rng.randint(low, high),
                     think_s=0.0 if i == 0 or not phase.think_s else rng.expovariate(1.0 / phase.think_s))
                for i in range(phase.turns))
            out.append(Conversation(len(out), phase.name, kind, round(t, 6), turns))
    return out
