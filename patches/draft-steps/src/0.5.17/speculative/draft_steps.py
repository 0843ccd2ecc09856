"""Draft steps by measured cost: the tier policy for --speculative-adaptive.

With --speculative-adaptive and --speculative-dynamic-disable, each decode step runs
one tier: 0 is the core's plain DECODE step, k > 0 a speculative step of k draft
steps (upstream's adaptive tiers, their graphs: one per candidate step of
--speculative-adaptive-config). This policy replaces upstream's table and average.

The rule, per batch-size bucket (powers of two), as the core's for two modes:
- A bucket runs in windows of WINDOW steps, each in one tier.
- A tier's step time is the median of its last WINDOW steps, timed on the host
  between decisions once three of one tier and bucket have passed; no gap over
  IDLE s; at most a larger bucket's.
- Acceptance, per bucket and draft position i: the chance that draft i is accepted
  once those before it were. A chain drafts its first i tokens alike at any number
  of steps, so every tier's verify steps count: at position i, the requests that
  reached it and those that accepted it, over the last verify steps that reached
  it (at least WINDOW of them and REQUESTS requests), so a deeper position keeps
  what the last deeper tier saw. k steps then give 1 + the sum over j <= k of the
  chance of reaching j tokens; past the positions seen, the last one's chance.
- A tier's value is its tokens per request over its step time. At a window's start:
  acceptance first (the smallest tier that drafts), then a tier without a step time
  that might be the best (more steps cost at least what fewer do: a smaller tier's
  time bounds its value); else the best value, a MARGIN band around the current best.
  Past a draft position that REQUESTS requests reached and none passed, deeper tiers
  give no more tokens at a higher cost: only the smallest one drafting it runs.
- Every other tier runs a window after r * (1 - 1 / loss) / (BUDGET / (n - 1))
  windows, loss being how many times less it was worth and r its step time over
  the best's: measuring the n - 1 others costs BUDGET. While the plain step is the
  best, what may change is the acceptance, which the smallest drafting tier k
  measures alone at BUDGET: as it gives at least one token, it runs within
  (t_k / t_plain - 1) / BUDGET windows, so no acceptance keeps speculation off for
  good, and the others follow once it wins.
- A bucket whose last visit was shorter than a window (a batch that shrinks or grows
  fast passes through it) is too short-lived to time its tiers: it runs the best by
  its neighbours, acceptance its own or else the nearest bucket's (the batch keeps
  its requests), step times its own; a tier it never timed takes a tier it did,
  scaled as the two scale in the nearest bucket that timed both (times grow alike
  with the batch), else a larger bucket's (an upper bound). The rest of a window
  such a visit leaves is dropped, not resumed on the next visit.
- At batch size 1 the acceptance is that of the one request running: a new request
  starts afresh, its first window at the deepest tier (it measures every draft
  position at once); larger buckets keep theirs, where a window per request would
  cost too much.

TP: rank 0 plans each window and broadcasts the plan (share).
"""

from __future__ import annotations

import collections
import logging
import statistics
import time
from typing import Optional

logger = logging.getLogger(__name__)

WINDOW = 8  # steps per window: fewer switches, later reactions
BUDGET = 0.01  # time spent measuring the other tiers: finds a change sooner, costs more
MARGIN = 0.03  # hysteresis on the best tier: no flapping on a close call, a late switch
IDLE = 1.0  # seconds between decisions that mean an idle server, not a step
REQUESTS = 64  # the fewest requests acceptance is taken over: steadier at small batches

Decision = collections.namedtuple("Decision", "tier bucket time")


def bucket_of(batch_size: int) -> int:
    """The power of two at or above the batch size."""
    return 1 << max(0, batch_size - 1).bit_length()


def accept_length(rates: list, steps: int) -> float:
    """Tokens per request that a verify of `steps` drafts is expected to give, each
    draft position accepted at its rate (the last one's past the list)."""
    tokens = reach = 1.0
    for position in range(steps):
        reach *= rates[min(position, len(rates) - 1)] if rates else 0.0
        tokens += reach
    return tokens


def share_tier(tier: int) -> int:
    """Rank 0's tier, on every rank of the TP group."""
    import torch

    from sglang.srt.distributed import get_tp_group

    group = get_tp_group()
    shared = torch.tensor([tier], dtype=torch.int32)
    torch.distributed.broadcast(shared, group.ranks[0], group.cpu_group)
    return int(shared.item())


class Bucket:
    """What one batch-size bucket has measured, and the window it is in."""

    def __init__(self):
        self.times = collections.defaultdict(lambda: collections.deque(maxlen=WINDOW))
        # per draft position: (requests that reached it, accepted it) of its last verifies
        self.positions = collections.defaultdict(
            lambda: collections.deque(maxlen=max(WINDOW, REQUESTS))
        )
        self.best = None  # the tier of the best value
        self.tier = None  # the current window's tier
        self.steps_left = 0  # in the current window
        self.windows_since = collections.Counter()  # per tier: since it last ran
        self.request = None  # bucket 1: the request running alone
        self.passing = False  # its last visit was shorter than a window

    def time(self, tier: int) -> Optional[float]:
        samples = self.times[tier]
        if len(samples) < 3:
            return None
        return statistics.median(samples)

    def totals(self, position: int) -> tuple:
        """(reached, accepted) of a draft position over its last verify steps."""
        reached = accepted = steps = 0
        for step_reached, step_accepted in reversed(self.positions[position]):
            reached += step_reached
            accepted += step_accepted
            steps += 1
            if steps >= WINDOW and reached >= REQUESTS:
                break
        return reached, accepted

    def rates(self) -> Optional[list]:
        """Each draft position's acceptance; None before any verify step."""
        rates = []
        for position in range(len(self.positions)):  # positions 0, 1, ... as seen
            reached, accepted = self.totals(position)
            rates.append(accepted / reached)
        return rates or None

    def dead_end(self) -> Optional[int]:
        """The first draft position that REQUESTS requests reached and none passed."""
        for position in range(len(self.positions)):
            reached, accepted = self.totals(position)
            if accepted == 0 and reached >= REQUESTS:
                return position
        return None


class TierController:
    """The tier of each decode step (the rule: the module's docstring)."""

    def __init__(self, tiers, share=None, clock=time.perf_counter):
        self.tiers = tuple(sorted(set(tiers)))
        self.share = share  # rank 0's plan on every TP rank; None without TP
        self.clock = clock
        self.buckets = collections.defaultdict(Bucket)
        self.history = collections.deque(maxlen=3)  # the last Decisions
        # the verify steps launched and not yet reported, oldest first: (tier, batch
        # size); two at most, as the overlap scheduler launches a step before it
        # processes the previous one's result
        self.verifying = collections.deque(maxlen=2)
        self.visit = (None, 0)  # the bucket of the last decision, steps since it came

    def cost(self, tier: int, bucket: int) -> Optional[float]:
        """The bucket's step time of a tier, at most that of a larger bucket."""
        times = [b.time(tier) for size, b in self.buckets.items() if size >= bucket]
        return min((t for t in times if t is not None), default=None)

    def decide(self, bs: int, needs_verify: bool = False, rid=None) -> int:
        """rid: the request's id at batch size 1."""
        now = self.clock()
        bucket = bucket_of(bs)
        self._time_last_step(now, bucket)
        self._count_visit(bucket)
        state = self.buckets[bucket]
        new_request = rid is not None and rid != state.request
        if state.steps_left == 0 or new_request:
            if new_request:
                # its own drafts, every position at once: the deepest tier
                state.request = rid
                state.positions.clear()
                tier = self.tiers[-1]
            else:
                tier = self._plan(bucket, state)
            if self.share is not None:
                tier = self.share(tier)
            state.tier = tier
            state.windows_since[tier] = 0
            state.steps_left = WINDOW
        state.steps_left -= 1
        tier = state.tier
        if needs_verify and tier == 0:  # the verify-shaped output path
            tier = min(t for t in self.tiers if t > 0)
        self.history.append(Decision(tier, bucket, now))
        if tier > 0 and bs > 0:
            self.verifying.append((tier, bs))
        return tier

    def _count_visit(self, bucket: int) -> None:
        current, steps = self.visit
        if bucket != current:
            if current is not None:
                left = self.buckets[current]
                left.passing = steps < WINDOW
                if left.passing:  # the rest of its window would run on a later visit
                    left.steps_left = 0
            steps = 0
        self.visit = (bucket, steps + 1)

    def _nearest_rates(self, bucket: int) -> Optional[list]:
        """The acceptance of the nearest bucket that has one; on a tie, the larger."""

        for size in sorted(self.buckets, key=lambda size: self._distance(size, bucket)):
            rates = self.buckets[size].rates()
            if rates is not None:
                return rates
        return None

    def _best_by_neighbours(self, bucket: int, state: Bucket) -> Optional[int]:
        """The best tier of a bucket too short-lived to time its own; None without
        any measurement to go by."""
        rates = state.rates() or self._nearest_rates(bucket)
        times = {tier: self._estimate(tier, bucket, state) for tier in self.tiers}
        known = [tier for tier in self.tiers if times[tier] is not None]
        if rates is None or not known:
            return None
        return max(known, key=lambda tier: accept_length(rates, tier) / times[tier])

    def _estimate(self, tier: int, bucket: int, state: Bucket) -> Optional[float]:
        """A tier's step time in a bucket: its own; else a tier the bucket timed,
        scaled by the two tiers' ratio in the nearest bucket that timed both (their
        times grow alike with the batch); else a larger bucket's (an upper bound)."""
        if state.time(tier) is not None:
            return self.cost(tier, bucket)
        own = [t for t in self.tiers if state.time(t) is not None]
        for size in sorted(self.buckets, key=lambda size: self._distance(size, bucket)):
            other = self.buckets[size]
            if other.time(tier) is None:
                continue
            shared = [t for t in own if other.time(t) is not None]
            if shared:
                near = min(shared, key=lambda t: abs(t - tier))
                return state.time(near) * other.time(tier) / other.time(near)
        return self.cost(tier, bucket)

    @staticmethod
    def _distance(size: int, bucket: int) -> tuple:
        """How far two buckets are apart; on a tie the larger comes first."""
        return abs(size.bit_length() - bucket.bit_length()), -size

    def on_prefill(self) -> None:
        # the next steps' time includes the prefill
        self.history.clear()

    def _time_last_step(self, now: float, bucket: int) -> None:
        # Under the overlap scheduler the time between two decisions is a step's
        # once three decisions of one tier and bucket have passed.
        if len(self.history) < 3:
            return
        last = self.history[-1]
        for decision in self.history:
            if decision.tier != last.tier or decision.bucket != bucket:
                return
        if now - last.time < IDLE:
            self.buckets[bucket].times[last.tier].append(now - last.time)

    def observe(self, num_correct_drafts_per_req) -> None:
        """Each request's accepted drafts of a verify step: the oldest one launched and
        not yet reported. Not the one decided before the last: after the last step
        before the batch empties no step is launched."""
        requests = len(num_correct_drafts_per_req)
        steps = self._reported(requests)
        if requests == 0 or steps is None:
            return
        # at position i: the requests that accepted at least i drafts, at least i + 1
        at_least = [0] * (steps + 2)
        for accepted in num_correct_drafts_per_req:
            at_least[min(accepted, steps)] += 1
        for position in range(steps - 1, -1, -1):
            at_least[position] += at_least[position + 1]
        positions = self.buckets[bucket_of(requests)].positions
        for position in range(steps):
            if at_least[position] > 0:  # a position no request reached tells nothing
                positions[position].append((at_least[position], at_least[position + 1]))

    def _reported(self, requests: int) -> Optional[int]:
        """The tier of the verify step that a report of this many requests answers;
        None when none launched at that batch size waits for one."""
        while self.verifying:
            tier, bs = self.verifying.popleft()
            if bs == requests:
                return tier
        return None

    def _worth_timing(self, state: Bucket) -> tuple:
        """The tiers that can give more tokens than a smaller one: past a draft
        position that many requests reached and none passed, deeper tiers give no
        more at a cost at least as high. The smallest tier drafting that position
        stays, to see it change."""
        position = state.dead_end()
        if position is None or position >= max(self.tiers):
            return self.tiers
        deepest = min(tier for tier in self.tiers if tier > position)
        return tuple(tier for tier in self.tiers if tier <= deepest)

    def _plan(self, bucket: int, state: Bucket) -> int:
        """The tier of the bucket's next window."""
        for tier in self.tiers:
            state.windows_since[tier] += 1
        if state.passing:
            best = self._best_by_neighbours(bucket, state)
            if best is not None:
                state.best = best
                return best
        positive = [tier for tier in self.tiers if tier > 0]
        rates = state.rates()
        if rates is None and positive:
            return positive[0]  # acceptance first, at the cheapest verify
        tiers = self._worth_timing(state)
        # A tier not yet timed costs at least what a smaller one does: its best case.
        times, measured = {}, set()
        for tier in tiers:
            if state.time(tier) is not None:
                times[tier] = self.cost(tier, bucket)
                measured.add(tier)
            elif not measured:
                return tier
            else:
                times[tier] = max(times[t] for t in measured)
        value = {t: accept_length(rates, t) / times[t] for t in tiers}
        best = max(measured, key=value.get)
        for tier in tiers:
            if tier not in measured and value[tier] > value[best]:
                return tier  # it might win: time it
        if state.best in measured and value[best] <= value[state.best] * (1 + MARGIN):
            best = state.best
        if best != state.best:
            logger.info(
                f"[spec-draft-steps] {best} draft steps at batch size <= {bucket}: "
                f"accept {accept_length(rates, best):.2f}, step ms "
                + "/".join(f"{t}:{times[t] * 1e3:.1f}" for t in sorted(measured))
            )
            state.best = best
        others = [tier for tier in tiers if tier != best]
        if best == 0 and positive:
            # what may change is the acceptance: the cheapest drafting tier measures it
            others = positive[:1]
        share = BUDGET / max(1, len(others))
        overdue = []
        for tier in others:
            loss = max(value[best], value[tier]) / min(value[best], value[tier])
            ratio = times[tier] / times[best]
            late = state.windows_since[tier] - ratio * (1 - 1 / loss) / share
            if late >= 0:
                overdue.append((late, tier))
        if overdue:
            return max(overdue)[1]  # the most overdue
        return best
