"""--speculative-dynamic-disable for the spec-v2 EAGLE worker: a decode step runs draft + verify or
one plain DECODE forward of the target (SGLang's DecodeCudaGraphRunner on a second attention backend)
whose result keeps a valid EagleDraftInput; the worker's draft extend catches the draft KV up later."""

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


def unsupported_reason(server_args) -> Optional[str]:
    """Why this server configuration cannot use the dynamic disable (None: it can)."""
    sa = server_args
    if (sa.speculative_algorithm or "").upper() not in ("EAGLE", "EAGLE3"):
        return f"speculative algorithm {sa.speculative_algorithm} (EAGLE and EAGLE3 only)"
    checks = [
        ((sa.speculative_eagle_topk or 1) != 1, "--speculative-eagle-topk > 1"),
        (sa.enable_multi_layer_eagle, "--enable-multi-layer-eagle"),
        (sa.speculative_adaptive, "--speculative-adaptive (this replaces its steps-0 tier)"),
        (sa.speculative_use_rejection_sampling, "--speculative-use-rejection-sampling"),
        (sa.enable_dp_attention, "DP attention"),
        (sa.pp_size > 1, "pipeline parallelism"),
        (sa.enable_two_batch_overlap, "two-batch overlap"),
        (sa.enable_pdmux, "PD multiplexing"),
        (sa.disaggregation_mode not in (None, "null"), "PD disaggregation"),
    ]
    return next((reason for bad, reason in checks if bad), None)


class SpecDisableController:
    """Speculate or not, each decode step. Per batch-size bucket (powers of two): each mode's step time (the overlap
    scheduler launches step k, then waits for k-1: the time between decisions is a step of GPU work, kept after three
    decisions of one mode and bucket; the mean of the last five but those STALL over their median, from the steps in
    and before which no request ended if both modes have three (an end moves time from the next step into its own;
    finish work costs either mode about alike); at most a larger bucket's) and the accept length. Speculate while
    accept * t_plain > t_spec (MARGIN band). A missing cost is measured for PROBE steps, except speculation's where a
    smaller bucket loses or while off with accept inside the band, and plain decoding's where other buckets bound a
    clear win; the other mode is measured again after INTERVAL steps (x CLEAR if 25 % off), doubling while the verdict
    holds. TP ranks share batch sizes and accept lengths; step times are the ranks' maximum (reduce_max, each SYNC)."""

    PROBE, INTERVAL, CLEAR, MAX_INTERVAL, SYNC, ALPHA, MARGIN, STALL = 8, 512, 4, 16384, 16, 0.3, 0.03, 0.010
    BUCKETS = [(s, 1 << i) for s in (True, False) for i in range(14)]

    def __init__(self, disable_above_bs=None, reduce_max=None, clock=time.perf_counter):
        self.bound, self.reduce_max, self.clock = disable_above_bs, reduce_max, clock
        # (speculate, bucket) -> the last five step times; the last five in and before which the batch kept its size
        self.local, self.clean = (collections.defaultdict(lambda: collections.deque(maxlen=5)) for _ in range(2))
        self.times, self.shared = {}, {}  # time_bucket's step time of each key; the ranks' maximum of them
        self.history = collections.deque(maxlen=3)  # (speculate, bucket, time, batch size) of the last decisions
        self.accept, self.enabled = None, True
        self.probe = (True, 0)  # (mode, steps left)
        self.since, self.interval, self.verdict, self.decisions = collections.Counter(), {}, {}, 0

    def time_bucket(self, b: int) -> None:
        """Both modes' step times at bucket b, like with like: from the steps without an end if each mode has three."""
        clean = all(len(self.clean[(s, b)]) >= 3 for s in (True, False) if len(self.local[(s, b)]) >= 3)
        for s in (True, False):
            if len(times := (self.clean if clean else self.local)[(s, b)]) >= 3:  # else not measured
                self.times[(s, b)] = statistics.fmean(t for t in times if t <= statistics.median(times) + self.STALL)

    def cost(self, speculate: bool, b: int) -> Optional[float]:
        own = self.shared.get if self.reduce_max is not None else self.times.get
        if own((speculate, b)):  # else None: not measured
            return min(c for c in (own((speculate, b << i)) for i in range(14)) if c)

    def decide(self, bs: int, needs_verify: bool = False) -> bool:
        now, h, b = self.clock(), self.history, 1 << max(0, bs - 1).bit_length()
        if len(h) == 3 and h[0][:2] == h[1][:2] == h[2][:2] == (h[2][0], b) and now - h[2][2] < 1.0:
            for samples in (self.local, self.clean) if h[1][3] == h[2][3] == bs else (self.local,):
                samples[(h[2][0], b)].append(now - h[2][2])
            self.time_bucket(b)
        self.decisions += 1
        if self.reduce_max is not None and self.decisions % self.SYNC == 0:
            maxima = self.reduce_max([self.times.get(k) or -1.0 for k in self.BUCKETS])
            self.shared = {k: c for k, c in zip(self.BUCKETS, maxima) if c > 0}
        speculate = (self.bound is None or bs <= self.bound) and self._measured(b) or needs_verify
        h.append((speculate, b, now, bs))
        return speculate

    def _measured(self, b: int) -> bool:
        mode, left = self.probe
        if left:
            self.probe = (mode, left - 1)
            return mode
        on, off, m = self.cost(True, b), self.cost(False, b), self.MARGIN
        smaller_loses = any(c < b and not wins for c, wins in self.verdict.items())
        if self.accept is None or (on is None and not smaller_loses):
            if not self.enabled and self.accept is not None and self.accept < 1 + m:
                return False
            return self._start_probe(True)
        if on is not None and off is None:  # bounds: a plain step costs no less than at a smaller bucket, and
            # speculation's lead (plain over speculative step time) is no less than at a larger one
            lead = [p / s for i in range(1, 14) if (p := self.cost(False, b << i)) and (s := self.cost(True, b << i))]
            smaller = [c for i in range(1, 14) if (c := self.cost(False, b >> i))]
            off = max(smaller + [on * r for r in lead], default=None)
            if off is None or self.accept * off / on < 1.25:
                return self._start_probe(False)
        gain = self.accept * off / on if on is not None else 0.0
        verdict = gain > (1 - m if self.enabled else 1 + m)
        if on is not None:
            if self.verdict.get(b, verdict) != verdict:
                self.interval[b] = self.INTERVAL  # a changed verdict: measure often again
            self.verdict[b] = verdict
        if verdict != self.enabled:
            self.enabled = verdict
            ms = "/".join("-" if c is None else f"{c * 1e3:.1f}" for c in (on, off))
            logger.info(f"[spec-dynamic-disable] speculation {'ON' if verdict else 'OFF'} at batch size <= {b}: "
                        f"accept length {self.accept:.2f}, step ms spec/plain {ms}")
        self.since[b] += 1  # a clear verdict (the loser 25 % off) waits CLEAR times longer to be measured again
        if self.since[b] >= self.interval.setdefault(b, self.INTERVAL * (1 if 0.8 < gain < 1.25 else self.CLEAR)):
            self.since[b], self.interval[b] = 0, min(2 * self.interval[b], self.MAX_INTERVAL)
            return self._start_probe(not verdict)
        return verdict

    def _start_probe(self, mode: bool) -> bool:
        self.probe = (mode, self.PROBE - 1)
        return mode

    def observe(self, num_correct_drafts_per_req) -> None:
        """The accept statistics of one verify step (disabled steps are not reported)."""
        if num_correct_drafts_per_req:
            accept = 1.0 + sum(num_correct_drafts_per_req) / len(num_correct_drafts_per_req)
            self.accept = accept if self.accept is None else self.accept + self.ALPHA * (accept - self.accept)


@contextlib.contextmanager
def plain_target(mr, attn_backend=None, graph_runner=None):
    """The target model runner mr as a non-speculative one, optionally on other backend/graphs."""
    from sglang.srt.speculative.spec_info import SpeculativeAlgorithm

    saved = (mr.spec_algorithm, mr.attn_backend, mr.decode_cuda_graph_runner)
    mr.spec_algorithm = SpeculativeAlgorithm.NONE
    if attn_backend is not None:
        mr.attn_backend, mr.decode_cuda_graph_runner = attn_backend, graph_runner
    try:
        yield
    finally:
        mr.spec_algorithm, mr.attn_backend, mr.decode_cuda_graph_runner = saved


class SpecDisableRuntime:
    def __init__(self, worker):
        from sglang.srt.environ import envs
        from sglang.srt.runtime_context import get_spec

        self.worker = worker
        reduce_max = self._reduce_max if worker.server_args.tp_size > 1 else None
        self.controller = SpecDisableController(get_spec().speculative_disable_above_bs, reduce_max)
        self.full_catch_up = envs.SGLANG_SPEC_DYNAMIC_DISABLE_FULL_CATCH_UP.get()
        self.window = worker.speculative_num_draft_tokens
        self.attn_backend = self.graph_runner = None
        self.pending = None  # host: pending draft positions per req_pool_idx
        self.tok_buf = self.hid_buf = None  # device: their tokens and target hidden states

    def init_cuda_graphs(self):
        """A second attention backend and DECODE graphs for the target (SGLang's own runner)."""
        import torch
        from sglang.srt.model_executor.cuda_graph_config import Backend, Phase, check_cuda_graph_backend
        from sglang.srt.model_executor.forward_batch_info import CaptureHiddenMode
        from sglang.srt.model_executor.runner import DecodeCudaGraphRunner
        from sglang.srt.utils.common import get_available_gpu_memory

        class _DecodeGraphRunnerWithHidden(DecodeCudaGraphRunner):
            # The draft catch-up reads the target's hidden states (EAGLE-3: the aux layers).
            return_hidden_states_mode = property(lambda self: CaptureHiddenMode.FULL, lambda self, value: None)

        w, mr = self.worker, self.worker.target_worker.model_runner
        self.pending = torch.zeros(w.req_to_token_pool.req_to_token.shape[0], dtype=torch.int32)
        before = get_available_gpu_memory(w.device, w.gpu_id)
        saved_workspace = mr.init_new_workspace
        try:
            with plain_target(mr):
                self.attn_backend = mr._get_attention_backend(init_new_workspace=True)
                if not check_cuda_graph_backend(Phase.DECODE, Backend.DISABLED):
                    self.graph_runner = _DecodeGraphRunnerWithHidden(mr, attn_backend=self.attn_backend)
        finally:
            mr.init_new_workspace = saved_workspace
        used = before - get_available_gpu_memory(w.device, w.gpu_id)
        usage = w._additional_graph_memory_usage
        usage["decode"] = usage.get("decode", 0.0) + used
        logger.info(f"[spec-dynamic-disable] target DECODE graphs: mem usage={used:.2f} GB")

    def speculate(self, batch) -> bool:
        needs_verify = batch.forward_mode.is_idle() or batch.return_logprob or batch.has_grammar
        return self.controller.decide(batch.batch_size(), needs_verify or batch.return_hidden_states)

    @staticmethod
    def _reduce_max(values):
        import torch
        from sglang.srt.distributed import get_tp_group

        t = torch.tensor(values, dtype=torch.float64)
        torch.distributed.all_reduce(t, torch.distributed.ReduceOp.MAX, get_tp_group().cpu_group)
        return t.tolist()

    def on_prefill(self, batch):
        self.controller.history.clear()  # the next decode steps' time includes the prefill
        # The prefill's draft extend writes the draft KV: nothing pending for these rows.
        if self.pending is not None and batch.req_pool_indices_cpu is not None:
            self.pending[batch.req_pool_indices_cpu] = 0

    def before_speculative_step(self, batch):
        if batch.req_pool_indices_cpu is not None:
            if bool((self.pending[batch.req_pool_indices_cpu] > 0).any()):
                self._catch_up(batch, batch.spec_info, batch.seq_lens, batch.seq_lens_cpu)

    def forward_disabled(self, batch, on_publish=None):
        """One plain target decode token per request; the result keeps the spec-v2 shape."""
        import torch
        from sglang.srt.managers.utils import GenerationBatchResult
        from sglang.srt.model_executor.forward_batch_info import CaptureHiddenMode, ForwardMode
        from sglang.srt.speculative.eagle_info import EagleDraftInput

        w = self.worker
        draft_input = batch.spec_info
        seq_lens, seq_lens_cpu = batch.seq_lens, batch.seq_lens_cpu
        bs = seq_lens.shape[0]
        req_to_token = w.req_to_token_pool.req_to_token
        # The KV slot of position seq_lens was allocated by the spec-v2 prepare_for_decode.
        batch.out_cache_loc = req_to_token[batch.req_pool_indices, seq_lens].to(torch.int64)
        batch.input_ids = draft_input.bonus_tokens
        batch.forward_mode = ForwardMode.DECODE
        batch.spec_info = None
        new_seq_lens = seq_lens + 1
        batch.seq_lens = batch.orig_seq_lens = new_seq_lens
        batch.seq_lens_cpu = None if seq_lens_cpu is None else seq_lens_cpu + 1
        batch.seq_lens_sum = None if seq_lens_cpu is None else int(batch.seq_lens_cpu.sum())
        mr = w.target_worker.model_runner
        with plain_target(mr, self.attn_backend, self.graph_runner):
            out = w.target_worker.forward_batch_generation(batch, capture_hidden_mode=CaptureHiddenMode.FULL)
        if on_publish is not None:
            on_publish(new_seq_lens)
        next_draft_input = EagleDraftInput(
            bonus_tokens=out.next_token_ids,
            topk_p=draft_input.topk_p,
            topk_index=draft_input.topk_index,
            hidden_states=draft_input.hidden_states,
            dsa_topk_indices=draft_input.dsa_topk_indices,
            num_tokens_per_req=1,
            num_tokens_for_logprob_per_req=1,
        )
        if self._record(batch, out) and (self.full_catch_up or self.controller.probe[1]):  # a probe: resumes soon
            self._catch_up(batch, next_draft_input, new_seq_lens, None if seq_lens_cpu is None else seq_lens_cpu + 1)
        return GenerationBatchResult(
            logits_output=out.logits_output,
            next_token_ids=out.next_token_ids,
            can_run_cuda_graph=out.can_run_cuda_graph,
            speculative_num_draft_tokens=1,
            speculative_output_stride=1,
            next_draft_input=next_draft_input,
            accept_lens=torch.ones(bs, dtype=torch.int32, device=seq_lens.device),
            new_seq_lens=new_seq_lens,
            spec_disabled=True,
        )

    def _record(self, batch, out) -> bool:
        """Keep (token, target hidden) of the position just decoded in a ring of window; True when full."""
        import torch

        hidden = out.logits_output.hidden_states
        if self.hid_buf is None:
            rows, device = self.pending.shape[0], hidden.device
            self.tok_buf = torch.zeros((rows, self.window), dtype=torch.int64, device=device)
            self.hid_buf = torch.zeros((rows, self.window, hidden.shape[-1]), dtype=hidden.dtype, device=device)
        rpi_cpu = batch.req_pool_indices_cpu
        cols_cpu = self.pending[rpi_cpu]
        cols = (cols_cpu % self.window).to(hidden.device, non_blocking=True).long()
        self.tok_buf[batch.req_pool_indices, cols] = out.next_token_ids.to(torch.int64)
        self.hid_buf[batch.req_pool_indices, cols] = hidden
        self.pending[rpi_cpu] = cols_cpu + 1
        return int(cols_cpu.max()) + 1 >= self.window

    def _catch_up(self, batch, draft_input, seq_lens, seq_lens_cpu):
        """Write the draft KV of each request's last k <= window pending positions with the worker's own
        draft extend, as if a verify at seq_lens - k had accepted those k tokens; leaves the exact
        topk_p / topk_index / hidden_states for the next draft in draft_input. Older pending positions
        keep a stale draft KV (lower acceptance for that request, never a wrong token)."""
        import torch
        from sglang.srt.layers.moe.utils import speculative_moe_a2a_backend_context, speculative_moe_backend_context
        from sglang.srt.model_executor.forward_batch_info import ForwardMode
        from sglang.srt.speculative.spec_utils import draft_tp_context

        w, n = self.worker, self.window
        rpi, rpi_cpu = batch.req_pool_indices, batch.req_pool_indices_cpu
        pending_cpu = self.pending[rpi_cpu].clone()
        self.pending[rpi_cpu] = 0
        k_cpu = pending_cpu.clamp(max=n)
        k = k_cpu.to(seq_lens.device, non_blocking=True)
        start = seq_lens - k
        positions = start[:, None] + torch.arange(n, device=seq_lens.device)
        offset = (pending_cpu - k_cpu).to(seq_lens.device, non_blocking=True).long()
        ring = (torch.arange(n, device=seq_lens.device) + offset[:, None]) % n  # _record's column of each position
        snapshot = {f.name: getattr(batch, f.name) for f in dataclasses.fields(batch)}
        try:
            batch.seq_lens, batch.forward_mode = start, ForwardMode.DECODE
            if seq_lens_cpu is not None:
                batch.seq_lens_cpu = seq_lens_cpu - k_cpu
                batch.seq_lens_sum = int(batch.seq_lens_cpu.sum())
            req_to_token = w.req_to_token_pool.req_to_token
            batch.out_cache_loc = req_to_token[rpi[:, None], positions].reshape(-1).long()
            result = SimpleNamespace(
                logits_output=SimpleNamespace(hidden_states=self.hid_buf[rpi[:, None], ring].flatten(0, 1)),
                next_token_ids=self.tok_buf[rpi[:, None], ring].reshape(-1),
                accept_lens=k.clamp(min=1),
                prepared_draft_extend_inputs=None,
                new_seq_lens=seq_lens,
                next_draft_input=SimpleNamespace(),
            )
            draft_tp = draft_tp_context(w.draft_worker.parallel_layout)
            with draft_tp, speculative_moe_backend_context(), speculative_moe_a2a_backend_context():
                w.draft_worker._draft_extend_for_decode(batch, result)
        finally:
            for name, value in snapshot.items():
                setattr(batch, name, value)
        # Rows with nothing pending keep what they had.
        new, has = result.next_draft_input, (k > 0)[:, None]
        draft_input.topk_p = torch.where(has, new.topk_p, draft_input.topk_p)
        draft_input.topk_index = torch.where(has, new.topk_index, draft_input.topk_index)
        for name in ("hidden_states", "dsa_topk_indices"):  # dsa: a DSA draft's seed
            old, fresh = getattr(draft_input, name, None), getattr(new, name, None)
            if old is not None and fresh is not None:
                setattr(draft_input, name, torch.where(has, fresh, old))
