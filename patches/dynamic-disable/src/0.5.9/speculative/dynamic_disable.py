"""Dynamic speculation disable for the spec-v2 EAGLE worker (overlap scheduler).

Added by the spectrace patch series ``dynamic-disable``.

Under load (large running batches) speculative decoding costs more than it
gains; with drafts that are rarely accepted it never pays.  This module lets
``EAGLEWorkerV2`` run a *plain one-token target decode step* instead of
draft + verify + draft-extend, chosen per decode step from the running batch
size (with hysteresis) and, optionally, from the observed accept length.

The scheduler's spec-v2 contract is kept on every path: the disabled step
returns a ``GenerationBatchResult`` whose ``next_draft_input`` carries
``verified_id``, ``new_seq_lens`` (= seq_lens + 1), ``verify_done``,
``topk_p``, ``topk_index`` and ``hidden_states`` with the shapes the future map
stores, ``accept_lens`` (all ones), and ``spec_disabled = True`` which makes the
output processor use a stride of 1 instead of speculative_num_draft_tokens.
KV slots come from the spec-v2 over-allocation that
``EagleDraftInputV2Mixin.prepare_for_decode`` already made
(``kv_committed_len + 2 * alloc_len_per_decode``), so the token-pool accounting
is unchanged and nothing is allocated or freed here.

Draft state: by default every disabled step also runs ONE draft-model decode
token (the target's new hidden state + the sampled token, written at the same
KV slot the enabled path's draft-extend would write), so the draft KV and
``topk_p/topk_index/hidden_states`` are exactly what the enabled path would
hold and speculation can resume on the next step with no catch-up.
``SGLANG_SPEC_DISABLE_SKIP_DRAFT=1`` skips that draft token (cheaper; the draft
KV of the skipped positions is left stale, as upstream's
``SGLANG_SPEC_SKIP_ZERO_STEP_DRAFT_EXTEND``; outputs stay correct because the
target verifies, only acceptance after re-enabling may suffer).
"""

from __future__ import annotations

import collections
import contextlib
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

# Modes this series targets.  SGLang 0.5.9 was NOT run on a GPU with this series (its torch
# does not run on the lent H200); the same design was verified on 0.5.12 (H200, triton).
VERIFIED_ALGORITHMS = ("EAGLE", "EAGLE3")
VERIFIED_ATTENTION_BACKENDS = ("triton",)
ALLOW_UNVERIFIED_ENV = "SGLANG_SPEC_DISABLE_ALLOW_UNVERIFIED"


def _env_int(name: str, default: int) -> int:
    try:
        return int(os.environ.get(name, default))
    except ValueError:
        return default


def unsupported_reason(server_args: "ServerArgs") -> Optional[str]:
    """Why --speculative-dynamic-disable cannot run with these arguments (None: it can)."""
    algo = (server_args.speculative_algorithm or "").upper()
    if not algo:
        return "it needs speculative decoding (--speculative-algorithm EAGLE or EAGLE3)"
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

    def status(self) -> str:
        mode = "off" if self.disabled else "on"
        ema = f"{self.accept_ema:.2f}" if self.accept_ema is not None else "-"
        costs = f"{self.costs.describe()}, " if self.costs is not None else ""
        return (
            f"spec: {mode} ({self.reason}), spec steps on/off: "
            f"{self.steps_on}/{self.steps_off}, accept ema: {ema}, {costs}"
        )


@contextlib.contextmanager
def _as_non_speculative(model_runner, attn_backend=None):
    """Let a CudaGraphRunner capture plain DECODE graphs on a speculative target.

    0.5.9's CudaGraphRunner always uses model_runner.attn_backend, so the plain decode
    backend is swapped in as well.
    """
    saved = model_runner.spec_algorithm, model_runner.attn_backend
    model_runner.spec_algorithm = SpeculativeAlgorithm.NONE
    if attn_backend is not None:
        model_runner.attn_backend = attn_backend
    try:
        yield
    finally:
        model_runner.spec_algorithm, model_runner.attn_backend = saved


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
            self._decode_attn_backend = attn_backend
            with _as_non_speculative(model_runner, attn_backend):
                super().__init__(model_runner)

        def capture(self) -> None:
            # EAGLE drafts need the target hidden states of every step: capture them
            # once (FULL == LAST for one token per request) so no recapture happens.
            self.capture_hidden_mode = max(self.capture_hidden_mode, self._hidden_mode)
            with _as_non_speculative(self.model_runner, self._decode_attn_backend):
                return super().capture()

        def can_run(self, forward_batch: ForwardBatch):
            with _as_non_speculative(self.model_runner, self._decode_attn_backend):
                return super().can_run(forward_batch)

        def replay_prepare(self, forward_batch: ForwardBatch, pp_proxy_tensors=None):
            with _as_non_speculative(self.model_runner, self._decode_attn_backend):
                return super().replay_prepare(forward_batch, pp_proxy_tensors)

    _PLAIN_DECODE_RUNNER_CLASS = PlainDecodeCudaGraphRunner
    return PlainDecodeCudaGraphRunner


class SpecDisableRuntime:
    """What EAGLEWorkerV2 needs to run disabled steps: policy, target decode graphs, the step itself."""

    def __init__(self, worker, server_args: "ServerArgs"):
        from sglang.srt.model_executor.forward_batch_info import CaptureHiddenMode

        self.worker = worker
        self.device = worker.device
        self.skip_draft = os.environ.get("SGLANG_SPEC_DISABLE_SKIP_DRAFT", "0") == "1"
        self.check_seq_lens = os.environ.get("SGLANG_SPEC_DISABLE_CHECK", "0") == "1"
        self.controller = SpecDisableController(
            disable_above_bs=server_args.speculative_disable_above_bs,
            enable_below_bs=server_args.speculative_enable_below_bs,
            min_accept_len=server_args.speculative_disable_below_accept_len,
            probe_interval=_env_int("SGLANG_SPEC_DISABLE_PROBE_INTERVAL", 512),
            probe_steps=_env_int("SGLANG_SPEC_DISABLE_PROBE_STEPS", 8),
            warmup_steps=_env_int("SGLANG_SPEC_DISABLE_WARMUP_STEPS", 8),
            rule=self._load_rule(server_args),
        )
        self.is_standalone = worker.speculative_algorithm.is_standalone()
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
            "skipped (stale draft KV)" if self.skip_draft else "one per step (exact)",
            "captured" if self.decode_graph_runner else "disabled",
            time.perf_counter() - tic,
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

    def on_spec_step_done_cpu(self, num_correct_drafts_per_req: List[int]) -> None:
        self.controller.observe(num_correct_drafts_per_req)

    def status(self) -> str:
        return self.controller.status()

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
        from sglang.srt.speculative.eagle_info import EagleDraftInput

        worker = self.worker
        device_module = torch.get_device_module(self.device)
        stream = device_module.current_stream()
        draft_input: EagleDraftInput = batch.spec_info  # resolved from the future map
        bs = len(batch.seq_lens)

        # seq_lens was made on the schedule stream (see EAGLEWorkerV2.verify)
        batch.seq_lens.record_stream(stream)
        old_seq_lens = batch.seq_lens
        new_seq_lens = old_seq_lens + 1
        # The scheduler waits on verify_done before reading seq_lens: here they are
        # known at the start of the step, so it does not wait for the forward.
        verify_done = device_module.Event()
        verify_done.record()

        # One KV slot per request, at position seq_lens: allocated (and mapped in
        # req_to_token) by the spec-v2 over-allocation in prepare_for_decode.
        req_to_token = worker.req_to_token_pool.req_to_token
        out_cache_loc = req_to_token[batch.req_pool_indices, old_seq_lens].to(
            torch.int64
        )
        if self.check_seq_lens:
            self._check_slots(batch, out_cache_loc)

        batch.forward_mode = ForwardMode.DECODE
        batch.input_ids = draft_input.verified_id.to(torch.int64)
        batch.out_cache_loc = out_cache_loc
        batch.seq_lens = new_seq_lens
        batch.seq_lens_cpu = batch.seq_lens_cpu + 1
        batch.seq_lens_sum = batch.seq_lens_sum + bs
        if batch.orig_seq_lens is not None:
            batch.orig_seq_lens = new_seq_lens.to(batch.orig_seq_lens.dtype)
        batch.spec_info = None
        batch.capture_hidden_mode = self.target_hidden_mode

        with self._plain_decode_target():
            target_out = worker.target_worker.forward_batch_generation(batch)
        predict = target_out.next_token_ids
        logits_output = target_out.logits_output

        next_draft_input = EagleDraftInput(
            verified_id=predict.to(torch.int32),
            new_seq_lens=new_seq_lens,
            verify_done=verify_done,
        )
        if self.skip_draft:
            next_draft_input.topk_p = draft_input.topk_p
            next_draft_input.topk_index = draft_input.topk_index
            next_draft_input.hidden_states = draft_input.hidden_states
        else:
            self._draft_one_token(batch, predict, logits_output, next_draft_input)
        if not self.is_standalone:
            # the aux hidden states are the draft's input, not an output to return
            logits_output.hidden_states = None

        result = GenerationBatchResult(
            logits_output=logits_output,
            next_token_ids=predict,
            can_run_cuda_graph=target_out.can_run_cuda_graph,
            next_draft_input=next_draft_input,
            accept_lens=torch.ones(bs, dtype=torch.int32, device=self.device),
        )
        # the output processor (patched) takes stride 1 for this result
        result.spec_disabled = True
        return result

    def _draft_one_token(self, batch, predict, target_logits_output, next_draft_input):
        """Draft KV at the new position, as the enabled path's draft-extend writes it.

        The draft at position p sees (target hidden at p, token p+1): input_ids is
        the token the target just sampled, positions/out_cache_loc are those of the
        target step, and the output gives topk_p/topk_index/hidden_states for the
        next draft (what _draft_extend_for_decode selects at accept_lens - 1).
        """
        from sglang.srt.model_executor.forward_batch_info import CaptureHiddenMode, ForwardBatch

        from sglang.srt.speculative.eagle_info import EagleDraftInput
        from sglang.srt.speculative.spec_utils import detect_nan
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
            draft_out = dw.draft_runner.forward(
                forward_batch, skip_attn_backend_init=True
            ).logits_output
        if getattr(self.worker, "enable_nan_detection", False):
            detect_nan(draft_out)
        probs = torch.softmax(draft_out.next_token_logits, dim=-1)
        next_draft_input.topk_p, next_draft_input.topk_index = fast_topk(
            probs, dw.topk, dim=-1
        )
        next_draft_input.hidden_states = draft_out.hidden_states

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
