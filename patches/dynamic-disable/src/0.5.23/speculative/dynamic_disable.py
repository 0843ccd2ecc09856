"""--speculative-dynamic-disable for the spec-v2 EAGLE worker.

What it does: each decode step runs draft + verify, or one plain DECODE forward of
the target (SGLang's own graphs, on a second attention backend) whose result keeps
a valid EagleDraftInput. The draft extend writes the draft KV of plain positions
when speculation resumes.

The rule, per batch-size bucket (powers of two):
- A bucket runs in windows of WINDOW steps, each in one mode.
- A mode's step time is the median of its last WINDOW steps, timed on the host
  between decisions once three of one mode and bucket have passed; from steps in
  which the batch kept its size once both modes have three; no gap over IDLE s; at
  most a larger bucket's.
- The accept length is that of the bucket's last WINDOW verify steps. A batch of one
  is one request: a new one is measured, not judged by the one before (in larger
  buckets the mean moves slowly and measuring each new set would cost too much).
- At a window's start: a missing measurement first; else speculate while
  accept * t_plain > t_spec (MARGIN band).
- The loser runs a window after r * (1 - 1 / loss) / BUDGET windows (loss: how many
  times slower it was; r: its step time over the winner's): its extra time is BUDGET
  of the time since. As accept >= 1, the wait is at most (t_spec/t_plain - 1)/BUDGET.

TP: rank 0 plans each window and broadcasts the plan.

Prefix cache: a finished request is cached only up to its first position whose
draft KV was not written.
"""

from __future__ import annotations

import collections
import contextlib
import dataclasses
import logging
import statistics
import time
from types import SimpleNamespace
from typing import Optional

logger = logging.getLogger(__name__)

WINDOW = 8  # steps per window: fewer switches, later reactions
BUDGET = 0.01  # time spent measuring the loser: finds a change sooner, costs more
MARGIN = 0.03  # verdict hysteresis: no flapping on a close call, a late switch
IDLE = 1.0  # seconds between decisions that mean an idle server, not a step
NONE_STALE = 1 << 62  # stale_from of a row whose draft KV is complete

Decision = collections.namedtuple("Decision", "speculate bucket time bs")


def unsupported_reason(cfg, allow_unverified: bool = False) -> Optional[str]:
    """Why a resolved configuration cannot use the core; the second list: no GPU run."""
    if (cfg.speculative_algorithm or "").upper() not in ("EAGLE", "EAGLE3"):
        return f"--speculative-algorithm {cfg.speculative_algorithm} (EAGLE, EAGLE3)"
    backend = cfg.decode_attention_backend or cfg.attention_backend
    checks = [
        ((cfg.speculative_eagle_topk or 1) != 1, "--speculative-eagle-topk > 1"),
        (cfg.enable_multi_layer_eagle, "--enable-multi-layer-eagle"),
        (
            cfg.speculative_use_rejection_sampling,
            "--speculative-use-rejection-sampling",
        ),
        (cfg.enable_dp_attention, "--enable-dp-attention"),
        (cfg.pp_size > 1, "--pp-size > 1"),
        (cfg.enable_two_batch_overlap, "--enable-two-batch-overlap"),
        (cfg.enable_pdmux, "--enable-pdmux"),
        (cfg.disaggregation_mode not in (None, "null"), "--disaggregation-mode"),
    ]
    if not allow_unverified:
        checks += [
            (cfg.speculative_draft_model_path in (None, cfg.model_path), "MTP drafts"),
            (backend != "triton", f"--attention-backend {backend} (triton only)"),
            (cfg.page_size > 1, "--page-size > 1"),
            (cfg.disable_overlap_schedule, "--disable-overlap-schedule"),
            (cfg.tp_size > 1, "--tp-size > 1"),
        ]
    for bad, reason in checks:
        if bad:
            return reason
    return None


def bucket_of(batch_size: int) -> int:
    """The power of two at or above the batch size."""
    return 1 << max(0, batch_size - 1).bit_length()


class Bucket:
    """What one batch-size bucket has measured, and the window it is in."""

    def __init__(self):
        # step times by (speculate, clean): clean steps kept the batch size
        self.times = collections.defaultdict(lambda: collections.deque(maxlen=WINDOW))
        # (accepted drafts, requests) of each verify step
        self.accepted = collections.deque(maxlen=WINDOW)
        self.verdict = True  # whether speculation wins
        self.mode = True  # the current window's mode
        self.measuring = False  # whether the current window measures the loser
        self.steps_left = 0  # in the current window
        self.windows_since_measured = 0
        self.measured_on = None  # bucket 1: the request of its last speculative window

    def time(self, speculate: bool) -> Optional[float]:
        clean = all(len(self.times[(mode, True)]) >= 3 for mode in (True, False))
        samples = self.times[(speculate, clean)]
        if len(samples) < 3:
            return None
        return statistics.median(samples)

    def accept(self) -> Optional[float]:
        requests = sum(n for _, n in self.accepted)
        if requests == 0:
            return None
        return 1 + sum(accepted for accepted, _ in self.accepted) / requests


class SpecDisableController:
    """Speculate or not, each decode step (the rule: the module's docstring)."""

    def __init__(self, disable_above_bs=None, share=None, clock=time.perf_counter):
        self.disable_above_bs = disable_above_bs
        self.share = share  # rank 0's plan on every TP rank; None without TP
        self.clock = clock
        self.buckets = collections.defaultdict(Bucket)
        self.history = collections.deque(maxlen=3)  # the last Decisions

    def cost(self, speculate: bool, bucket: int) -> Optional[float]:
        """The bucket's step time, at most that of a larger bucket."""
        times = [
            b.time(speculate) for size, b in self.buckets.items() if size >= bucket
        ]
        return min((t for t in times if t is not None), default=None)

    @property
    def measuring(self) -> bool:
        if not self.history:
            return False
        return self.buckets[self.history[-1].bucket].measuring

    def decide(self, bs: int, needs_verify: bool = False, rid=None) -> bool:
        """rid: the request's id at batch size 1."""
        now = self.clock()
        bucket = bucket_of(bs)
        self._time_last_step(now, bucket, bs)
        if needs_verify:
            speculate = True
        elif self.disable_above_bs is not None and bs > self.disable_above_bs:
            speculate = False
        else:
            state = self.buckets[bucket]
            if state.steps_left == 0:
                if rid is not None and not state.mode and rid != state.measured_on:
                    state.accepted.clear()  # a new request: measure it
                plan = self._plan(bucket, state)
                if self.share is not None:
                    plan = self.share(plan)
                state.mode, state.measuring = plan
                state.steps_left = WINDOW
                if state.mode:
                    state.measured_on = rid
            state.steps_left -= 1
            speculate = state.mode
        self.history.append(Decision(speculate, bucket, now, bs))
        return speculate

    def _time_last_step(self, now: float, bucket: int, bs: int) -> None:
        # Under the overlap scheduler the time between two decisions is a step's
        # once three decisions of one mode and bucket have passed.
        if len(self.history) < 3:
            return
        last = self.history[-1]
        for decision in self.history:
            if decision.speculate != last.speculate or decision.bucket != bucket:
                return
        step_time = now - last.time
        if step_time >= IDLE:
            return
        times = self.buckets[bucket].times
        times[(last.speculate, False)].append(step_time)
        if self.history[-2].bs == last.bs == bs:  # no request ended
            times[(last.speculate, True)].append(step_time)

    def observe(self, num_correct_drafts_per_req) -> None:
        requests = len(num_correct_drafts_per_req)
        if requests > 0:
            accepted = sum(num_correct_drafts_per_req)
            self.buckets[bucket_of(requests)].accepted.append((accepted, requests))

    def _plan(self, bucket: int, state: Bucket) -> tuple:
        """(speculate, measuring) for the bucket's next window."""
        accept = state.accept()
        if state.time(True) is None or accept is None:
            return True, True
        if state.time(False) is None:
            return False, True
        on = self.cost(True, bucket)
        off = self.cost(False, bucket)
        gain = accept * off / on
        if state.verdict:
            verdict = gain > 1 - MARGIN
        else:
            verdict = gain > 1 + MARGIN
        if verdict != state.verdict:
            logger.info(
                f"[spec-dynamic-disable] speculation {'ON' if verdict else 'OFF'} "
                f"at batch size <= {bucket}: accept length {accept:.2f}, "
                f"step ms spec/plain {on * 1e3:.1f}/{off * 1e3:.1f}"
            )
            state.verdict = verdict
        if state.measuring:
            state.windows_since_measured = 0
        else:
            state.windows_since_measured += 1
        loss = max(gain, 1 / gain)
        ratio = off / on if verdict else on / off  # the loser's step, in winner steps
        if state.windows_since_measured >= ratio * (1 - 1 / loss) / BUDGET:
            return not verdict, True  # the loser's turn
        return verdict, False


@contextlib.contextmanager
def plain_target(model_runner, attn_backend, graph_runner):
    """The target model runner as a non-speculative one on this backend and graphs."""
    from sglang.srt.speculative.spec_info import SpeculativeAlgorithm

    names = ("spec_algorithm", "attn_backend", "decode_cuda_graph_runner")
    saved = [getattr(model_runner, name) for name in names]
    plain = (SpeculativeAlgorithm.NONE, attn_backend, graph_runner)
    for name, value in zip(names, plain):
        setattr(model_runner, name, value)
    try:
        yield
    finally:
        for name, value in zip(names, saved):
            setattr(model_runner, name, value)


class SpecDisableRuntime:
    """The core in EAGLEWorkerV2 (with --speculative-adaptive: its steps-0 tier)."""

    def __init__(self, worker):
        from sglang.srt.configs.hybrid_arch import mambaish_config
        from sglang.srt.environ import envs
        from sglang.srt.runtime_context import get_spec

        server_args = worker.server_args
        model_runner = worker.target_worker.model_runner
        allow = envs.SGLANG_SPEC_DYNAMIC_DISABLE_ALLOW_UNVERIFIED.get()
        if mambaish_config(model_runner.model_config) is not None and not allow:
            raise ValueError("--speculative-dynamic-disable: hybrid linear attention")
        self.worker = worker
        self.controller = SpecDisableController(
            get_spec().speculative_disable_above_bs,
            share=self._share if server_args.tp_size > 1 else None,
        )
        self.full_catch_up = envs.SGLANG_SPEC_DYNAMIC_DISABLE_FULL_CATCH_UP.get()
        self.ring_size = worker.speculative_num_draft_tokens
        # the plain step's attention backend and graphs (init_cuda_graphs)
        self.attn_backend = self.graph_runner = None
        # per pool row: a ring of (token, target hidden) of the last plain positions
        self.tokens = self.hidden = None
        # per pool row: plain positions since the last catch-up, the first stale one
        self.pending = self.stale_from = None

    def allocate(self, rows: int) -> None:
        import torch

        self.pending = torch.zeros(rows, dtype=torch.int32)
        self.stale_from = torch.full((rows,), NONE_STALE, dtype=torch.int64)

    def init_cuda_graphs(self):
        """A second attention backend and DECODE graphs for the target."""
        from sglang.srt.model_executor import cuda_graph_config as cg
        from sglang.srt.model_executor.forward_batch_info import CaptureHiddenMode
        from sglang.srt.model_executor.runner import DecodeCudaGraphRunner
        from sglang.srt.utils.common import get_available_gpu_memory

        class _DecodeGraphRunnerWithHidden(DecodeCudaGraphRunner):
            # The catch-up reads the target's hidden states (EAGLE-3: the aux layers).
            return_hidden_states_mode = property(
                lambda self: CaptureHiddenMode.FULL, lambda self, value: None
            )

        worker = self.worker
        model_runner = worker.target_worker.model_runner
        self.allocate(worker.req_to_token_pool.req_to_token.shape[0])
        graphs = not cg.check_cuda_graph_backend(cg.Phase.DECODE, cg.Backend.DISABLED)
        before = get_available_gpu_memory(worker.device, worker.gpu_id)
        saved_workspace = model_runner.init_new_workspace
        try:
            with plain_target(
                model_runner,
                model_runner.attn_backend,
                model_runner.decode_cuda_graph_runner,
            ):
                self.attn_backend = model_runner._get_attention_backend(
                    init_new_workspace=True
                )
                if graphs:
                    self.graph_runner = _DecodeGraphRunnerWithHidden(
                        model_runner, attn_backend=self.attn_backend
                    )
        finally:
            model_runner.init_new_workspace = saved_workspace
        used = before - get_available_gpu_memory(worker.device, worker.gpu_id)
        usage = worker._additional_graph_memory_usage
        usage["decode"] = usage.get("decode", 0.0) + used

    @staticmethod
    def needs_verify(batch) -> bool:  # an output that only the verify path gives
        needs = batch.forward_mode.is_idle() or batch.return_logprob
        return needs or batch.has_grammar or batch.return_hidden_states

    def speculate(self, batch) -> bool:
        needs_verify = self.needs_verify(batch)
        if self.worker.adaptive_controller is not None:  # it chose the tier
            return self.worker.speculative_num_steps > 0 or needs_verify
        rid = batch.reqs[0].rid if len(batch.reqs) == 1 else None
        return self.controller.decide(batch.batch_size(), needs_verify, rid)

    @staticmethod
    def _share(plan: tuple) -> tuple:
        """Rank 0's plan, on every rank of the TP group."""
        import torch

        from sglang.srt.distributed import get_tp_group

        group = get_tp_group()
        shared = torch.tensor(plan, dtype=torch.int32)
        torch.distributed.broadcast(shared, group.ranks[0], group.cpu_group)
        return tuple(bool(value) for value in shared.tolist())

    def on_prefill(self, batch):
        # the next steps' time includes the prefill
        self.controller.history.clear()
        # the prefill's draft extend writes the draft KV: nothing pending for its rows
        self.pending[batch.req_pool_indices_cpu] = 0
        self.stale_from[batch.req_pool_indices_cpu] = NONE_STALE

    def before_release(self, req) -> None:
        """Cache a finished request up to its first stale draft position."""
        kv = req.kv
        if kv.req_pool_idx is not None:
            stale = int(self.stale_from[kv.req_pool_idx])
            kv.kv_committed_len = min(kv.kv_committed_len, stale)

    def before_speculative_step(self, batch):
        if (self.pending[batch.req_pool_indices_cpu] > 0).any():
            self._catch_up(batch, batch.spec_info, batch.seq_lens, batch.seq_lens_cpu)

    def forward_disabled(self, batch, on_publish=None):
        """A plain decode step: the target's own result, in the spec-v2 shape."""
        import torch

        from sglang.srt.model_executor.forward_batch_info import (
            CaptureHiddenMode,
            ForwardMode,
        )
        from sglang.srt.speculative.eagle_info import EagleDraftInput

        worker = self.worker
        draft_input = batch.spec_info
        seq_lens = batch.seq_lens
        new_seq_lens = seq_lens + 1
        batch.seq_lens_sum = None
        # no host copy where the backends keep none (triton): it waits for the GPU
        if batch.seq_lens_cpu is not None:
            batch.seq_lens_cpu = batch.seq_lens_cpu + 1
            batch.seq_lens_sum = int(batch.seq_lens_cpu.sum())
        req_to_token = worker.req_to_token_pool.req_to_token
        # the slot of position seq_lens: allocated by the spec-v2 prepare_for_decode
        batch.out_cache_loc = req_to_token[batch.req_pool_indices, seq_lens].long()
        batch.input_ids = draft_input.bonus_tokens
        batch.forward_mode = ForwardMode.DECODE
        batch.spec_info = None
        batch.seq_lens = batch.orig_seq_lens = new_seq_lens
        model_runner = worker.target_worker.model_runner
        with plain_target(model_runner, self.attn_backend, self.graph_runner):
            out = worker.target_worker.forward_batch_generation(
                batch, capture_hidden_mode=CaptureHiddenMode.FULL
            )
        if on_publish is not None:
            on_publish(new_seq_lens)
        out.next_draft_input = EagleDraftInput(
            bonus_tokens=out.next_token_ids,
            topk_p=draft_input.topk_p,
            topk_index=draft_input.topk_index,
            hidden_states=draft_input.hidden_states,
            dsa_topk_indices=draft_input.dsa_topk_indices,
            num_tokens_per_req=1,
            num_tokens_for_logprob_per_req=1,
        )
        ring_full = self._record(batch, out)
        # a full ring is caught up with the full catch-up, or in a plain measurement
        if ring_full and (self.full_catch_up or self.controller.measuring):
            self._catch_up(
                batch, out.next_draft_input, new_seq_lens, batch.seq_lens_cpu
            )
        out.speculative_num_draft_tokens = 1
        out.speculative_output_stride = 1
        out.new_seq_lens = new_seq_lens
        out.accept_lens = torch.ones_like(new_seq_lens, dtype=torch.int32)
        out.spec_disabled = True
        return out

    def _record(self, batch, out) -> bool:
        """Ring (token, target hidden) of the position decoded; True: a ring is full."""
        import torch

        hidden = out.logits_output.hidden_states
        rows, rows_cpu = batch.req_pool_indices, batch.req_pool_indices_cpu
        if self.hidden is None:  # the first plain step: the hidden size is known
            shape = (self.pending.shape[0], self.ring_size)
            self.tokens = torch.zeros(shape, dtype=torch.int64, device=hidden.device)
            self.hidden = hidden.new_zeros(shape + (hidden.shape[-1],))
        cols_cpu = self.pending[rows_cpu]
        cols = (cols_cpu % self.ring_size).to(hidden.device, non_blocking=True).long()
        self.tokens[rows, cols] = out.next_token_ids.long()
        self.hidden[rows, cols] = hidden
        self.pending[rows_cpu] = cols_cpu + 1
        # the first stale position: kv_committed_len lags seq_lens, a lower bound
        committed = torch.tensor([req.kv.kv_committed_len for req in batch.reqs])
        self.stale_from[rows_cpu] = self.stale_from[rows_cpu].clamp(max=committed)
        return int(cols_cpu.max()) + 1 >= self.ring_size

    def _catch_up(self, batch, draft_input, seq_lens, seq_lens_cpu):
        """The worker's draft extend over each row's last k pending positions, as if a
        verify at seq_lens - k had accepted them; it leaves the next draft's exact seed
        in draft_input. Older ones stay stale (lower acceptance, never a wrong token).
        """
        import torch

        from sglang.srt.layers.moe import utils as moe
        from sglang.srt.model_executor.forward_batch_info import ForwardMode
        from sglang.srt.speculative.spec_utils import draft_tp_context

        worker = self.worker
        num_draft_tokens = worker.speculative_num_draft_tokens
        rows, rows_cpu = batch.req_pool_indices, batch.req_pool_indices_cpu
        device = rows.device
        pending_cpu = self.pending[rows_cpu].clone()
        self.pending[rows_cpu] = 0
        k_cpu = pending_cpu.clamp(max=min(num_draft_tokens, self.ring_size))
        self.stale_from[rows_cpu[pending_cpu <= k_cpu]] = NONE_STALE
        k = k_cpu.to(device, non_blocking=True)
        start = seq_lens - k
        cols = torch.arange(num_draft_tokens, device=device)
        offset = (pending_cpu - k_cpu).to(device, non_blocking=True).long()
        ring = (cols + offset[:, None]) % self.ring_size  # _record's column
        snapshot = {f.name: getattr(batch, f.name) for f in dataclasses.fields(batch)}
        try:
            batch.seq_lens = start
            batch.forward_mode = ForwardMode.DECODE
            if seq_lens_cpu is not None:
                batch.seq_lens_cpu = seq_lens_cpu - k_cpu
                batch.seq_lens_sum = int(batch.seq_lens_cpu.sum())
            req_to_token = worker.req_to_token_pool.req_to_token
            locs = req_to_token[rows[:, None], start[:, None] + cols]
            batch.out_cache_loc = locs.reshape(-1).long()
            result = SimpleNamespace(
                logits_output=SimpleNamespace(
                    hidden_states=self.hidden[rows[:, None], ring].flatten(0, 1)
                ),
                next_token_ids=self.tokens[rows[:, None], ring].reshape(-1),
                accept_lens=k.clamp(min=1),
                next_draft_input=SimpleNamespace(),
                prepared_draft_extend_inputs=None,
                new_seq_lens=seq_lens,
            )
            draft_worker = worker.draft_worker
            with (
                draft_tp_context(draft_worker.parallel_layout),
                moe.speculative_moe_backend_context(),
                moe.speculative_moe_a2a_backend_context(),
            ):
                draft_worker._draft_extend_for_decode(batch, result)
        finally:
            for name, value in snapshot.items():
                setattr(batch, name, value)
        # rows with nothing caught up keep their seed
        caught_up = (k > 0)[:, None]
        new_seed = result.next_draft_input
        for name in ("topk_p", "topk_index", "hidden_states", "dsa_topk_indices"):
            old = getattr(draft_input, name)  # dsa: a DSA draft's seed
            if old is not None and getattr(new_seed, name, None) is not None:
                setattr(
                    draft_input,
                    name,
                    torch.where(caught_up, getattr(new_seed, name), old),
                )
