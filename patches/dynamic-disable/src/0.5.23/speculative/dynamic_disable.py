"""Dynamic speculation disable for the spec-v2 EAGLE worker (--speculative-dynamic-disable).

While the running batch is large, a decode step runs one plain DECODE forward of the target on
SGLang's own DecodeCudaGraphRunner (a second set of decode graphs on a second attention backend,
captured at start) instead of draft + verify. The step still returns a GenerationBatchResult with a
valid EagleDraftInput, so the scheduler and the next speculative step keep working. The draft KV
of the positions decoded that way is written later by the worker's own draft extend
(_draft_extend_for_decode), num_draft_tokens positions at a time and before speculation resumes.
"""

from __future__ import annotations

import contextlib
import dataclasses
import logging
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
        (sa.speculative_disable_above_bs < 0, "--speculative-disable-above-bs < 0"),
        (
            sa.speculative_enable_below_bs > sa.speculative_disable_above_bs + 1,
            "--speculative-enable-below-bs > --speculative-disable-above-bs + 1",
        ),
    ]
    return next((reason for bad, reason in checks if bad), None)


class SpecDisableController:
    """Speculate or not, decided once per decode step from the running batch size.

    Every TP rank runs the same scheduler over the same batch, so every rank decides alike.
    Hysteresis: off when the batch size exceeds disable_above_bs, on again only when it falls
    below enable_below_bs.
    """

    def __init__(self, disable_above_bs: int, enable_below_bs: int):
        self.disable_above_bs = disable_above_bs
        self.enable_below_bs = enable_below_bs
        self.enabled = True

    def decide(self, batch_size: int, needs_verify: bool = False) -> bool:
        if self.enabled and batch_size > self.disable_above_bs:
            self.enabled = False
            logger.info(f"[spec-dynamic-disable] speculation OFF at batch size {batch_size}")
        elif not self.enabled and batch_size < self.enable_below_bs:
            self.enabled = True
            logger.info(f"[spec-dynamic-disable] speculation ON at batch size {batch_size}")
        # Logprobs, grammars and returned hidden states keep the verify-shaped path.
        return self.enabled or needs_verify


@contextlib.contextmanager
def plain_target(model_runner, attn_backend=None, graph_runner=None):
    """The target model runner as a non-speculative one, optionally on other backend/graphs."""
    from sglang.srt.speculative.spec_info import SpeculativeAlgorithm

    mr = model_runner
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

        sa = get_spec()
        self.worker = worker
        self.controller = SpecDisableController(
            sa.speculative_disable_above_bs, sa.speculative_enable_below_bs
        )
        self.catch_up = envs.SGLANG_SPEC_DYNAMIC_DISABLE_CATCH_UP.get()
        self.window = worker.speculative_num_draft_tokens
        self.attn_backend = self.graph_runner = None
        self.pending = None  # host: pending draft positions per req_pool_idx
        self.tok_buf = self.hid_buf = None  # device: their tokens and target hidden states

    def init_cuda_graphs(self):
        """A second attention backend and DECODE graphs for the target (SGLang's own runner)."""
        import torch

        from sglang.srt.model_executor.cuda_graph_config import (
            Backend,
            Phase,
            check_cuda_graph_backend,
        )
        from sglang.srt.model_executor.forward_batch_info import CaptureHiddenMode
        from sglang.srt.model_executor.runner import DecodeCudaGraphRunner
        from sglang.srt.utils.common import get_available_gpu_memory

        class _DecodeGraphRunnerWithHidden(DecodeCudaGraphRunner):
            # The draft catch-up reads the target's hidden states (EAGLE-3: the aux layers).
            return_hidden_states_mode = property(
                lambda self: CaptureHiddenMode.FULL, lambda self, value: None
            )

        w = self.worker
        mr = w.target_worker.model_runner
        self.pending = torch.zeros(w.req_to_token_pool.req_to_token.shape[0], dtype=torch.int32)
        before = get_available_gpu_memory(w.device, w.gpu_id)
        saved_workspace = mr.init_new_workspace
        try:
            with plain_target(mr):
                self.attn_backend = mr._get_attention_backend(init_new_workspace=True)
                if not check_cuda_graph_backend(Phase.DECODE, Backend.DISABLED):
                    self.graph_runner = _DecodeGraphRunnerWithHidden(
                        mr, attn_backend=self.attn_backend
                    )
        finally:
            mr.init_new_workspace = saved_workspace
        used = before - get_available_gpu_memory(w.device, w.gpu_id)
        usage = w._additional_graph_memory_usage
        usage["decode"] = usage.get("decode", 0.0) + used
        logger.info(f"[spec-dynamic-disable] target DECODE graphs: mem usage={used:.2f} GB")

    def speculate(self, batch) -> bool:
        needs_verify = (
            batch.forward_mode.is_idle()
            or batch.return_logprob
            or batch.has_grammar
            or batch.return_hidden_states
        )
        return self.controller.decide(batch.batch_size(), needs_verify)

    def on_prefill(self, batch):
        # The prefill's draft extend writes the draft KV: nothing pending for these rows.
        if self.pending is not None and batch.req_pool_indices_cpu is not None:
            self.pending[batch.req_pool_indices_cpu] = 0

    def before_speculative_step(self, batch):
        if self.catch_up and batch.req_pool_indices_cpu is not None:
            if bool((self.pending[batch.req_pool_indices_cpu] > 0).any()):
                self._catch_up(batch, batch.spec_info, batch.seq_lens, batch.seq_lens_cpu)

    def forward_disabled(self, batch, on_publish=None):
        """One plain target decode token per request; the result keeps the spec-v2 shape."""
        import torch

        from sglang.srt.managers.utils import GenerationBatchResult
        from sglang.srt.model_executor.forward_batch_info import (
            CaptureHiddenMode,
            ForwardMode,
        )
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
        if seq_lens_cpu is not None:
            batch.seq_lens_cpu = seq_lens_cpu + 1
            batch.seq_lens_sum = int(batch.seq_lens_cpu.sum())
        else:
            batch.seq_lens_sum = None
        mr = w.target_worker.model_runner
        with plain_target(mr, self.attn_backend, self.graph_runner):
            out = w.target_worker.forward_batch_generation(
                batch, capture_hidden_mode=CaptureHiddenMode.FULL
            )
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
        if self.catch_up and self._record(batch, out):
            self._catch_up(
                batch,
                next_draft_input,
                new_seq_lens,
                None if seq_lens_cpu is None else seq_lens_cpu + 1,
            )
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
        """Keep (token, target hidden) of the position just decoded; True when a window is full."""
        import torch

        hidden = out.logits_output.hidden_states
        if self.hid_buf is None:
            rows, device = self.pending.shape[0], hidden.device
            self.tok_buf = torch.zeros((rows, self.window), dtype=torch.int64, device=device)
            self.hid_buf = torch.zeros(
                (rows, self.window, hidden.shape[-1]), dtype=hidden.dtype, device=device
            )
        rpi_cpu = batch.req_pool_indices_cpu
        cols_cpu = self.pending[rpi_cpu]
        cols = cols_cpu.to(hidden.device, non_blocking=True).long()
        self.tok_buf[batch.req_pool_indices, cols] = out.next_token_ids.to(torch.int64)
        self.hid_buf[batch.req_pool_indices, cols] = hidden
        self.pending[rpi_cpu] = cols_cpu + 1
        return int(cols_cpu.max()) + 1 >= self.window

    def _catch_up(self, batch, draft_input, seq_lens, seq_lens_cpu):
        """Write the draft KV of each request's pending positions with the worker's own draft
        extend, as if a verify at seq_lens - k had accepted those k tokens; leaves the exact
        topk_p / topk_index / hidden_states for the next draft in draft_input."""
        import torch

        from sglang.srt.layers.moe.utils import (
            speculative_moe_a2a_backend_context,
            speculative_moe_backend_context,
        )
        from sglang.srt.model_executor.forward_batch_info import ForwardMode
        from sglang.srt.speculative.spec_utils import draft_tp_context

        w, n = self.worker, self.window
        rpi, rpi_cpu = batch.req_pool_indices, batch.req_pool_indices_cpu
        k_cpu = self.pending[rpi_cpu].clone()
        self.pending[rpi_cpu] = 0
        k = k_cpu.to(seq_lens.device, non_blocking=True)
        start = seq_lens - k
        positions = start[:, None] + torch.arange(n, device=seq_lens.device)
        snapshot = {f.name: getattr(batch, f.name) for f in dataclasses.fields(batch)}
        try:
            batch.seq_lens, batch.forward_mode = start, ForwardMode.DECODE
            if seq_lens_cpu is not None:
                batch.seq_lens_cpu = seq_lens_cpu - k_cpu
                batch.seq_lens_sum = int(batch.seq_lens_cpu.sum())
            req_to_token = w.req_to_token_pool.req_to_token
            batch.out_cache_loc = req_to_token[rpi[:, None], positions].reshape(-1).long()
            result = SimpleNamespace(
                logits_output=SimpleNamespace(
                    hidden_states=self.hid_buf[rpi].reshape(-1, self.hid_buf.shape[-1])
                ),
                next_token_ids=self.tok_buf[rpi].reshape(-1),
                accept_lens=k.clamp(min=1),
                prepared_draft_extend_inputs=None,
                new_seq_lens=seq_lens,
                next_draft_input=SimpleNamespace(),
            )
            dw = w.draft_worker
            with (
                draft_tp_context(dw.parallel_layout),
                speculative_moe_backend_context(),
                speculative_moe_a2a_backend_context(),
            ):
                dw._draft_extend_for_decode(batch, result)
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
