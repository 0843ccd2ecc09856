"""--speculative-dynamic-disable for the spec-v2 EAGLE worker: a decode step runs
draft + verify or one plain DECODE forward of the target (SGLang's own graphs, on
a second attention backend) whose result keeps a valid EagleDraftInput. The draft
extend writes the draft KV of plain positions later; a finished request is cached
only up to the first position it has not reached.

The rule, per batch-size bucket (powers of two): windows of WINDOW steps in one
mode. A mode's step time is the median of its last WINDOW (host time between
decisions once three of one mode and bucket have passed; from steps in which the
batch kept its size once both modes have three; no gap over IDLE s; at most a
larger bucket's); the accept length that of the last WINDOW verify steps (the core
sees batches, not request kinds: each load has its own mix). Rank 0 plans each
window: a missing measurement first; else speculate while accept * t_plain > t_spec
(MARGIN band), running the losing mode for a window after (loss - 1) / BUDGET
windows, loss = how many times slower it was: measuring costs about BUDGET, and as
accept >= 1, t_spec / t_plain bounds loss and so the wait. Under TP: rank 0's plan.
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

WINDOW, BUDGET, MARGIN, IDLE = 8, 0.01, 0.03, 1.0
NONE_STALE = 1 << 62  # stale_from of a row whose draft KV is complete


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
    return next((reason for bad, reason in checks if bad), None)


class Bucket:
    def __init__(self):
        # step times by (mode, clean); (accepted drafts, requests) per verify step
        self.times = collections.defaultdict(lambda: collections.deque(maxlen=WINDOW))
        self.accepted = collections.deque(maxlen=WINDOW)
        self.verdict = self.mode = True  # and the window's mode: a measurement?
        self.measuring, self.left, self.since = False, 0, 0  # since: windows since one

    def time(self, mode: bool) -> Optional[float]:
        clean = all(len(self.times[(m, True)]) >= 3 for m in (True, False))
        own = self.times[(mode, clean)]
        return statistics.median(own) if len(own) >= 3 else None

    def accept(self) -> Optional[float]:
        requests = sum(n for _, n in self.accepted)
        return 1 + sum(a for a, _ in self.accepted) / requests if requests else None


class SpecDisableController:
    """Speculate or not, each decode step (the rule: the module's docstring)."""

    def __init__(self, disable_above_bs=None, share=None, clock=time.perf_counter):
        self.bound, self.share, self.clock = disable_above_bs, share, clock
        self.buckets = collections.defaultdict(Bucket)
        self.history = collections.deque(maxlen=3)  # (speculate, bucket, time, bs)

    def cost(self, speculate: bool, b: int) -> Optional[float]:
        times = [s.time(speculate) for c, s in self.buckets.items() if c >= b]
        return min((t for t in times if t is not None), default=None)

    @property
    def measuring(self) -> bool:
        return bool(self.history) and self.buckets[self.history[-1][1]].measuring

    def decide(self, bs: int, needs_verify: bool = False) -> bool:
        now, h, b = self.clock(), self.history, 1 << max(0, bs - 1).bit_length()
        if len(h) == 3 and h[0][:2] == h[1][:2] == h[2][:2] == (h[2][0], b):
            if now - h[2][2] < IDLE:
                for clean in {False, h[1][3] == h[2][3] == bs}:  # no request ended
                    self.buckets[b].times[(h[2][0], clean)].append(now - h[2][2])
        if needs_verify or (self.bound is not None and bs > self.bound):
            speculate = needs_verify
        else:
            s = self.buckets[b]
            if s.left == 0:  # a new window: (mode, a measurement?), rank 0's under TP
                plan = self._plan(b, s)
                s.mode, s.measuring = plan if self.share is None else self.share(plan)
                s.left = WINDOW
            s.left -= 1
            speculate = s.mode
        h.append((speculate, b, now, bs))
        return speculate

    def observe(self, num_correct_drafts_per_req) -> None:
        if n := len(num_correct_drafts_per_req):
            b = 1 << max(0, n - 1).bit_length()
            self.buckets[b].accepted.append((sum(num_correct_drafts_per_req), n))

    def _plan(self, b: int, s: Bucket) -> tuple:
        accept = s.accept()
        if s.time(True) is None or accept is None or s.time(False) is None:
            return s.time(True) is None or accept is None, True  # speculation first
        on, off = self.cost(True, b), self.cost(False, b)
        gain = accept * off / on
        verdict = gain > (1 - MARGIN if s.verdict else 1 + MARGIN)
        if verdict != s.verdict:
            ms = f"{on * 1e3:.1f}/{off * 1e3:.1f}"
            logger.info(
                f"[spec-dynamic-disable] speculation {'ON' if verdict else 'OFF'} at batch size <= {b}: accept length {accept:.2f}, step ms spec/plain {ms}"
            )
            s.verdict = verdict
        s.since = 0 if s.measuring else s.since + 1
        measure = s.since >= (max(gain, 1 / gain) - 1) / BUDGET  # the loser's turn
        return verdict != measure, measure


@contextlib.contextmanager
def plain_target(mr, attn_backend, graph_runner):
    """The target model runner as a non-speculative one on this backend and graphs."""
    from sglang.srt.speculative.spec_info import SpeculativeAlgorithm

    saved = (mr.spec_algorithm, mr.attn_backend, mr.decode_cuda_graph_runner)
    mr.spec_algorithm = SpeculativeAlgorithm.NONE
    mr.attn_backend, mr.decode_cuda_graph_runner = attn_backend, graph_runner
    try:
        yield
    finally:
        mr.spec_algorithm, mr.attn_backend, mr.decode_cuda_graph_runner = saved


class SpecDisableRuntime:
    """The core in EAGLEWorkerV2 (with --speculative-adaptive: its steps-0 tier)."""

    def __init__(self, worker):
        from sglang.srt.configs.hybrid_arch import mambaish_config
        from sglang.srt.environ import envs
        from sglang.srt.runtime_context import get_spec

        sa, mr = worker.server_args, worker.target_worker.model_runner
        allow = envs.SGLANG_SPEC_DYNAMIC_DISABLE_ALLOW_UNVERIFIED.get()
        if mambaish_config(mr.model_config) is not None and not allow:
            raise ValueError("--speculative-dynamic-disable: hybrid linear attention")
        self.worker, share = worker, self._share if sa.tp_size > 1 else None
        bound = get_spec().speculative_disable_above_bs
        self.controller = SpecDisableController(bound, share)
        self.full_catch_up = envs.SGLANG_SPEC_DYNAMIC_DISABLE_FULL_CATCH_UP.get()
        self.window = worker.speculative_num_draft_tokens
        self.attn_backend = self.graph_runner = self.tok_buf = self.hid_buf = None
        self.pending = self.stale_from = None

    def allocate(self, rows: int) -> None:
        """Per pool row: positions since the last catch-up, the first stale one."""
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

        w, mr = self.worker, self.worker.target_worker.model_runner
        self.allocate(w.req_to_token_pool.req_to_token.shape[0])
        graphs = not cg.check_cuda_graph_backend(cg.Phase.DECODE, cg.Backend.DISABLED)
        before = get_available_gpu_memory(w.device, w.gpu_id)
        saved_workspace = mr.init_new_workspace
        try:
            with plain_target(mr, mr.attn_backend, mr.decode_cuda_graph_runner):
                self.attn_backend = mr._get_attention_backend(init_new_workspace=True)
                if graphs:
                    runner = _DecodeGraphRunnerWithHidden
                    self.graph_runner = runner(mr, attn_backend=self.attn_backend)
        finally:
            mr.init_new_workspace = saved_workspace
        used = before - get_available_gpu_memory(w.device, w.gpu_id)
        usage = w._additional_graph_memory_usage
        usage["decode"] = usage.get("decode", 0.0) + used

    def speculate(self, batch) -> bool:
        needs_verify = batch.forward_mode.is_idle() or batch.return_logprob
        needs_verify = needs_verify or batch.has_grammar or batch.return_hidden_states
        if self.worker.adaptive_controller is not None:  # it chose the tier
            return self.worker.speculative_num_steps > 0 or needs_verify
        return self.controller.decide(batch.batch_size(), needs_verify)

    @staticmethod
    def _share(plan: tuple) -> tuple:
        # rank 0's plan, on every rank of the TP group
        import torch

        from sglang.srt.distributed import get_tp_group

        group, shared = get_tp_group(), torch.tensor(plan, dtype=torch.int32)
        torch.distributed.broadcast(shared, group.ranks[0], group.cpu_group)
        return tuple(bool(v) for v in shared.tolist())

    def on_prefill(self, batch):
        self.controller.history.clear()  # the next steps' time includes the prefill
        # The prefill's draft extend writes the draft KV: nothing pending for these rows.
        if batch.req_pool_indices_cpu is not None:
            self.pending[batch.req_pool_indices_cpu] = 0
            self.stale_from[batch.req_pool_indices_cpu] = NONE_STALE

    def before_release(self, req) -> None:
        """Cache a finished request up to its first stale draft position."""
        if (kv := req.kv).req_pool_idx is not None:
            stale = int(self.stale_from[kv.req_pool_idx])
            kv.kv_committed_len = min(kv.kv_committed_len, stale)

    def before_speculative_step(self, batch):
        rows = batch.req_pool_indices_cpu
        if rows is not None and (self.pending[rows] > 0).any():
            self._catch_up(batch, batch.spec_info, batch.seq_lens, batch.seq_lens_cpu)

    def forward_disabled(self, batch, on_publish=None):
        """A plain decode step: the target's own result, in the spec-v2 shape."""
        import torch

        from sglang.srt.model_executor import forward_batch_info as fbi
        from sglang.srt.speculative.eagle_info import EagleDraftInput

        w, draft_input = self.worker, batch.spec_info
        seq_lens, seq_lens_cpu = batch.seq_lens, batch.seq_lens_cpu
        if seq_lens_cpu is None:  # a backend without the host copy (not verified)
            seq_lens_cpu = seq_lens.cpu()
        new_seq_lens, new_seq_lens_cpu = seq_lens + 1, seq_lens_cpu + 1
        req_to_token = w.req_to_token_pool.req_to_token
        # The KV slot of position seq_lens was allocated by the spec-v2 prepare_for_decode.
        batch.out_cache_loc = req_to_token[batch.req_pool_indices, seq_lens].long()
        batch.input_ids = draft_input.bonus_tokens
        batch.forward_mode = fbi.ForwardMode.DECODE
        batch.spec_info, batch.seq_lens = None, new_seq_lens
        batch.orig_seq_lens, batch.seq_lens_cpu = new_seq_lens, new_seq_lens_cpu
        batch.seq_lens_sum = int(new_seq_lens_cpu.sum())
        mr = w.target_worker.model_runner
        with plain_target(mr, self.attn_backend, self.graph_runner):
            out = w.target_worker.forward_batch_generation(
                batch, capture_hidden_mode=fbi.CaptureHiddenMode.FULL
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
        # a full ring: caught up with the full catch-up, or in a plain measurement
        if self._record(batch, out, seq_lens_cpu) and (
            self.full_catch_up or self.controller.measuring
        ):
            self._catch_up(batch, out.next_draft_input, new_seq_lens, new_seq_lens_cpu)
        out.speculative_num_draft_tokens, out.new_seq_lens = 1, new_seq_lens
        out.speculative_output_stride = 1
        out.accept_lens = torch.ones_like(seq_lens, dtype=torch.int32)
        out.spec_disabled = True
        return out

    def _record(self, batch, out, seq_lens_cpu) -> bool:
        """Ring (token, target hidden) of the position decoded; True: a ring is full."""
        import torch

        hidden, rpi_cpu = out.logits_output.hidden_states, batch.req_pool_indices_cpu
        if self.hid_buf is None:
            rows, n, device = self.pending.shape[0], self.window, hidden.device
            self.tok_buf = torch.zeros((rows, n), dtype=torch.int64, device=device)
            self.hid_buf = hidden.new_zeros((rows, n, hidden.shape[-1]))
        cols_cpu = self.pending[rpi_cpu]
        cols = (cols_cpu % self.window).to(hidden.device, non_blocking=True).long()
        self.tok_buf[batch.req_pool_indices, cols] = out.next_token_ids.long()
        self.hid_buf[batch.req_pool_indices, cols] = hidden
        self.pending[rpi_cpu] = cols_cpu + 1
        self.stale_from[rpi_cpu] = self.stale_from[rpi_cpu].clamp(max=seq_lens_cpu)
        return int(cols_cpu.max()) + 1 >= self.window

    def _catch_up(self, batch, draft_input, seq_lens, seq_lens_cpu):
        """The worker's draft extend over each row's last k pending positions, as if a
        verify at seq_lens - k had accepted them; it leaves the next draft's exact seed
        in draft_input. Older ones stay stale (lower acceptance, never a wrong token).
        """
        import torch

        from sglang.srt.layers.moe import utils as moe
        from sglang.srt.model_executor.forward_batch_info import ForwardMode
        from sglang.srt.speculative.spec_utils import draft_tp_context

        w, n = self.worker, self.worker.speculative_num_draft_tokens
        rpi, rpi_cpu = batch.req_pool_indices, batch.req_pool_indices_cpu
        device = rpi.device
        pending_cpu = self.pending[rpi_cpu].clone()
        self.pending[rpi_cpu] = 0
        k_cpu = pending_cpu.clamp(max=min(n, self.window))
        self.stale_from[rpi_cpu[pending_cpu <= k_cpu]] = NONE_STALE
        k = k_cpu.to(device, non_blocking=True)
        start, cols = seq_lens - k, torch.arange(n, device=device)
        offset = (pending_cpu - k_cpu).to(device, non_blocking=True).long()
        # _record's column of each position
        ring = (cols + offset[:, None]) % self.window
        snapshot = {f.name: getattr(batch, f.name) for f in dataclasses.fields(batch)}
        try:
            batch.seq_lens, batch.forward_mode = start, ForwardMode.DECODE
            if seq_lens_cpu is not None:
                batch.seq_lens_cpu = seq_lens_cpu - k_cpu
                batch.seq_lens_sum = int(batch.seq_lens_cpu.sum())
            locs = w.req_to_token_pool.req_to_token[rpi[:, None], start[:, None] + cols]
            batch.out_cache_loc = locs.reshape(-1).long()
            hidden = self.hid_buf[rpi[:, None], ring].flatten(0, 1)
            result = SimpleNamespace(
                logits_output=SimpleNamespace(hidden_states=hidden),
                next_token_ids=self.tok_buf[rpi[:, None], ring].reshape(-1),
                accept_lens=k.clamp(min=1),
                next_draft_input=SimpleNamespace(),
                prepared_draft_extend_inputs=None,
                new_seq_lens=seq_lens,
            )
            dw = w.draft_worker
            with (
                draft_tp_context(dw.parallel_layout),
                moe.speculative_moe_backend_context(),
                moe.speculative_moe_a2a_backend_context(),
            ):
                dw._draft_extend_for_decode(batch, result)
        finally:
            for name, value in snapshot.items():
                setattr(batch, name, value)
        new, has = result.next_draft_input, (k > 0)[:, None]  # others keep theirs
        for name in ("topk_p", "topk_index", "hidden_states", "dsa_topk_indices"):
            old = getattr(draft_input, name)  # dsa: a DSA draft's seed
            if old is not None and getattr(new, name, None) is not None:
                setattr(draft_input, name, torch.where(has, getattr(new, name), old))
