"""Dynamic speculation disable for the spec-v2 EAGLE worker (overlap scheduler).

Added by the spectrace patch series ``dynamic-disable``.

Under load (large running batches) speculative decoding costs more than it
gains; with drafts that are rarely accepted it never pays.  This module lets
``EAGLEWorkerV2`` run a *plain one-token target decode step* instead of
draft + verify + draft-extend, chosen per decode step from the running batch
size (with hysteresis) and, optionally, from the observed accept length.

The scheduler's spec-v2 contract is kept on every path: the disabled step
returns a ``GenerationBatchResult`` whose ``next_draft_input`` carries
``bonus_tokens``, ``new_seq_lens`` (= seq_lens + 1), ``verify_done``,
``topk_p``, ``topk_index`` and ``hidden_states`` with the shapes the future map
stores, ``accept_lens`` (all ones) and ``speculative_num_draft_tokens`` = 1 (the
stride the output processor uses).  KV slots come from the spec-v2
over-allocation that ``ScheduleBatch.prepare_for_decode`` already made
(``kv_committed_len + 2 * alloc_len_per_decode``), so the token-pool accounting
is unchanged and nothing is allocated or freed here.

Draft state (``--speculative-disable-draft``, see ``draft_mode``): in the modes
``exact`` and ``lazy`` every disabled step also runs ONE draft-model decode
token (the target's new hidden state + the sampled token, written at the same
KV slot the enabled path's draft-extend would write), so the draft KV is
exactly what the enabled path would hold and speculation can resume on the
next step with no catch-up.  ``skip`` runs no draft token (cheaper; the draft
KV of the skipped positions is left stale, as upstream's
``SGLANG_SPEC_SKIP_ZERO_STEP_DRAFT_EXTEND``; outputs stay correct because the
target verifies, only acceptance after re-enabling may suffer).

``catchup`` (the default) runs no draft work in a disabled step either, but keeps
each request's skipped tokens and the target's hidden states (``CatchUpWindow``,
device buffers allocated at start) and writes the draft KV of those positions in
ONE draft extend when a request has skipped ``SGLANG_SPEC_DISABLE_CATCHUP_WINDOW``
(16) positions or speculation resumes, so the draft KV is what ``exact`` would
hold when it is next read, at about what ``skip`` costs.  With a one-layer EAGLE-3
draft a full window writes only the KV (``_write_draft_kv``: no attention, MLP or
logits) of all but each request's last position; the extend at resume runs the
whole draft forward over what is left, which yields the draft's top-k.  Measured on the H200
(8B + EAGLE-3, one call): 0.96-0.985 of the baseline at C=1..128 where ``lazy``
was 0.92-0.955.  A STANDALONE draft takes no hidden states, so it uses ``lazy``.

``lazy`` keeps
the draft token's layers (the draft KV is written exactly as by ``exact``) but
skips the draft's lm_head, softmax and top-k, which are needed only when
speculation comes back: the draft's LogitsProcessor is replaced, for that one
forward, by ``DeferredDraftLogits``, which returns the same ``hidden_states`` the
real one stores (the next draft step's input) and keeps the lm_head's input
(the normed last hidden state) in a per-request buffer indexed by
``req_pool_idx``.  ``topk_p`` carries ``LAZY_TOPK_P`` (-1, never a probability)
as the marker "top-k not computed"; it travels with each request through the
future map, filter and merge like the real value.  The first speculative decode
step after disabled steps (``before_speculative_step``, called before
``draft()``) computes lm_head + softmax + top-k once, with the draft's own
LogitsProcessor, for the rows that carry the marker.  Rows computed at another
batch size than the disabled step's may differ in GEMM rounding only (as the
enabled path's draft extend differs from a one-token decode).
"""

from __future__ import annotations

import collections
import contextlib
import itertools
import logging
import os
import time
from typing import TYPE_CHECKING, Deque, List, Optional, Tuple

import torch

from sglang.srt.speculative.spec_info import SpeculativeAlgorithm

# The model-executor imports happen inside the functions that need them: ServerArgs imports
# unsupported_reason() from this module in the launching process, which must not load the
# CUDA-graph stack (its optional flashinfer.comm imports fail on some images).
if TYPE_CHECKING:
    from sglang.srt.model_executor.forward_batch_info import (
        CaptureHiddenMode,
        ForwardBatch,
    )
    from sglang.srt.managers.schedule_batch import ModelWorkerBatch
    from sglang.srt.managers.utils import GenerationBatchResult
    from sglang.srt.server_args import ServerArgs

logger = logging.getLogger(__name__)

# Modes this series was verified in (GPU: SGLang 0.5.12, H200, triton attention).
VERIFIED_ALGORITHMS = ("EAGLE", "EAGLE3")
VERIFIED_ATTENTION_BACKENDS = ("triton",)
ALLOW_UNVERIFIED_ENV = "SGLANG_SPEC_DISABLE_ALLOW_UNVERIFIED"
LAZY_DRAFT_LOGITS_ENV = "SGLANG_SPEC_DISABLE_LAZY_DRAFT_LOGITS"
SKIP_DRAFT_ENV = "SGLANG_SPEC_DISABLE_SKIP_DRAFT"
# what a disabled step does for the draft (--speculative-disable-draft)
DRAFT_MODES = ("exact", "lazy", "skip", "catchup")
# catchup: how many skipped positions a request may collect before they are caught up
CATCHUP_WINDOW_ENV = "SGLANG_SPEC_DISABLE_CATCHUP_WINDOW"
# catchup: how many requests' skipped positions the device buffers hold at once
CATCHUP_ROWS_ENV = "SGLANG_SPEC_DISABLE_CATCHUP_ROWS"
# catchup: "0" runs the whole draft forward when a window is full (see _write_draft_kv)
CATCHUP_KV_ONLY_ENV = "SGLANG_SPEC_DISABLE_CATCHUP_KV_ONLY"
# catchup, debugging aid (syncs): compare the KV-only write with the whole draft forward's
CHECK_KV_ENV = "SGLANG_SPEC_DISABLE_CHECK_KV"
# catchup: a prefill while speculation is off writes the prompt's draft KV only (see prefill_draft);
# "0" runs the whole draft extend there, as the enabled path does
PREFILL_KV_ONLY_ENV = "SGLANG_SPEC_DISABLE_PREFILL_KV_ONLY"
# topk_p of a request whose draft top-k was deferred (a probability is never negative)
LAZY_TOPK_P = -1.0


def _env_int(name: str, default: int) -> int:
    try:
        return int(os.environ.get(name, default))
    except ValueError:
        return default


def draft_mode(server_args: "ServerArgs") -> str:
    """The disabled step's draft work: --speculative-disable-draft, unless one of the
    variables of the first GPU runs is set (SGLANG_SPEC_DISABLE_SKIP_DRAFT=1 -> skip,
    SGLANG_SPEC_DISABLE_LAZY_DRAFT_LOGITS=1 -> lazy, =0 -> exact), which wins so that
    recorded commands keep their meaning."""
    if os.environ.get(SKIP_DRAFT_ENV, "0") == "1":
        return "skip"
    lazy = os.environ.get(LAZY_DRAFT_LOGITS_ENV)
    if lazy is not None:
        return "lazy" if lazy == "1" else "exact"
    return getattr(server_args, "speculative_disable_draft", "catchup")


def unsupported_reason(server_args: "ServerArgs") -> Optional[str]:
    """Why --speculative-dynamic-disable cannot run with these arguments (None: it can)."""
    algo = (server_args.speculative_algorithm or "").upper()
    if not algo:
        return "it needs speculative decoding (--speculative-algorithm EAGLE or EAGLE3)"
    if draft_mode(server_args) not in DRAFT_MODES:
        return (
            f"--speculative-disable-draft must be one of {', '.join(DRAFT_MODES)} "
            f"(got {draft_mode(server_args)!r})"
        )
    if load_rule(server_args) not in LOAD_RULES:
        return (
            f"--speculative-disable-load-rule must be one of {', '.join(LOAD_RULES)} "
            f"(got {load_rule(server_args)!r})"
        )
    if server_args.disable_overlap_schedule:
        return (
            "it supports only the spec-v2 worker (EAGLEWorkerV2) under the overlap "
            "scheduler; this server runs the v1 worker (EAGLEWorker) because the "
            "overlap schedule is disabled (topk > 1, SGLANG_ENABLE_SPEC_V2=0 or "
            "--disable-overlap-schedule)"
        )
    if (server_args.speculative_eagle_topk or 1) != 1:
        return "it supports only --speculative-eagle-topk 1"
    if getattr(server_args, "speculative_adaptive", False):
        return "it cannot be combined with --speculative-adaptive"
    if server_args.enable_dp_attention:
        return "it does not support --enable-dp-attention"
    if server_args.pp_size > 1:
        return "it does not support pipeline parallelism"
    if getattr(server_args, "enable_two_batch_overlap", False):
        return "it does not support --enable-two-batch-overlap"
    if getattr(server_args, "enable_pdmux", False):
        return "it does not support --enable-pdmux"
    if server_args.disaggregation_mode != "null":
        return "it does not support PD disaggregation"
    if server_args.speculative_enable_below_bs > server_args.speculative_disable_above_bs + 1:
        return (
            "--speculative-enable-below-bs must be at most "
            "--speculative-disable-above-bs + 1 (hysteresis band)"
        )
    if os.environ.get(ALLOW_UNVERIFIED_ENV, "0") == "1":
        return None
    unverified = []
    if algo not in VERIFIED_ALGORITHMS:
        unverified.append(f"speculative algorithm {algo}")
    if server_args.attention_backend not in VERIFIED_ATTENTION_BACKENDS:
        unverified.append(f"attention backend {server_args.attention_backend}")
    if server_args.page_size not in (None, 1):
        unverified.append(f"page size {server_args.page_size}")
    if server_args.tp_size != 1:
        unverified.append(f"tp size {server_args.tp_size}")
    if unverified:
        return (
            "it was not verified with "
            + ", ".join(unverified)
            + f" (verified: {'/'.join(VERIFIED_ALGORITHMS)}, topk 1, spec v2 overlap, "
            f"attention backend {'/'.join(VERIFIED_ATTENTION_BACKENDS)}, page size 1, tp 1); "
            f"set {ALLOW_UNVERIFIED_ENV}=1 to run it anyway"
        )
    return None


LOAD_RULES = ("measured", "static")


def load_rule(server_args: "ServerArgs") -> str:
    return getattr(server_args, "speculative_disable_load_rule", "measured")


class StepCosts:
    """Wall time of a decode step, per mode (speculative or plain) and batch-size bucket,
    read from the host clock only (no GPU synchronisation is added).

    Under the overlap scheduler the host launches step k and then waits for the results of
    step k-1, so once the pipeline is full the time between two decisions is one step of GPU
    work.  A sample is kept only when the three decisions before it had the same mode and
    the same batch size as the current one (no prefill, switch or finished request in
    between) and it is not an idle gap (more than 3x the average, or over a second).

    Speculation pays at a bucket when ``accept * t_plain / t_spec > 1`` (tokens per second
    relative to plain decoding).  The cost ratio ``t_spec / t_plain`` grows with the batch
    size (verify works on num_draft_tokens x bs tokens), so a bucket without both costs
    borrows the verdict of a measured smaller bucket where plain decoding already wins, or of
    a measured larger bucket where speculation still wins.  Failing that, it bounds its gain
    with the costs of other buckets: a step of either mode costs no less at a larger batch
    than at a smaller one, so ``accept * t_plain(smaller) / t_spec(larger)`` is a lower bound
    and ``accept * t_plain(larger) / t_spec(smaller)`` an upper one; a bound that clears the
    band by ``bound_slack`` (the EMAs of neighbouring buckets are not exactly monotone) is a
    verdict, and the bucket is not probed.
    """

    # a verdict from bounds (no own or borrowed gain) is reported as measured at this bucket
    BOUNDED = -1

    def __init__(
        self,
        alpha: float = 0.2,
        min_samples: int = 3,
        margin: float = 0.03,
        bound_slack: float = 0.25,
    ):
        self.alpha = alpha
        self.min_samples = min_samples
        self.margin = margin
        self.bound_slack = bound_slack
        self.ema = {}  # (disabled, bucket) -> seconds
        self.count = collections.Counter()
        self.history: Deque[Tuple[bool, int, float]] = collections.deque(maxlen=3)

    @staticmethod
    def bucket(bs: int) -> int:
        return 1 << max(0, bs - 1).bit_length()

    def record(self, now: float, bs: int) -> None:
        """Called at each decision, before it: close the sample that ended now."""
        h = self.history
        if len(h) == 3 and h[0][:2] == h[1][:2] == h[2][:2] and h[2][1] == bs:
            key = (h[2][0], self.bucket(bs))
            seconds = now - h[2][2]
            known = self.ema.get(key)
            if seconds > 1.0 or (
                known is not None
                and self.count[key] >= self.min_samples
                and seconds > 3 * known
            ):
                return
            self.ema[key] = seconds if known is None else known + self.alpha * (seconds - known)
            self.count[key] += 1

    def decided(self, now: float, disabled: bool, bs: int) -> None:
        self.history.append((disabled, bs, now))

    def cost(self, disabled: bool, bucket: int) -> Optional[float]:
        if self.count[(disabled, bucket)] < self.min_samples:
            return None
        return self.ema[(disabled, bucket)]

    def gain(self, bucket: int, accept: float) -> Optional[float]:
        """Speculative over plain tokens per second at this bucket (None: not measured)."""
        on, off = self.cost(False, bucket), self.cost(True, bucket)
        if on is None or off is None or on <= 0:
            return None
        return accept * off / on

    def verdict(self, bucket: int, accept: float) -> Tuple[Optional[float], int]:
        """(gain, bucket it was measured at): this bucket's, else a clear one inferred from
        a smaller bucket that loses or a larger bucket that wins; (None, 0) if neither."""
        own = self.gain(bucket, accept)
        if own is not None:
            return own, bucket
        measured = sorted({b for _, b in self.ema})
        for b in reversed([b for b in measured if b < bucket]):
            g = self.gain(b, accept)
            if g is not None and g < 1 - self.margin:
                return g, b
        for b in [b for b in measured if b > bucket]:
            g = self.gain(b, accept)
            if g is not None and g > 1 + self.margin:
                return g, b
        return self._bounded(bucket, accept, measured)

    def _bounded(
        self, bucket: int, accept: float, measured: List[int]
    ) -> Tuple[Optional[float], int]:
        """(gain bound, BOUNDED) when the costs of this and other buckets settle the verdict."""

        def known(disabled, buckets):
            return [
                c for c in (self.cost(disabled, b) for b in buckets) if c is not None
            ]

        up_to = [b for b in measured if b <= bucket]
        from_ = [b for b in measured if b >= bucket]
        plain_low, plain_high = known(True, up_to), known(True, from_)
        spec_low, spec_high = known(False, up_to), known(False, from_)
        slack = 1 + self.bound_slack
        if plain_low and spec_high:
            low = accept * max(plain_low) / min(spec_high)
            if low > (1 + self.margin) * slack:
                return low, self.BOUNDED
        if plain_high and spec_low:
            high = accept * min(plain_high) / max(spec_low)
            if high < (1 - self.margin) / slack:
                return high, self.BOUNDED
        return None, 0

    def describe(self) -> str:
        rows = []
        for b in sorted({b for _, b in self.ema}):
            on, off = self.cost(False, b), self.cost(True, b)
            rows.append(
                f"bs<={b}: "
                + (f"{on * 1e3:.1f}" if on is not None else "-")
                + "/"
                + (f"{off * 1e3:.1f}" if off is not None else "-")
            )
        return "step ms spec/plain " + (", ".join(rows) if rows else "none yet")


class SpecDisableController:
    """Per-step decision: speculate or run a plain decode step.

    Load rule (hysteresis on the running batch size): speculation goes off when
    bs > disable_above_bs and comes back only when bs < enable_below_bs.
    Accept rule (optional, min_accept_len > 0): when the moving average of
    accepted tokens per verify step (bonus included) is below min_accept_len,
    speculation goes off; every probe_interval disabled steps it is switched on
    for probe_steps steps to measure again.
    Measured rule (``rule="measured"``, the default): once the step costs of both modes are
    known for the batch size (``StepCosts``), speculation runs exactly when it gives more
    tokens per second (accept length x plain step time > speculative step time, with a 3 %
    band), which replaces both rules above; until then they decide, and a few steps of the
    other mode (``probe_steps``, after ``explore_after`` steps in the bucket) measure its
    cost.  A speculative step costs no less than a plain one (it runs the target over more
    tokens, and the draft), so speculation gains at most the accept length: while it is off
    and the accept length is within the band, plain decoding stays without a probe of
    speculation's cost (drafts that are never accepted pay for no exploration at all).
    Both costs are measured again after ``probe_interval`` steps of a bucket; each
    time that bucket's verdict is still the one of its previous re-measurement the interval
    doubles (up to ``max_probe_backoff`` times), and a changed verdict resets it: a steady
    load pays for fewer probes, and a changing one is measured as often as before.
    The decision is taken once per decode step, before the step is launched.
    """

    def __init__(
        self,
        disable_above_bs: int,
        enable_below_bs: int,
        min_accept_len: float = 0.0,
        probe_interval: int = 512,
        probe_steps: int = 8,
        warmup_steps: int = 8,
        ema_alpha: float = 0.3,
        rule: str = "static",
        explore_after: int = 16,
        clock=time.perf_counter,
        max_probe_backoff: int = 16,
    ):
        self.disable_above_bs = disable_above_bs
        self.enable_below_bs = enable_below_bs
        self.min_accept_len = min_accept_len
        self.probe_interval = probe_interval
        self.probe_steps = probe_steps
        self.warmup_steps = warmup_steps
        self.ema_alpha = ema_alpha

        self.rule = rule
        self.explore_after = explore_after
        self.clock = clock
        self.costs = StepCosts() if rule == "measured" else None
        # measured rule: steps per bucket since its last probe, and the probe's mode
        self.bucket_steps = collections.Counter()
        self.max_probe_backoff = max_probe_backoff
        # measured rule, per bucket: steps between re-measurements, and the verdict (disabled)
        # of the last decision and of the last re-measurement
        self.bucket_interval = {}
        self.bucket_verdict = {}
        self.probed_verdict = {}
        self.probe_disabled = False
        self.gain: Optional[float] = None

        self.load_off = False  # hysteresis state of the load rule
        self.accept_ema: Optional[float] = None
        self.accept_obs = 0
        self.steps_since_probe = 0
        self.probe_left = 0
        self.disabled = False  # mode of the last decided step
        self.reason = ""
        self.num_switches = 0
        self.steps_on = 0
        self.steps_off = 0
        self._reported = (0, 0)  # (steps_on, steps_off) at the last metrics() call
        # (disabled, bs) of launched decode steps whose results are not processed yet
        # (bounded: at most two are in flight under the overlap scheduler)
        self.pending: Deque[Tuple[bool, int]] = collections.deque(maxlen=64)

    def _accept_low(self) -> bool:
        return (
            self.min_accept_len > 0
            and self.accept_obs >= self.warmup_steps
            and self.accept_ema is not None
            and self.accept_ema < self.min_accept_len
        )

    def _measured(self, bs: int) -> Optional[Tuple[bool, str]]:
        """The measured rule's decision, or None where the static rules decide."""
        b = StepCosts.bucket(bs)
        self.bucket_steps[b] += 1
        if self.probe_left > 0:
            self.probe_left -= 1
            return self.probe_disabled, "probe: measuring step cost"
        accept_known = self.accept_obs >= self.warmup_steps and self.accept_ema is not None
        gain, at = self.costs.verdict(b, self.accept_ema) if accept_known else (None, 0)
        # no costs to compare, but the accept length caps speculation's gain: within the band
        # while off, stay off (re-measured after probe_interval like a bucket's own verdict)
        capped = (
            gain is None
            and accept_known
            and self.disabled
            and self.accept_ema < 1 + self.costs.margin
        )
        if capped:
            gain, at = self.accept_ema, b
        self.gain = gain
        if gain is None:
            return None
        if at == b and self.bucket_steps[b] >= self.bucket_interval.get(b, self.probe_interval):
            # keep both costs and the accept length fresh; less often while nothing changes
            interval = self.bucket_interval.get(b, self.probe_interval)
            same = self.probed_verdict.get(b) == self.bucket_verdict.get(b)
            self.bucket_interval[b] = (
                min(2 * interval, self.max_probe_backoff * self.probe_interval)
                if same
                else self.probe_interval
            )
            self.probed_verdict[b] = self.bucket_verdict.get(b)
            self._start_probe(b, not self.disabled)
            return self._measured(bs)
        m = self.costs.margin
        disabled = gain < 1 + m if self.disabled else gain < 1 - m
        if at == b:
            if self.bucket_verdict.get(b, disabled) != disabled:
                self.bucket_interval[b] = self.probe_interval  # a changed verdict: measure often
            self.bucket_verdict[b] = disabled
            # the bucket's first verdict comes from its first measurements: a re-measurement that
            # confirms it already backs off (each probe at C=1 costs 8 speculative steps)
            self.probed_verdict.setdefault(b, disabled)
        if capped:
            return disabled, (
                f"accept length {self.accept_ema:.2f}: speculation gains at most that "
                f"at batch size {bs}"
            )
        where = f"batch size {bs}" + (
            ""
            if at == b
            else " (bounded by the step costs at other batch sizes)"
            if at == StepCosts.BOUNDED
            else f" (measured at bs<={at})"
        )
        return disabled, (
            f"measured: speculation {gain:.2f}x plain tokens/s at {where}, "
            f"accept length {self.accept_ema:.2f}"
        )

    def _start_probe(self, b: int, disabled: bool) -> None:
        self.bucket_steps[b] = 0
        self.probe_disabled = disabled
        self.probe_left = self.probe_steps

    def _explore(self, bs: int, disabled: bool) -> bool:
        """Static decision taken in a bucket without a verdict: after explore_after steps with
        this mode's cost known, run probe_steps steps of the other mode to measure it."""
        b = StepCosts.bucket(bs)
        if (
            self.bucket_steps[b] >= self.explore_after
            and self.costs.cost(disabled, b) is not None
            and self.costs.cost(not disabled, b) is None
        ):
            self._start_probe(b, not disabled)
            self.probe_left -= 1
            return True
        return False

    def decide(self, bs: int) -> bool:
        """Return True when this decode step must run without speculation."""
        now = self.clock() if self.costs is not None else 0.0
        if self.costs is not None:
            self.costs.record(now, bs)
        if not self.load_off and bs > self.disable_above_bs:
            self.load_off = True
        elif self.load_off and bs < self.enable_below_bs:
            self.load_off = False

        measured = self._measured(bs) if self.costs is not None else None
        if measured is not None:
            disabled, reason = measured
        elif self.load_off:
            disabled, reason = True, f"load: batch size {bs} > {self.disable_above_bs}"
        elif self.probe_left > 0:
            self.probe_left -= 1
            disabled, reason = False, "probe: measuring accept length"
        elif self._accept_low():
            self.steps_since_probe += 1
            if self.steps_since_probe >= self.probe_interval:
                self.steps_since_probe = 0
                self.probe_left = self.probe_steps - 1
                self.probe_disabled = False
                disabled, reason = False, "probe: measuring accept length"
            else:
                disabled, reason = True, (
                    f"accept length {self.accept_ema:.2f} < {self.min_accept_len}"
                )
        else:
            disabled = False
            reason = f"batch size {bs} < {self.enable_below_bs}" if self.num_switches else "start"
        if measured is None and self.costs is not None and self._explore(bs, disabled):
            disabled, reason = not disabled, "probe: measuring step cost"

        if disabled != self.disabled:
            self.num_switches += 1
            # probes (on for a few steps, then off again) are counted, not logged
            if not reason.startswith("probe") and not self.reason.startswith("probe"):
                logger.info(
                    "[spec-dynamic-disable] speculation %s at batch size %d (%s); "
                    "steps on/off so far %d/%d",
                    "OFF" if disabled else "ON",
                    bs,
                    reason,
                    self.steps_on,
                    self.steps_off,
                )
        self.disabled = disabled
        self.reason = reason
        if disabled:
            self.steps_off += 1
        else:
            self.steps_on += 1
        self.pending.append((disabled, bs))
        if self.costs is not None:
            self.costs.decided(now, disabled, bs)
        return disabled

    def note_other_step(self) -> None:
        if self.costs is not None:
            self.costs.history.clear()  # the next decode steps' time includes this one

    def observe(self, num_correct_drafts_per_req: List[int]) -> None:
        """Feed the accept statistics of the oldest unprocessed decode step."""
        if not self.pending:
            return
        disabled, bs = self.pending.popleft()
        if len(num_correct_drafts_per_req) != bs:
            # out of step (should not happen): resynchronise, skip this sample
            self.pending.clear()
            return
        if disabled or bs == 0:
            return
        accept = 1.0 + sum(num_correct_drafts_per_req) / bs
        if self.accept_ema is None:
            self.accept_ema = accept
        else:
            self.accept_ema += self.ema_alpha * (accept - self.accept_ema)
        self.accept_obs += 1

    def metrics(self) -> Tuple[int, float]:
        """(1 if the last decode step ran without speculation, share of decode steps since the
        previous call that did): SGLang's sglang:spec_disabled* gauges."""
        on, off = self.steps_on - self._reported[0], self.steps_off - self._reported[1]
        self._reported = (self.steps_on, self.steps_off)
        return int(self.disabled), (off / (on + off) if on + off else 0.0)

    def status(self) -> str:
        mode = "off" if self.disabled else "on"
        ema = f"{self.accept_ema:.2f}" if self.accept_ema is not None else "-"
        costs = f"{self.costs.describe()}, " if self.costs is not None else ""
        return (
            f"spec: {mode} ({self.reason}), spec steps on/off: "
            f"{self.steps_on}/{self.steps_off}, accept ema: {ema}, {costs}"
        )


@contextlib.contextmanager
def _as_non_speculative(model_runner):
    """Let a CudaGraphRunner capture plain DECODE graphs on a speculative target."""
    saved = model_runner.spec_algorithm
    model_runner.spec_algorithm = SpeculativeAlgorithm.NONE
    try:
        yield
    finally:
        model_runner.spec_algorithm = saved


_PLAIN_DECODE_RUNNER_CLASS = None


def _plain_decode_cuda_graph_runner_class():
    """PlainDecodeCudaGraphRunner, defined on first use (see the note on imports)."""
    global _PLAIN_DECODE_RUNNER_CLASS
    if _PLAIN_DECODE_RUNNER_CLASS is not None:
        return _PLAIN_DECODE_RUNNER_CLASS
    from sglang.srt.model_executor.cuda_graph_runner import CudaGraphRunner

    class PlainDecodeCudaGraphRunner(CudaGraphRunner):
        """Regular one-token DECODE CUDA graphs for the target of a speculative server.

        The target's own runner captures TARGET_VERIFY graphs (num_draft_tokens per
        request); the disabled step needs the graphs a non-speculative server uses.
        Captured on a separate attention backend instance, so the verify graphs'
        attention buffers are not touched.
        """

        def __init__(self, model_runner, attn_backend, hidden_mode: CaptureHiddenMode):
            self._hidden_mode = hidden_mode
            with _as_non_speculative(model_runner):
                super().__init__(model_runner, attn_backend=attn_backend)

        def capture(self) -> None:
            # EAGLE drafts need the target hidden states of every step: capture them
            # once (FULL == LAST for one token per request) so no recapture happens.
            self.capture_hidden_mode = max(self.capture_hidden_mode, self._hidden_mode)
            with _as_non_speculative(self.model_runner):
                return super().capture()

        def can_run(self, forward_batch: ForwardBatch):
            with _as_non_speculative(self.model_runner):
                return super().can_run(forward_batch)

        def replay_prepare(self, forward_batch: ForwardBatch, pp_proxy_tensors=None):
            with _as_non_speculative(self.model_runner):
                return super().replay_prepare(forward_batch, pp_proxy_tensors)

    _PLAIN_DECODE_RUNNER_CLASS = PlainDecodeCudaGraphRunner
    return PlainDecodeCudaGraphRunner


_DEFERRED_DRAFT_LOGITS_CLASS = None


def _deferred_draft_logits_class():
    """DeferredDraftLogits, defined on first use (see the note on imports)."""
    global _DEFERRED_DRAFT_LOGITS_CLASS
    if _DEFERRED_DRAFT_LOGITS_CLASS is not None:
        return _DEFERRED_DRAFT_LOGITS_CLASS
    from sglang.srt.layers.logits_processor import (
        LogitsMetadata,
        LogitsProcessorOutput,
    )
    from sglang.srt.model_executor.forward_batch_info import ForwardBatch

    class DeferredDraftLogits(torch.nn.Module):
        """The draft model's LogitsProcessor for one lazy disabled draft token.

        Returns what the real processor returns except the logits (None): the
        stored hidden states come from the real processor's own helpers, so the
        next draft step's input is unchanged.  Keeps the lm_head's input and the
        lm_head for the deferred top-k.  Installed only around that forward
        (nn.Module, because the model's attribute is a registered submodule).
        """

        def __init__(self, real):
            super().__init__()
            self.__dict__["real"] = real  # not registered: no second owner of its parameters
            self.__dict__["lm_head"] = None
            self.lm_head_input: Optional[torch.Tensor] = None

        def forward(
            self,
            input_ids,
            hidden_states,
            lm_head,
            logits_metadata,
            aux_hidden_states=None,
            hidden_states_before_norm=None,
        ):
            if isinstance(logits_metadata, ForwardBatch):
                logits_metadata = LogitsMetadata.from_forward_batch(logits_metadata)
            (
                pruned_states,
                pruned_states_before_norm,
                aux_pruned_states,
                sample_indices,
                _input_logprob_indices,
                _token_to_seq_idx,
            ) = self.real._get_pruned_states(
                hidden_states, hidden_states_before_norm, aux_hidden_states, logits_metadata
            )
            hidden_states_to_store = self.real._get_hidden_states_to_store(
                hidden_states,
                hidden_states_before_norm,
                aux_hidden_states,
                pruned_states,
                pruned_states_before_norm,
                aux_pruned_states,
                sample_indices,
                logits_metadata,
            )
            self.__dict__["lm_head"] = lm_head
            self.lm_head_input = (
                pruned_states[sample_indices] if sample_indices is not None else pruned_states
            )
            return LogitsProcessorOutput(
                next_token_logits=None, hidden_states=hidden_states_to_store
            )

    _DEFERRED_DRAFT_LOGITS_CLASS = DeferredDraftLogits
    return DeferredDraftLogits


class CatchUpWindow:
    """Host bookkeeping of draft mode ``catchup``: which draft KV positions each request skipped.

    Per ``req_to_token`` row: the request that owns it (``rid``), the first skipped position, how
    many contiguous positions follow, and the slot of the device buffers that keep the skipped
    tokens and the target's hidden states (``[slot, k]``).  One draft EXTEND over them
    (``SpecDisableRuntime._catch_up``) writes the draft KV the skipped steps did not.

    A row whose owner changed (a finished request's row reused) or whose next position is not
    contiguous (a retracted request prefilled again) starts over.  The buffers have ``capacity``
    slots, not one per ``req_to_token`` row (that can be thousands of rows, 24 KB per position
    for EAGLE-3): a slot held by a row that is not in the current batch (its request finished or
    was retracted) is taken back when one is needed; with all slots held by the batch, a request
    gets none and its skipped positions stay stale, as in mode skip.  Pure Python: no tensors.
    """

    def __init__(self, size: int, capacity: int):
        if size < 1 or capacity < 1:
            raise ValueError(f"catch-up window and capacity must be >= 1, got {size}, {capacity}")
        self.size = size
        self.capacity = capacity
        self.rows = {}  # row -> [rid, first position, count, slot]
        self._free = list(range(capacity - 1, -1, -1))

    def _take_slot(self, batch_rows: set) -> Optional[int]:
        if self._free:
            return self._free.pop()
        for row in list(self.rows):
            if row not in batch_rows:
                return self.rows.pop(row)[3]
        return None

    def append(
        self, rows: List[int], rids: List[str], positions: List[int]
    ) -> List[Optional[Tuple[int, int]]]:
        """Record one skipped position per request: its (slot, k) in the buffers, or None when
        no slot was free (that position stays stale)."""
        batch_rows = set(rows)
        out = []
        for row, rid, pos in zip(rows, rids, positions):
            entry = self.rows.get(row)
            if entry is not None and (entry[0] != rid or entry[1] + entry[2] != pos):
                entry[0], entry[1], entry[2] = rid, pos, 0
            if entry is None:
                slot = self._take_slot(batch_rows)
                if slot is None:
                    out.append(None)
                    continue
                entry = self.rows[row] = [rid, pos, 0, slot]
            out.append((entry[3], entry[2]))
            entry[2] += 1
        return out

    def full(self, rows: List[int]) -> bool:
        return any(row in self.rows and self.rows[row][2] >= self.size for row in rows)

    def pending(
        self, rows: List[int], rids: List[str], seq_lens: List[int]
    ) -> List[Tuple[int, int, int, int, int]]:
        """(index in the batch, row, first position, count, slot) of the batch's requests with
        skipped positions that are still theirs: owned by the same request and ending right
        before its current length.  Entries that fail that (a retracted request prefilled
        again, possibly shorter) are dropped: their positions may map to other slots now."""
        out = []
        for i, (row, rid, seq_len) in enumerate(zip(rows, rids, seq_lens)):
            entry = self.rows.get(row)
            if entry is None or entry[2] == 0:
                continue
            if entry[0] == rid and entry[1] + entry[2] == seq_len:
                out.append((i, row, entry[1], entry[2], entry[3]))
            else:
                self.clear([row])
        return out

    def clear(self, rows: List[int]) -> None:
        for row in rows:
            entry = self.rows.pop(row, None)
            if entry is not None:
                self._free.append(entry[3])

    def reserve(self, rows: List[int], rids: List[str], positions: List[int]) -> bool:
        """A prefill whose draft output is deferred: one pending position per request (its last
        prompt position), each in a slot.  All or nothing, and from free slots only: a running
        request's slot is never taken for a new one (its skipped positions would go stale)."""
        if sum(1 for row in rows if row not in self.rows) > len(self._free):
            return False
        for row, rid, pos in zip(rows, rids, positions):
            entry = self.rows.get(row)
            if entry is None:
                entry = self.rows[row] = [rid, pos, 0, self._free.pop()]
            entry[0], entry[1], entry[2] = rid, pos, 1
        return True

    @staticmethod
    def kv_only_plan(
        pending: List[Tuple[int, int, int, int, int]],
    ) -> Tuple[List[List[int]], List[List[int]]]:
        """For a KV-only flush of ``pending`` entries (each with more than one position): the
        positions whose KV is written, as the columns (rows, slots, ks, positions), and each
        entry's last position, as the columns (slots, ks)."""
        written = [
            (row, slot, k, first + k)
            for _, row, first, count, slot in pending
            for k in range(count - 1)
        ]
        last = [(slot, count - 1) for *_, count, slot in pending]
        return [list(c) for c in zip(*written)], [list(c) for c in zip(*last)]

    def keep_last(self, rows: List[int]) -> None:
        """After the draft KV of all but each row's last skipped position was written: that
        position (moved to k = 0 of the row's slot by the caller) is the only one pending."""
        for row in rows:
            entry = self.rows[row]
            entry[1] += entry[2] - 1
            entry[2] = 1


def prefill_kv_only_plan(
    extend_seq_lens: List[int], extend_prefix_lens: List[int]
) -> Tuple[List[int], List[int], List[int]]:
    """A KV-only prefill's rows of the flat extend batch: the rows whose draft KV is written
    (every new position of a request but its last), their positions, and each request's last
    row.  The draft input at row r is (target hidden at r, token at r + 1), as
    _draft_extend_for_prefill shifts input_ids; r + 1 stays inside the request's rows."""
    starts = [0, *itertools.accumulate(extend_seq_lens)][:-1]
    pairs = zip(starts, extend_seq_lens)
    kept = [start + j for start, n in pairs for j in range(n - 1)]
    positions = [p + j for p, n in zip(extend_prefix_lens, extend_seq_lens) for j in range(n - 1)]
    last = [start + n - 1 for start, n in zip(starts, extend_seq_lens)]
    return kept, positions, last


class SpecDisableRuntime:
    """What EAGLEWorkerV2 needs to run disabled steps: policy, target decode graphs, the step itself."""

    def __init__(self, worker, server_args: "ServerArgs"):
        from sglang.srt.model_executor.forward_batch_info import CaptureHiddenMode

        self.worker = worker
        self.device = worker.device
        self.draft_mode = draft_mode(server_args)
        self.is_standalone = worker.speculative_algorithm.is_standalone()
        if self.draft_mode == "catchup" and self.is_standalone:
            # the catch-up extend feeds the target's hidden states to an EAGLE draft
            logger.warning(
                "[spec-dynamic-disable] draft mode catchup needs an EAGLE draft; using lazy"
            )
            self.draft_mode = "lazy"
        self.skip_draft = self.draft_mode == "skip"
        self.catch_up = None
        if self.draft_mode == "catchup":
            self.catch_up = CatchUpWindow(
                _env_int(CATCHUP_WINDOW_ENV, 16),
                min(
                    _env_int(CATCHUP_ROWS_ENV, 256),
                    worker.req_to_token_pool.req_to_token.shape[0],
                ),
            )
        # [slot, k] buffers of the skipped tokens and target hidden states (catchup),
        # allocated now so that a server without the memory for them fails at start
        self._catch_up_tokens: Optional[torch.Tensor] = None
        self._catch_up_hidden: Optional[torch.Tensor] = None
        if self.catch_up is not None:
            self._allocate_catch_up(
                self._target_hidden_width(worker),
                getattr(worker.target_worker.model_runner, "dtype", torch.bfloat16),
            )
        # (draft model, its one layer) when a full window may be written KV only
        self._kv_only = self._kv_only_draft(worker) if self.catch_up is not None else None
        self._kv_checks = 0
        self.check_kv = os.environ.get(CHECK_KV_ENV, "0") == "1"
        self.prefill_kv_only = os.environ.get(PREFILL_KV_ONLY_ENV, "1") == "1"
        self.check_seq_lens = os.environ.get("SGLANG_SPEC_DISABLE_CHECK", "0") == "1"
        self.lazy_draft_logits = self._lazy_draft_logits_supported(worker)
        # per req_pool_idx: the draft lm_head's input of the request's last lazy disabled step
        self._lazy_lm_head_input: Optional[torch.Tensor] = None
        self._lazy_lm_head = None
        # a lazy disabled step ran and no speculative decode step has resolved its top-k yet
        self._lazy_outstanding = False
        self.controller = SpecDisableController(
            disable_above_bs=server_args.speculative_disable_above_bs,
            enable_below_bs=server_args.speculative_enable_below_bs,
            min_accept_len=server_args.speculative_disable_below_accept_len,
            probe_interval=_env_int("SGLANG_SPEC_DISABLE_PROBE_INTERVAL", 512),
            probe_steps=_env_int("SGLANG_SPEC_DISABLE_PROBE_STEPS", 8),
            warmup_steps=_env_int("SGLANG_SPEC_DISABLE_WARMUP_STEPS", 8),
            rule=self._load_rule(server_args),
        )
        self.target_hidden_mode = (
            CaptureHiddenMode.NULL if self.is_standalone else CaptureHiddenMode.FULL
        )

        # A second target attention backend + plain decode CUDA graphs.
        target_runner = worker.target_worker.model_runner
        tic = time.perf_counter()
        backup_init = target_runner.init_new_workspace
        try:
            self.decode_attn_backend = target_runner._get_attention_backend(
                init_new_workspace=True
            )
        finally:
            target_runner.init_new_workspace = backup_init
        self.decode_graph_runner = None
        # SGLANG_SPEC_DISABLE_DECODE_GRAPH=0: eager plain decode (debugging aid)
        if not server_args.disable_cuda_graph and os.environ.get(
            "SGLANG_SPEC_DISABLE_DECODE_GRAPH", "1"
        ) != "0":
            self.decode_graph_runner = _plain_decode_cuda_graph_runner_class()(
                target_runner, self.decode_attn_backend, self.target_hidden_mode
            )
        logger.info(
            "[spec-dynamic-disable] enabled: load rule %s, speculation off above batch "
            "size %d, back on below %d, min accept length %s%s, draft token while disabled: "
            "%s; target decode graphs %s in %.1f s",
            self.controller.rule,
            self.controller.disable_above_bs,
            self.controller.enable_below_bs,
            self.controller.min_accept_len or "off",
            " (until both step costs are measured)" if self.controller.rule == "measured" else "",
            "skipped (stale draft KV)"
            if self.skip_draft
            else f"skipped, caught up in one draft extend per {self.catch_up.size} positions "
            + ("(KV only) " if self._kv_only is not None else "")
            + "and when speculation resumes"
            if self.catch_up is not None
            else (
                "one per step (exact KV; lm_head/top-k deferred to re-enable)"
                if self.lazy_draft_logits
                else "one per step (exact)"
            ),
            "captured" if self.decode_graph_runner else "disabled",
            time.perf_counter() - tic,
        )
        self._warm_up_kernels(worker, server_args.speculative_eagle_topk)

    def _warm_up_kernels(self, worker, topk: int) -> None:
        """Compile the fused kernels (dynamic_disable_kernels) now, not in a request's step."""
        from sglang.srt.speculative.dynamic_disable_kernels import warm_up
        from sglang.srt.speculative.eagle_info import EagleDraftInput

        # the width and dtype of the future map's hidden_states rows (STANDALONE: no such rows)
        width = dtype = None
        if not self.is_standalone:
            width = EagleDraftInput.hidden_size_for(worker.draft_worker)
            dtype = EagleDraftInput.dtype_for(worker.draft_worker)
        warm_up(
            self.device,
            topk,
            width,
            dtype,
            worker.req_to_token_pool.req_to_token,
            (self._catch_up_hidden, self._catch_up_tokens) if self.catch_up is not None else None,
        )

    @staticmethod
    def _load_rule(server_args: "ServerArgs") -> str:
        rule = load_rule(server_args)
        if rule == "measured" and server_args.tp_size > 1:
            # each rank would time its own steps and could decide differently from the others
            logger.warning(
                "[spec-dynamic-disable] load rule measured times steps per rank; with tp "
                "size %d the ranks must decide alike, so the static rule is used",
                server_args.tp_size,
            )
            return "static"
        return rule

    def _lazy_draft_logits_supported(self, worker) -> bool:
        if self.draft_mode != "lazy":
            return False
        from sglang.srt.layers.logits_processor import LogitsProcessor

        model = worker.draft_worker.draft_runner.model
        if not isinstance(getattr(model, "logits_processor", None), LogitsProcessor):
            # e.g. a wrapped/compiled draft model: keep the default exact draft token
            logger.warning(
                "[spec-dynamic-disable] draft mode lazy: the draft model %s has no "
                "LogitsProcessor attribute to defer; using exact",
                type(model).__name__,
            )
            return False
        return True

    # -- policy ---------------------------------------------------------------

    def should_disable(self, batch: "ModelWorkerBatch") -> bool:
        if batch.forward_mode.is_idle():
            self.note_other_step()
            return False
        bs = len(batch.seq_lens)
        # Modes whose output path expects verify-shaped results: always speculate.
        if batch.return_logprob or batch.has_grammar or any(
            getattr(r, "return_hidden_states", False) for r in (batch.reqs or ())
        ):
            self.controller.pending.append((False, bs))
            self.note_other_step()
            return False
        return self.controller.decide(bs)

    def note_other_step(self) -> None:
        """A step the controller did not decide (prefill, idle, a forced speculative one)."""
        self.controller.note_other_step()

    def on_verify_complete_cpu(self, num_correct_drafts_per_req: List[int]) -> None:
        self.controller.observe(num_correct_drafts_per_req)

    def status(self) -> str:
        return self.controller.status()

    def metrics(self) -> Tuple[int, float]:
        return self.controller.metrics()

    # -- the disabled step ----------------------------------------------------

    @contextlib.contextmanager
    def _plain_decode_target(self):
        runner = self.worker.target_worker.model_runner
        saved = runner.attn_backend, runner.graph_runner
        runner.attn_backend = self.decode_attn_backend
        runner.graph_runner = self.decode_graph_runner
        try:
            yield
        finally:
            runner.attn_backend, runner.graph_runner = saved

    def forward_disabled(self, batch: "ModelWorkerBatch") -> "GenerationBatchResult":
        from sglang.srt.model_executor.forward_batch_info import ForwardMode

        from sglang.srt.managers.utils import GenerationBatchResult
        from sglang.srt.speculative.dynamic_disable_kernels import disabled_step_prologue
        from sglang.srt.speculative.eagle_info import EagleDraftInput

        worker = self.worker
        device_module = torch.get_device_module(self.device)
        stream = device_module.current_stream()
        draft_input: EagleDraftInput = batch.spec_info  # resolved from the future map
        bs = len(batch.seq_lens)

        # seq_lens was made on the schedule stream (see EAGLEWorkerV2.verify)
        batch.seq_lens.record_stream(stream)
        old_seq_lens = batch.seq_lens
        # One KV slot per request, at position seq_lens: allocated (and mapped in
        # req_to_token) by the spec-v2 over-allocation in prepare_for_decode.  The new
        # lengths, that slot, the input tokens as int64 (and orig_seq_lens): one launch.
        new_seq_lens, out_cache_loc, input_ids, orig_seq_lens = disabled_step_prologue(
            old_seq_lens,
            batch.req_pool_indices,
            worker.req_to_token_pool.req_to_token,
            draft_input.bonus_tokens,
            batch.orig_seq_lens.dtype if batch.orig_seq_lens is not None else None,
        )
        # The scheduler waits on verify_done before reading seq_lens: here they are
        # known at the start of the step, so it does not wait for the forward.
        verify_done = device_module.Event()
        verify_done.record()
        if self.check_seq_lens:
            self._check_slots(batch, out_cache_loc)

        batch.forward_mode = ForwardMode.DECODE
        batch.input_ids = input_ids
        batch.out_cache_loc = out_cache_loc
        batch.seq_lens = new_seq_lens
        old_seq_lens_cpu = batch.seq_lens_cpu
        batch.seq_lens_cpu = batch.seq_lens_cpu + 1
        batch.seq_lens_sum = batch.seq_lens_sum + bs
        if orig_seq_lens is not None:
            batch.orig_seq_lens = orig_seq_lens
        batch.spec_info = None
        batch.capture_hidden_mode = self.target_hidden_mode

        with self._plain_decode_target():
            target_out = worker.target_worker.forward_batch_generation(batch)
        predict = target_out.next_token_ids
        logits_output = target_out.logits_output

        next_draft_input = EagleDraftInput(
            # int64 as sampled, not the verify path's int32: the future map's buffer has the
            # dtype of the first store (a prefill's int64 next_token_ids) and converts on store
            bonus_tokens=predict,
            new_seq_lens=new_seq_lens,
            verify_done=verify_done,
        )
        if self.skip_draft or self.catch_up is not None:
            next_draft_input.topk_p = draft_input.topk_p
            next_draft_input.topk_index = draft_input.topk_index
            next_draft_input.hidden_states = draft_input.hidden_states
            if self.catch_up is not None:
                self._record_skipped(
                    batch, old_seq_lens_cpu, predict, logits_output.hidden_states,
                    next_draft_input,
                )
        else:
            self._draft_one_token(
                batch, predict, logits_output, next_draft_input, draft_input
            )
        if not self.is_standalone:
            # the aux hidden states are the draft's input, not an output to return
            logits_output.hidden_states = None

        result = GenerationBatchResult(
            logits_output=logits_output,
            next_token_ids=predict,
            can_run_cuda_graph=target_out.can_run_cuda_graph,
            speculative_num_draft_tokens=1,
            next_draft_input=next_draft_input,
            # made on the host: the output processor reads it there (copy_to_cpu's .to("cpu")
            # is then a no-op), which saves a fill and a copy on the forward stream
            accept_lens=torch.ones(bs, dtype=torch.int32),
            routed_experts_output=target_out.routed_experts_output,
            indexer_topk_output=target_out.indexer_topk_output,
        )
        result.spec_disabled = True
        return result

    def _draft_one_token(
        self, batch, predict, target_logits_output, next_draft_input, draft_input
    ):
        """Draft KV at the new position, as the enabled path's draft-extend writes it.

        The draft at position p sees (target hidden at p, token p+1): input_ids is
        the token the target just sampled, positions/out_cache_loc are those of the
        target step, and the output gives topk_p/topk_index/hidden_states for the
        next draft (what _draft_extend_for_decode selects at accept_lens - 1).
        With lazy draft logits the top-k is deferred (see the module docstring).
        """
        from sglang.srt.model_executor.forward_batch_info import CaptureHiddenMode, ForwardBatch

        from sglang.srt.speculative.eagle_info import EagleDraftInput
        from sglang.srt.speculative.spec_utils import maybe_detect_nan
        from sglang.srt.utils.common import fast_topk

        from sglang.srt.layers.moe.utils import (
            speculative_moe_a2a_backend_context,
            speculative_moe_backend_context,
        )

        dw = self.worker.draft_worker
        batch.input_ids = predict.to(torch.int64)
        batch.spec_info = None
        batch.capture_hidden_mode = CaptureHiddenMode.LAST
        with (
            dw.draft_tp_context(dw.draft_runner.tp_group),
            speculative_moe_backend_context(),
            speculative_moe_a2a_backend_context(),
        ):
            forward_batch = ForwardBatch.init_new(batch, dw.draft_runner)
            forward_batch.return_logprob = False
            # plain decode attention metadata (from req_to_token and seq_lens) ...
            forward_batch.attn_backend.init_forward_metadata(forward_batch)
            # ... then the draft's extra input
            forward_batch.spec_info = EagleDraftInput(
                hidden_states=target_logits_output.hidden_states,
                capture_hidden_mode=CaptureHiddenMode.LAST,
                num_tokens_per_req=1,
                num_tokens_for_logprob_per_req=1,
            )
            if self.lazy_draft_logits:
                deferred = self._forward_draft_without_logits(dw, forward_batch)
                if deferred is not None:
                    self._store_deferred_topk(
                        batch, deferred, next_draft_input, draft_input
                    )
                    return
                # the forward did not reach the stand-in: computed the regular way below
            draft_out = dw.draft_runner.forward(
                forward_batch, skip_attn_backend_init=True
            ).logits_output
        maybe_detect_nan(draft_out.next_token_logits, "spec-dynamic-disable draft token")
        probs = torch.softmax(draft_out.next_token_logits, dim=-1)
        next_draft_input.topk_p, next_draft_input.topk_index = fast_topk(
            probs, dw.topk, dim=-1
        )
        next_draft_input.hidden_states = draft_out.hidden_states

    # -- lazy draft logits (SGLANG_SPEC_DISABLE_LAZY_DRAFT_LOGITS=1) ------------

    def _forward_draft_without_logits(self, dw, forward_batch):
        """Run the draft token with the stand-in LogitsProcessor; None if it was not reached.

        The draft runner has no DECODE CUDA graphs (EagleDraftWorker builds it with
        CUDA graphs off and captures its own draft/draft-extend graphs), so this
        forward is eager and calls the model's logits_processor attribute.  Should a
        graph ever replay here instead, the stand-in is not called and the caller
        falls back to today's exact path (a second forward over the same slot
        writes the same KV).
        """
        model = dw.draft_runner.model
        real = model.logits_processor
        deferred = _deferred_draft_logits_class()(real)
        model.logits_processor = deferred
        try:
            draft_out = dw.draft_runner.forward(
                forward_batch, skip_attn_backend_init=True
            ).logits_output
        finally:
            model.logits_processor = real
        if deferred.lm_head_input is None:
            return None
        return draft_out, deferred

    def _store_deferred_topk(self, batch, deferred, next_draft_input, draft_input):
        draft_out, stand_in = deferred
        lm_head_input = stand_in.lm_head_input
        if self._lazy_lm_head_input is None:
            rows = self.worker.req_to_token_pool.req_to_token.shape[0]
            self._lazy_lm_head_input = torch.zeros(
                (rows, lm_head_input.shape[-1]),
                dtype=lm_head_input.dtype,
                device=lm_head_input.device,
            )
        self._lazy_lm_head_input[batch.req_pool_indices] = lm_head_input
        self._lazy_lm_head = stand_in.lm_head
        self._lazy_outstanding = True
        # placeholders shaped/typed like the real values (the future map stores them)
        next_draft_input.topk_p = torch.full_like(draft_input.topk_p, LAZY_TOPK_P)
        next_draft_input.topk_index = torch.zeros_like(draft_input.topk_index)
        next_draft_input.hidden_states = draft_out.hidden_states

    def before_speculative_step(self, batch: "ModelWorkerBatch") -> None:
        """Lazy draft logits: compute the deferred top-k before draft() reads it.

        Called by EAGLEWorkerV2.forward_batch_generation on every speculative decode
        step; a no-op unless a lazy disabled step ran since the last call.  Every
        decoding request is in every decode batch (a retracted one is prefilled
        again, which sets a real top-k), so one pass resolves all markers; a row
        missed anyway would only draft from token 0 once (the target verifies).
        """
        if self.catch_up is not None and batch.forward_mode.is_decode():
            # the caller already runs inside the draft TP/MoE contexts
            self._catch_up(batch, batch.spec_info, enter_draft_context=False)
            return
        if not self._lazy_outstanding or not batch.forward_mode.is_decode():
            return
        from sglang.srt.layers.logits_processor import LogitsMetadata
        from sglang.srt.model_executor.forward_batch_info import ForwardMode
        from sglang.srt.speculative.spec_utils import maybe_detect_nan
        from sglang.srt.utils.common import fast_topk

        self._lazy_outstanding = False
        dw = self.worker.draft_worker
        draft_input = batch.spec_info
        lm_head_input = self._lazy_lm_head_input[batch.req_pool_indices]
        # the draft's own LogitsProcessor (lm_head, logit scale, softcap, float
        # logits) on one token per request, then the same softmax + top-k as
        # _draft_extend_for_decode
        logits = dw.draft_runner.model.logits_processor(
            None,
            lm_head_input,
            self._lazy_lm_head,
            LogitsMetadata(forward_mode=ForwardMode.DECODE),
        ).next_token_logits
        maybe_detect_nan(logits, "spec-dynamic-disable deferred draft top-k")
        probs = torch.softmax(logits, dim=-1)
        topk_p, topk_index = fast_topk(probs, dw.topk, dim=-1)
        deferred_rows = (draft_input.topk_p[:, :1] < 0).expand_as(draft_input.topk_p)
        draft_input.topk_p = torch.where(deferred_rows, topk_p, draft_input.topk_p)
        draft_input.topk_index = torch.where(
            deferred_rows, topk_index.to(draft_input.topk_index.dtype), draft_input.topk_index
        )

    # -- catch-up (--speculative-disable-draft catchup) -------------------------

    def _record_skipped(self, batch, old_seq_lens_cpu, predict, target_hidden, next_draft_input):
        """Keep this step's token and target hidden state for the draft KV it skipped.

        The draft KV at position p is computed from (target hidden at p, token p+1): here p is
        the step's position (old seq_lens) and token p+1 the one just sampled.  When a request's
        window is full, the batch is caught up at once: that step (one in K) also runs one
        draft extend over the batch's pending positions, before its results are copied out."""
        from sglang.srt.speculative.dynamic_disable_kernels import catch_up_record

        reqs = batch.reqs
        rows = [req.req_pool_idx for req in reqs]
        places = self.catch_up.append(
            rows, [req.rid for req in reqs], old_seq_lens_cpu.tolist()
        )
        if tuple(self._catch_up_hidden.shape[2:]) != tuple(target_hidden.shape[1:]) or (
            self._catch_up_hidden.dtype != target_hidden.dtype
        ):
            # the start-up guess of the captured width or dtype was wrong: once, at first use
            self._allocate_catch_up(target_hidden.shape[-1], target_hidden.dtype)
        kept = [i for i, place in enumerate(places) if place is not None]
        if kept:
            # one host-to-device copy for the slots and the ks
            at = self._to_device(
                [places[i][0] for i in kept] + [places[i][1] for i in kept]
            ).view(2, -1)
            hidden_kept, tokens_kept = target_hidden, predict
            if len(kept) < len(places):
                which = self._to_device(kept)
                hidden_kept, tokens_kept = target_hidden[which], predict[which]
            catch_up_record(
                at, hidden_kept, tokens_kept, self._catch_up_hidden, self._catch_up_tokens
            )
        if self.catch_up.full(rows):
            if self._kv_only is not None:
                self._flush_kv_only(batch, next_draft_input)
            else:
                self._catch_up(batch, next_draft_input, enter_draft_context=True)

    @staticmethod
    def _target_hidden_width(worker) -> int:
        """Width of the target hidden states the draft reads: EAGLE-3's fc input (the aux
        hidden states concatenated), else the target's hidden size."""
        if worker.speculative_algorithm.is_eagle3():
            draft_model = getattr(worker.draft_worker.draft_runner.model, "model", None)
            fc = getattr(draft_model, "fc", None)
            if fc is not None and hasattr(fc, "in_features"):
                return fc.in_features
        return worker.target_worker.model_runner.model_config.hidden_size

    def _allocate_catch_up(self, width: int, dtype) -> None:
        window = self.catch_up
        self._catch_up_hidden = torch.empty(
            (window.capacity, window.size, width), dtype=dtype, device=self.device
        )
        self._catch_up_tokens = torch.zeros(
            (window.capacity, window.size), dtype=torch.int64, device=self.device
        )
        logger.info(
            "[spec-dynamic-disable] catch-up buffers: %d requests x %d positions x %d hidden "
            "(%.0f MB)", window.capacity, window.size, width,
            self._catch_up_hidden.numel() * self._catch_up_hidden.element_size() / 2**20,
        )

    def _to_device(self, values: List[int]) -> torch.Tensor:
        # as ForwardBatch.init_new moves its host lists: no wait on the device
        return torch.tensor(values, dtype=torch.int64).to(self.device, non_blocking=True)

    @staticmethod
    def _kv_only_draft(worker):
        """(model, layer) when the draft KV of skipped positions can be written without the
        rest of the draft forward (``_write_draft_kv``), else None.

        That holds for models/llama_eagle3.py's one-layer EAGLE-3 draft: the KV at a
        position depends only on that position's token and target hidden state (the
        attention output feeds nothing but the MLP and the logits).  Anything else, a KV
        scale, or another KV pool class, runs the whole draft forward."""
        if os.environ.get(CATCHUP_KV_ONLY_ENV, "1") == "0":
            return None
        runner = worker.draft_worker.draft_runner
        model = getattr(runner.model, "model", None)
        layers = getattr(model, "layers", None)
        if (
            type(runner.model).__name__ != "LlamaForCausalLMEagle3"
            or type(runner.token_to_kv_pool).__name__ != "MHATokenToKVPool"
            or layers is None
            or len(layers) != 1
            or not getattr(layers[0], "is_input_layer", False)
            or getattr(model, "is_mrope_enabled", True)
            or getattr(layers[0].self_attn.attn, "k_scale", None) is not None
        ):
            return None
        return model, layers[0]

    def _write_draft_kv(self, input_ids, hidden_states, positions, out_cache_loc) -> None:
        """Write the draft KV of positions whose draft output nobody reads.

        The part of the draft forward the KV depends on, as LlamaModel.forward and the input
        layer's LlamaDecoderLayer.forward (models/llama_eagle3.py) compute it: embedding,
        fc_norm and fc, the two norms and the concatenation, the qkv projection and rope;
        then the KV write of the attention backend (RadixAttention's view, the pool's
        set_kv_buffer).  Attention, o_proj, the MLP, the final norm and the logits are
        skipped: about a third of the draft's work per token, and no attention metadata."""
        model, layer = self._kv_only
        embeds = model.embed_tokens(input_ids)
        hidden = hidden_states
        if hidden.shape[-1] != embeds.shape[-1]:
            if model.fc_norm is not None:
                chunks = hidden.chunk(model.num_aux_hidden_states, dim=-1)
                hidden = torch.cat(
                    [norm(chunk) for norm, chunk in zip(model.fc_norm, chunks)], dim=-1
                )
            hidden = model.fc(hidden)
        hidden = layer.hidden_norm(hidden)
        embeds = layer.input_layernorm(embeds)
        x = torch.cat([embeds, hidden], dim=-1)
        _, k, v = layer.self_attn.forward_prepare_native(positions=positions, hidden_states=x)
        attn = layer.self_attn.attn
        self.worker.draft_worker.draft_runner.token_to_kv_pool.set_kv_buffer(
            attn,
            out_cache_loc,
            k.view(-1, attn.tp_k_head_num, attn.qk_head_dim),
            v.view(-1, attn.tp_v_head_num, attn.v_head_dim),
        )

    def _flush_kv_only(self, batch, draft_input) -> None:
        """A window is full: write the draft KV of every skipped position of the batch but
        each request's last one, which stays pending (moved to k = 0 of its slot).  The extend
        when speculation resumes then computes the draft's top-k and hidden state from it,
        as a whole-window extend here would have; and the KV it reads is the same."""
        reqs = batch.reqs
        rows = [req.req_pool_idx for req in reqs]
        pending = [
            p
            for p in self.catch_up.pending(
                rows, [req.rid for req in reqs], batch.seq_lens_cpu.tolist()
            )
            if p[3] > 1
        ]
        if not pending:
            return
        mm_inputs = batch.multimodal_inputs or ()
        if any(mm_inputs[i] is not None for i, *_ in pending if i < len(mm_inputs)):
            self._catch_up(batch, draft_input, enter_draft_context=True)  # it leaves them stale
            return
        from sglang.srt.layers.moe.utils import (
            speculative_moe_a2a_backend_context,
            speculative_moe_backend_context,
        )

        # one host-to-device copy each: the written positions' rows, slots, ks and positions;
        # each request's slot and last k
        written, last = self.catch_up.kv_only_plan(pending)
        flat = self._to_device([v for column in written for v in column]).view(4, -1)
        ends = self._to_device([v for column in last for v in column]).view(2, -1)
        flat_rows, flat_slots, flat_k, flat_positions = flat.unbind(0)
        req_to_token = self.worker.req_to_token_pool.req_to_token
        out_cache_loc = req_to_token[flat_rows, flat_positions].to(torch.int64)
        dw = self.worker.draft_worker
        with (
            dw.draft_tp_context(dw.draft_runner.tp_group),
            speculative_moe_backend_context(),
            speculative_moe_a2a_backend_context(),
        ):
            self._write_draft_kv(
                self._catch_up_tokens[flat_slots, flat_k],
                self._catch_up_hidden[flat_slots, flat_k],
                flat_positions,
                out_cache_loc,
            )
        if self.check_kv:
            self._check_kv_only(batch, draft_input, out_cache_loc)  # runs the whole extend too
            return
        last_slots, last_k = ends.unbind(0)
        self._catch_up_hidden[last_slots, 0] = self._catch_up_hidden[last_slots, last_k]
        self._catch_up_tokens[last_slots, 0] = self._catch_up_tokens[last_slots, last_k]
        self.catch_up.keep_last([row for _, row, *_ in pending])

    def prefill_draft(self, batch, batch_output):
        """The draft's part of a prefill step while speculation is off (``PREFILL_KV_ONLY_ENV``):
        the next_draft_input, or None where the caller runs ``_draft_extend_for_prefill``.

        The whole extend writes the draft KV of every new prompt position and computes the
        draft's top-k and hidden state at the last one.  While the batch decodes plainly, nobody
        reads those until speculation resumes.  So this writes the KV of all positions but each
        request's last one (``_write_draft_kv``) and keeps that last one pending in the catch-up
        window (the target's hidden state there, and the sampled token), as a disabled decode
        step would; the extend at resume computes the top-k from it.  The draft fields of
        next_draft_input are placeholders of the layout the future map holds.

        Only for plain EXTEND batches of requests that are not chunked, without logprobs or
        multimodal inputs, when the last decode step was plain and the window has a free slot
        for every request; ``SGLANG_SPEC_DISABLE_CHECK_KV=1`` compares the KV with the whole
        extend's and returns the whole extend's result."""
        if (
            not self.prefill_kv_only
            or self._kv_only is None
            or not self.controller.disabled
        ):
            return None
        from sglang.srt.model_executor.forward_batch_info import ForwardMode
        from sglang.srt.speculative.eagle_info import EagleDraftInput

        reqs = batch.reqs or []
        logits_output = batch_output.logits_output
        if (
            batch.forward_mode != ForwardMode.EXTEND
            or not reqs
            or batch.return_logprob
            or any(m is not None for m in (batch.multimodal_inputs or ()))
            or getattr(logits_output, "mm_input_embeds", None) is not None
            or any(getattr(req, "is_chunked", 0) > 0 for req in reqs)
            or logits_output.hidden_states is None
            or tuple(self._catch_up_hidden.shape[2:]) != tuple(logits_output.hidden_states.shape[1:])
        ):
            return None
        rows = [req.req_pool_idx for req in reqs]
        seq_lens = batch.seq_lens_cpu.tolist()
        if not self.check_kv and not self.catch_up.reserve(
            rows, [req.rid for req in reqs], [n - 1 for n in seq_lens]
        ):
            return None
        from sglang.srt.layers.moe.utils import (
            speculative_moe_a2a_backend_context,
            speculative_moe_backend_context,
        )

        kept, positions, last = prefill_kv_only_plan(
            list(batch.extend_seq_lens), list(batch.extend_prefix_lens)
        )
        target_hidden = logits_output.hidden_states
        next_token_ids = batch_output.next_token_ids
        dw = self.worker.draft_worker
        out_cache_loc = None
        with (
            dw.draft_tp_context(dw.draft_runner.tp_group),
            speculative_moe_backend_context(),
            speculative_moe_a2a_backend_context(),
        ):
            if kept:
                flat = self._to_device(kept + positions).view(2, -1)
                kept_t, positions_t = flat.unbind(0)
                out_cache_loc = batch.out_cache_loc[kept_t].to(torch.int64)
                self._write_draft_kv(
                    batch.input_ids[kept_t + 1].to(torch.int64),
                    target_hidden[kept_t],
                    positions_t,
                    out_cache_loc,
                )
            if self.check_kv:
                return self._check_prefill_kv_only(batch, batch_output, out_cache_loc)
        from sglang.srt.speculative.dynamic_disable_kernels import catch_up_record

        # each request's last position at k = 0 of its slot, as a disabled step records one;
        # one host-to-device copy for the rows, the slots and the ks
        bs = len(reqs)
        slots = [self.catch_up.rows[row][3] for row in rows]
        last_t, places = self._to_device(last + slots + [0] * bs).view(3, -1).split([1, 2])
        catch_up_record(
            places,
            target_hidden[last_t[0]].to(self._catch_up_hidden.dtype),
            next_token_ids,
            self._catch_up_hidden,
            self._catch_up_tokens,
        )
        hidden_size = EagleDraftInput.hidden_size_for(dw)
        return EagleDraftInput(
            hidden_states=torch.zeros(
                (bs, hidden_size), dtype=EagleDraftInput.dtype_for(dw), device=self.device
            ),
            bonus_tokens=next_token_ids,
            new_seq_lens=batch.seq_lens,
            topk_p=torch.zeros((bs, dw.topk), dtype=torch.float32, device=self.device),
            topk_index=torch.zeros((bs, dw.topk), dtype=torch.int64, device=self.device),
            num_tokens_per_req=1,
            num_tokens_for_logprob_per_req=1,
        )

    def _check_prefill_kv_only(self, batch, batch_output, out_cache_loc):
        """Debug: the whole prefill extend over the same batch; returns its next_draft_input."""
        from sglang.srt.model_executor.forward_batch_info import CaptureHiddenMode

        logits_output = batch_output.logits_output
        # as EAGLEWorkerV2's prefill sets it before this extend: the target's FULL capture
        # mode would return every position's hidden state, not each request's last
        batch.capture_hidden_mode = CaptureHiddenMode.LAST
        return self._kv_against_full(
            "prefill",
            out_cache_loc,
            lambda: self.worker.draft_worker._draft_extend_for_prefill(
                batch,
                logits_output.hidden_states,
                batch_output.next_token_ids,
                logits_output.mm_input_embeds,
            ),
        )

    def _check_kv_only(self, batch, draft_input, out_cache_loc) -> None:
        """Debug: the whole catch-up extend over the same positions (it clears the window)."""
        self._kv_against_full(
            "catch-up",
            out_cache_loc,
            lambda: self._catch_up(batch, draft_input, enter_draft_context=True),
        )

    def _kv_against_full(self, what: str, out_cache_loc, run_full):
        """Debug (SGLANG_SPEC_DISABLE_CHECK_KV=1, syncs): the KV a KV-only write left at
        out_cache_loc against what run_full (the whole draft forward over the same positions,
        into the same slots) writes there; logs the largest difference, returns run_full's
        result."""
        attn = self._kv_only[1].self_attn.attn
        pool = self.worker.draft_worker.draft_runner.token_to_kv_pool

        def read():
            return (
                pool.get_key_buffer(attn.layer_id)[out_cache_loc].float(),
                pool.get_value_buffer(attn.layer_id)[out_cache_loc].float(),
            )

        only = read() if out_cache_loc is not None else None
        result = run_full()
        if only is not None:
            k_full, v_full = read()
            self._kv_checks += 1
            if self._kv_checks <= 5 or self._kv_checks % 100 == 0:
                logger.info(
                    "[spec-dynamic-disable] KV-only %s check %d: %d positions, max |k - k_full| "
                    "%.3g (max |k_full| %.3g), max |v - v_full| %.3g (max |v_full| %.3g)",
                    what,
                    self._kv_checks,
                    out_cache_loc.numel(),
                    (only[0] - k_full).abs().max().item(),
                    k_full.abs().max().item(),
                    (only[1] - v_full).abs().max().item(),
                    v_full.abs().max().item(),
                )
        return result

    def _catch_up(self, batch, draft_input, enter_draft_context: bool) -> None:
        """One draft EXTEND over the batch's skipped positions; refreshes draft_input's top-k.

        Writes the draft KV of every skipped position still in the window (the ones before it
        stay stale) and sets the requests' topk_p/topk_index/hidden_states from the last one, as
        the exact mode's last draft token would have.  Built like _draft_extend_for_prefill:
        an EXTEND ModelWorkerBatch over those requests only, prefix = the positions before the
        first skipped one, the target's hidden states as the draft's input.

        enter_draft_context: enter the draft TP/MoE contexts here.  False where the caller is
        inside them already (before_speculative_step): SGLang's patch_tensor_parallel_group
        asserts that it is not entered twice."""
        reqs = batch.reqs
        if not reqs:
            return
        rows = [req.req_pool_idx for req in reqs]
        # the batch's current lengths: the skipped positions must end right before them
        pending = self.catch_up.pending(
            rows, [req.rid for req in reqs], batch.seq_lens_cpu.tolist()
        )
        if not pending:
            return
        mm_inputs = batch.multimodal_inputs or ()
        if any(mm_inputs[i] is not None for i, *_ in pending if i < len(mm_inputs)):
            # a multimodal request's draft extend needs its input embeddings: left stale
            self.catch_up.clear([row for _, row, *_ in pending])
            return
        import dataclasses

        from sglang.srt.layers.moe.utils import (
            speculative_moe_a2a_backend_context,
            speculative_moe_backend_context,
        )
        from sglang.srt.model_executor.forward_batch_info import (
            CaptureHiddenMode,
            ForwardBatch,
            ForwardMode,
        )
        from sglang.srt.speculative.eagle_info import EagleDraftInput
        from sglang.srt.speculative.spec_utils import maybe_detect_nan
        from sglang.srt.utils.common import fast_topk

        dw = self.worker.draft_worker
        counts = [count for _, _, _, count, _ in pending]
        firsts = [first for _, _, first, _, _ in pending]
        flat_rows = self._to_device([row for _, row, _, count, _ in pending for _ in range(count)])
        flat_slots = self._to_device([slot for *_, count, slot in pending for _ in range(count)])
        flat_k = self._to_device([k for count in counts for k in range(count)])
        flat_positions = self._to_device(
            [first + k for first, count in zip(firsts, counts) for k in range(count)]
        )
        seq_lens_host = [first + count for first, count in zip(firsts, counts)]
        seq_lens = torch.tensor(seq_lens_host, dtype=batch.seq_lens.dtype).to(
            self.device, non_blocking=True
        )
        req_to_token = self.worker.req_to_token_pool.req_to_token
        extend = dataclasses.replace(
            batch,
            forward_mode=ForwardMode.EXTEND,
            input_ids=self._catch_up_tokens[flat_slots, flat_k],
            req_pool_indices=self._to_device([row for _, row, _, _, _ in pending]),
            seq_lens=seq_lens,
            seq_lens_cpu=torch.tensor(seq_lens_host, dtype=batch.seq_lens_cpu.dtype),
            seq_lens_sum=sum(seq_lens_host),
            orig_seq_lens=seq_lens.to(torch.int32),
            out_cache_loc=req_to_token[flat_rows, flat_positions].to(torch.int64),
            return_logprob=False,
            extend_num_tokens=sum(counts),
            extend_seq_lens=counts,
            extend_prefix_lens=firsts,
            extend_logprob_start_lens=counts,
            extend_input_logprob_token_ids=None,
            is_extend_in_batch=True,
            all_extend_in_batch=True,
            reqs=[reqs[i] for i, *_ in pending],
            # per-request fields of the decode batch: the subset's, or off for this forward
            multimodal_inputs=None,
            lora_ids=(
                [batch.lora_ids[i] for i, *_ in pending] if batch.lora_ids else batch.lora_ids
            ),
            top_logprobs_nums=None,
            token_ids_logprobs=None,
            input_embeds=None,
            replace_embeds=None,
            replace_positions=None,
            token_type_ids=None,
            mamba_track_indices=None,
            mamba_track_mask=None,
            mamba_track_seqlens=None,
            dllm_block_offsets=None,
            multi_item_delimiter_indices=None,
            capture_hidden_mode=CaptureHiddenMode.LAST,
            spec_info=EagleDraftInput(
                hidden_states=self._catch_up_hidden[flat_slots, flat_k],
                capture_hidden_mode=CaptureHiddenMode.LAST,
                num_tokens_per_req=1,
                num_tokens_for_logprob_per_req=1,
            ),
        )
        with (
            dw.draft_tp_context(dw.draft_runner.tp_group)
            if enter_draft_context
            else contextlib.nullcontext(),
            speculative_moe_backend_context()
            if enter_draft_context
            else contextlib.nullcontext(),
            speculative_moe_a2a_backend_context()
            if enter_draft_context
            else contextlib.nullcontext(),
        ):
            forward_batch = ForwardBatch.init_new(extend, dw.draft_runner)
            forward_batch.return_logprob = False
            out = dw.draft_runner.forward(forward_batch).logits_output
        maybe_detect_nan(out.next_token_logits, "spec-dynamic-disable catch-up")
        probs = torch.softmax(out.next_token_logits, dim=-1)
        topk_p, topk_index = fast_topk(probs, dw.topk, dim=-1)
        at = (self._to_device([i for i, *_ in pending]),)
        draft_input.topk_p = draft_input.topk_p.index_put(at, topk_p.to(draft_input.topk_p.dtype))
        draft_input.topk_index = draft_input.topk_index.index_put(
            at, topk_index.to(draft_input.topk_index.dtype)
        )
        draft_input.hidden_states = draft_input.hidden_states.index_put(
            at, out.hidden_states.to(draft_input.hidden_states.dtype)
        )
        self.catch_up.clear([row for _, row, *_ in pending])

    def _check_slots(self, batch, out_cache_loc):
        """Debug (SGLANG_SPEC_DISABLE_CHECK=1, syncs): the slot must be a real allocated slot."""
        seq_lens_cpu = batch.seq_lens.cpu()
        if not torch.equal(seq_lens_cpu, batch.seq_lens_cpu.to(seq_lens_cpu.dtype)):
            raise RuntimeError(
                f"[spec-dynamic-disable] seq_lens {seq_lens_cpu.tolist()} != "
                f"seq_lens_cpu {batch.seq_lens_cpu.tolist()}"
            )
        if bool((out_cache_loc <= 0).any()):
            raise RuntimeError(
                "[spec-dynamic-disable] no KV slot allocated at position seq_lens: "
                f"{out_cache_loc.tolist()}"
            )
