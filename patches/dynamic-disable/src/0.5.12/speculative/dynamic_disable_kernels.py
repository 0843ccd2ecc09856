"""Fused kernels for the dynamic speculation-disable series (``dynamic_disable.py``).

Added by the spectrace patch series ``dynamic-disable``.

A disabled step's cost beyond a plain decode step was, on the H200 at C=1, mostly small
kernels queued between two target CUDA graphs, each about 3 us of the forward stream
(spectrace ``docs/patch-design.md`` section 5): the future map's store and gather
of five draft-input fields (5 + 5 kernels where the non-speculative map has 1 + 1), the
step's prologue (``seq_lens + 1``, the KV-slot gather and two dtype conversions) and the
catch-up record (two index_puts; a prefill's last positions are recorded the same way).
Each function here does one of those in one launch, with the same values as the torch code
it replaces (pure copies and conversions), and falls back to that torch code for anything it
was not written for (another device, non-contiguous last dimensions, a missing field).
"""

from __future__ import annotations

import os
import types
from typing import List, Optional, Sequence

import torch
import triton
import triton.language as tl

# hidden-state columns per program: EAGLE-3's draft input is 3 x hidden, 12,288 for 8B
_BLOCK_COLS = 1024
# requests per program in the one-element-per-request kernels
_BLOCK_ROWS = 128
# Triton's interpreter runs the kernels on host tensors (how spectrace tests them without a GPU)
_INTERPRET = os.environ.get("TRITON_INTERPRET") == "1"


def _on_kernel_device(t: torch.Tensor) -> bool:
    return t.is_cuda or _INTERPRET


def _rows_ok(*tensors: Optional[torch.Tensor]) -> bool:
    """Every tensor on CUDA, 1-D or 2-D, a 2-D one with unit stride along its rows (the
    kernels take one stride per tensor, between rows)."""
    for t in tensors:
        if t is None:
            continue
        if not _on_kernel_device(t) or t.dim() not in (1, 2):
            return False
        if t.dim() == 2 and t.stride(1) != 1 and t.shape[1] > 1:
            return False
    return True


# Integer arguments that change from step to step are not specialised (Triton compiles a variant
# per value class, ==1 or a multiple of 16, otherwise): one compilation per kernel, not one more
# whenever a step first meets another class, inside a timed decode step.
@triton.jit(do_not_specialize=["src_start", "dst_start"])
def _copy_rows_kernel(
    src_rows,  # one source row per program row, or unused when SRC_IS_RANGE
    dst_rows,  # one destination row per program row, or unused when DST_IS_RANGE
    src_start,
    dst_start,
    topk_p_src,
    topk_p_dst,
    topk_p_src_stride,
    topk_p_dst_stride,
    topk_index_src,
    topk_index_dst,
    topk_index_src_stride,
    topk_index_dst_stride,
    bonus_src,
    bonus_dst,
    bonus_src_stride,
    bonus_dst_stride,
    seq_src,
    seq_dst,
    seq_src_stride,
    seq_dst_stride,
    hidden_src,
    hidden_dst,
    hidden_src_stride,
    hidden_dst_stride,
    hidden_width,
    TOPK: tl.constexpr,
    TOPK_P2: tl.constexpr,
    SRC_IS_RANGE: tl.constexpr,
    DST_IS_RANGE: tl.constexpr,
    HAS_HIDDEN: tl.constexpr,
    BLOCK_COLS: tl.constexpr,
):
    """Row i of the five draft-input fields, from src row s(i) to dst row d(i), where a
    side is either a range (start + i) or a list of row numbers.  Program (i, c) copies
    hidden columns [c * BLOCK_COLS, (c + 1) * BLOCK_COLS); program (i, 0) also the rest."""
    i = tl.program_id(0)
    c = tl.program_id(1)
    if SRC_IS_RANGE:
        s = (src_start + i).to(tl.int64)
    else:
        s = tl.load(src_rows + i).to(tl.int64)
    if DST_IS_RANGE:
        d = (dst_start + i).to(tl.int64)
    else:
        d = tl.load(dst_rows + i).to(tl.int64)
    if HAS_HIDDEN:
        cols = c * BLOCK_COLS + tl.arange(0, BLOCK_COLS)
        m = cols < hidden_width
        v = tl.load(hidden_src + s * hidden_src_stride + cols, mask=m)
        tl.store(hidden_dst + d * hidden_dst_stride + cols, v.to(hidden_dst.dtype.element_ty), mask=m)
    if c == 0:
        k = tl.arange(0, TOPK_P2)
        km = k < TOPK
        p = tl.load(topk_p_src + s * topk_p_src_stride + k, mask=km)
        tl.store(topk_p_dst + d * topk_p_dst_stride + k, p.to(topk_p_dst.dtype.element_ty), mask=km)
        x = tl.load(topk_index_src + s * topk_index_src_stride + k, mask=km)
        tl.store(topk_index_dst + d * topk_index_dst_stride + k, x.to(topk_index_dst.dtype.element_ty), mask=km)
        b = tl.load(bonus_src + s * bonus_src_stride)
        tl.store(bonus_dst + d * bonus_dst_stride, b.to(bonus_dst.dtype.element_ty))
        n = tl.load(seq_src + s * seq_src_stride)
        tl.store(seq_dst + d * seq_dst_stride, n.to(seq_dst.dtype.element_ty))


def _stride0(t: torch.Tensor) -> int:
    return t.stride(0) if t.dim() > 0 else 0


def _copy_rows(
    bs: int,
    src: Sequence[Optional[torch.Tensor]],
    dst: Sequence[Optional[torch.Tensor]],
    src_rows: Optional[torch.Tensor],
    dst_rows: Optional[torch.Tensor],
    src_start: int,
    dst_start: int,
) -> None:
    topk_p_s, topk_index_s, bonus_s, seq_s, hidden_s = src
    topk_p_d, topk_index_d, bonus_d, seq_d, hidden_d = dst
    topk = topk_p_s.shape[-1]
    has_hidden = hidden_s is not None
    width = hidden_s.shape[-1] if has_hidden else 0
    grid = (bs, triton.cdiv(width, _BLOCK_COLS) if has_hidden else 1)
    # a side given as a range reads no row list: any tensor stands in for it
    _copy_rows_kernel[grid](
        src_rows if src_rows is not None else bonus_s,
        dst_rows if dst_rows is not None else bonus_s,
        src_start,
        dst_start,
        topk_p_s, topk_p_d, _stride0(topk_p_s), _stride0(topk_p_d),
        topk_index_s, topk_index_d, _stride0(topk_index_s), _stride0(topk_index_d),
        bonus_s, bonus_d, _stride0(bonus_s), _stride0(bonus_d),
        seq_s, seq_d, _stride0(seq_s), _stride0(seq_d),
        hidden_s if has_hidden else bonus_s,
        hidden_d if has_hidden else bonus_d,
        _stride0(hidden_s) if has_hidden else 0,
        _stride0(hidden_d) if has_hidden else 0,
        width,
        TOPK=topk,
        TOPK_P2=triton.next_power_of_2(topk),
        SRC_IS_RANGE=src_rows is None,
        DST_IS_RANGE=dst_rows is None,
        HAS_HIDDEN=has_hidden,
        BLOCK_COLS=_BLOCK_COLS,
    )


def _fields_fit(fields, bs: int, topk: int, width: Optional[int]) -> bool:
    topk_p, topk_index, bonus, seq, hidden = fields
    if not _rows_ok(topk_p, topk_index, bonus, seq, hidden):
        return False
    if topk_p.shape != (bs, topk) or topk_index.shape != (bs, topk):
        return False
    if bonus.shape != (bs,) or seq.shape != (bs,):
        return False
    if width is None:
        return hidden is None
    return hidden is not None and hidden.shape == (bs, width)


def _buffers_fit(future_map, hidden_buf: Optional[torch.Tensor]) -> bool:
    """The future map's buffers as FutureMap._lazy_init_buf makes them: one contiguous row per
    slot, top-k rows of equal width."""
    topk_p, topk_index = future_map.topk_p_buf, future_map.topk_index_buf
    bonus, seq = future_map.bonus_tokens_buf, future_map.new_seq_lens_buf
    bufs = [topk_p, topk_index, bonus, seq] + ([hidden_buf] if hidden_buf is not None else [])
    return (
        all(_on_kernel_device(b) and b.is_contiguous() for b in bufs)
        and topk_p.dim() == 2
        and topk_index.shape == topk_p.shape
        and bonus.dim() == 1
        and seq.dim() == 1
        and (hidden_buf is None or hidden_buf.dim() == 2)
    )


def future_map_store(future_map, interval: slice, draft_input) -> bool:
    """``FutureMap.store_to_map_for_new_batch``'s five copies in one launch.

    Returns False (nothing written) when the fields do not have the buffers' row shapes;
    the caller then runs its own copies."""
    start, stop, _ = interval.indices(future_map.future_buffer_len)
    bs = stop - start
    hidden_buf = getattr(future_map, "hidden_states_buf", None)
    width = hidden_buf.shape[-1] if hidden_buf is not None else None
    src = (
        draft_input.topk_p,
        draft_input.topk_index,
        draft_input.bonus_tokens,
        draft_input.new_seq_lens,
        draft_input.hidden_states if hidden_buf is not None else None,
    )
    if bs <= 0 or not _buffers_fit(future_map, hidden_buf):
        return False
    if not _fields_fit(src, bs, future_map.topk_p_buf.shape[-1], width):
        return False
    dst = (
        future_map.topk_p_buf,
        future_map.topk_index_buf,
        future_map.bonus_tokens_buf,
        future_map.new_seq_lens_buf,
        hidden_buf,
    )
    _copy_rows(bs, src, dst, None, None, 0, start)
    return True


def future_map_gather(future_map, indices: torch.Tensor, draft_input) -> bool:
    """``FutureMap.resolve_future``'s five gathers (``buf[indices]``) in one launch, into new
    contiguous tensors of the buffers' dtypes, set on ``draft_input``."""
    if indices.dim() != 1 or not _on_kernel_device(indices):
        return False
    bs = indices.shape[0]
    hidden_buf = getattr(future_map, "hidden_states_buf", None)
    if bs == 0 or not _buffers_fit(future_map, hidden_buf):
        return False
    bufs = (
        future_map.topk_p_buf,
        future_map.topk_index_buf,
        future_map.bonus_tokens_buf,
        future_map.new_seq_lens_buf,
        hidden_buf,
    )
    out = [
        torch.empty((bs, *b.shape[1:]), dtype=b.dtype, device=b.device) if b is not None else None
        for b in bufs
    ]
    _copy_rows(bs, bufs, out, indices, None, 0, 0)
    draft_input.topk_p, draft_input.topk_index, draft_input.bonus_tokens = out[0], out[1], out[2]
    draft_input.new_seq_lens = out[3]
    if hidden_buf is not None:
        draft_input.hidden_states = out[4]
    return True


@triton.jit(do_not_specialize=["bs"])
def _disabled_prologue_kernel(
    seq_lens,
    req_pool_indices,
    req_to_token,
    req_to_token_stride,
    bonus_tokens,
    new_seq_lens,
    out_cache_loc,
    input_ids,
    orig_seq_lens,
    bs,
    HAS_ORIG: tl.constexpr,
    BLOCK: tl.constexpr,
):
    i = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = i < bs
    s = tl.load(seq_lens + i, mask=m, other=0)
    r = tl.load(req_pool_indices + i, mask=m, other=0).to(tl.int64)
    loc = tl.load(req_to_token + r * req_to_token_stride + s, mask=m, other=0)
    tl.store(new_seq_lens + i, (s + 1).to(new_seq_lens.dtype.element_ty), mask=m)
    tl.store(out_cache_loc + i, loc.to(tl.int64), mask=m)
    b = tl.load(bonus_tokens + i, mask=m, other=0)
    tl.store(input_ids + i, b.to(tl.int64), mask=m)
    if HAS_ORIG:
        tl.store(orig_seq_lens + i, (s + 1).to(orig_seq_lens.dtype.element_ty), mask=m)


def disabled_step_prologue(
    seq_lens: torch.Tensor,
    req_pool_indices: torch.Tensor,
    req_to_token: torch.Tensor,
    bonus_tokens: torch.Tensor,
    orig_seq_lens_dtype: Optional[torch.dtype],
):
    """(new_seq_lens, out_cache_loc, input_ids, orig_seq_lens or None) of a disabled step:
    ``seq_lens + 1``, ``req_to_token[req_pool_indices, seq_lens]`` as int64, the bonus tokens
    as int64 and ``seq_lens + 1`` in orig_seq_lens' dtype; one launch on CUDA, else torch."""
    bs = seq_lens.shape[0]
    fused = (
        bs > 0
        and _on_kernel_device(seq_lens)
        and seq_lens.is_contiguous()
        and req_pool_indices.is_contiguous()
        and bonus_tokens.is_contiguous()
        and req_to_token.dim() == 2
        and req_to_token.stride(1) == 1
        and req_pool_indices.shape == (bs,)
        and bonus_tokens.shape == (bs,)
    )
    if not fused:
        new_seq_lens = seq_lens + 1
        out_cache_loc = req_to_token[req_pool_indices, seq_lens].to(torch.int64)
        input_ids = bonus_tokens.to(torch.int64)
        orig = new_seq_lens.to(orig_seq_lens_dtype) if orig_seq_lens_dtype is not None else None
        return new_seq_lens, out_cache_loc, input_ids, orig
    device = seq_lens.device
    new_seq_lens = torch.empty_like(seq_lens)
    out_cache_loc = torch.empty(bs, dtype=torch.int64, device=device)
    input_ids = torch.empty(bs, dtype=torch.int64, device=device)
    orig = (
        torch.empty(bs, dtype=orig_seq_lens_dtype, device=device)
        if orig_seq_lens_dtype is not None
        else None
    )
    _disabled_prologue_kernel[(triton.cdiv(bs, _BLOCK_ROWS),)](
        seq_lens,
        req_pool_indices,
        req_to_token,
        req_to_token.stride(0),
        bonus_tokens,
        new_seq_lens,
        out_cache_loc,
        input_ids,
        orig if orig is not None else new_seq_lens,
        bs,
        HAS_ORIG=orig is not None,
        BLOCK=_BLOCK_ROWS,
    )
    return new_seq_lens, out_cache_loc, input_ids, orig


@triton.jit(do_not_specialize=["n"])
def _record_kernel(
    places,  # (2, n): window slot, then position k, per kept request
    n,
    hidden,
    hidden_stride,
    tokens,
    tokens_stride,
    hidden_buf,
    hidden_buf_slot_stride,
    hidden_buf_k_stride,
    tokens_buf,
    tokens_buf_slot_stride,
    width,
    BLOCK_COLS: tl.constexpr,
):
    i = tl.program_id(0)
    c = tl.program_id(1)
    slot = tl.load(places + i).to(tl.int64)
    k = tl.load(places + n + i).to(tl.int64)
    cols = c * BLOCK_COLS + tl.arange(0, BLOCK_COLS)
    m = cols < width
    v = tl.load(hidden + i * hidden_stride + cols, mask=m)
    tl.store(
        hidden_buf + slot * hidden_buf_slot_stride + k * hidden_buf_k_stride + cols,
        v.to(hidden_buf.dtype.element_ty),
        mask=m,
    )
    if c == 0:
        t = tl.load(tokens + i * tokens_stride)
        tl.store(tokens_buf + slot * tokens_buf_slot_stride + k, t.to(tokens_buf.dtype.element_ty))


def catch_up_record(
    places: torch.Tensor,
    hidden: torch.Tensor,
    tokens: torch.Tensor,
    hidden_buf: torch.Tensor,
    tokens_buf: torch.Tensor,
) -> None:
    """``hidden_buf[slot, k] = hidden``; ``tokens_buf[slot, k] = tokens`` for the n requests
    of ``places`` (2, n) on the device, in one launch on CUDA (two index_puts otherwise)."""
    n = places.shape[1]
    fused = (
        n > 0
        and _on_kernel_device(hidden)
        and places.is_contiguous()
        and hidden.dim() == 2
        and hidden.shape[0] == n
        and hidden.stride(1) == 1
        and tokens.shape == (n,)
        and hidden_buf.dim() == 3
        and hidden_buf.stride(2) == 1
        and hidden_buf.shape[2] == hidden.shape[1]
        and tokens_buf.dim() == 2
        and tokens_buf.stride(1) == 1
    )
    if not fused:
        at = places.unbind(0)
        hidden_buf[at] = hidden.to(hidden_buf.dtype)  # index_put converts no dtype
        tokens_buf[at] = tokens.to(tokens_buf.dtype)
        return
    width = hidden.shape[1]
    _record_kernel[(n, triton.cdiv(width, _BLOCK_COLS))](
        places,
        n,
        hidden,
        hidden.stride(0),
        tokens,
        tokens.stride(0),
        hidden_buf,
        hidden_buf.stride(0),
        hidden_buf.stride(1),
        tokens_buf,
        tokens_buf.stride(0),
        width,
        BLOCK_COLS=_BLOCK_COLS,
    )


def warm_up(
    device: torch.device,
    topk: int,
    draft_hidden: Optional[int],
    draft_dtype: Optional[torch.dtype],
    req_to_token: torch.Tensor,
    catch_up_buffers: Optional[Sequence[torch.Tensor]] = None,
) -> None:
    """Compile each kernel at server start, with the dtypes and row widths a decode step passes
    (Triton compiles per dtype signature on first use; on the H200 the first engine's first C=1
    run lost about 0.9 s to it), so that no request waits for a compilation.  A step whose
    dtypes differ still runs correctly: it compiles then."""
    on_gpu = str(device).startswith("cuda")
    if not on_gpu and not _INTERPRET:
        return
    with torch.device(device):
        rows = 2
        fm = types.SimpleNamespace(
            future_buffer_len=4,
            topk_p_buf=torch.zeros(4, topk, dtype=torch.float32),
            topk_index_buf=torch.zeros(4, topk, dtype=torch.int64),
            # the dtype of the first store, a prefill's int64 next_token_ids
            bonus_tokens_buf=torch.zeros(4, dtype=torch.int64),
            new_seq_lens_buf=torch.zeros(4, dtype=torch.int64),
        )
        if draft_hidden is not None:
            fm.hidden_states_buf = torch.zeros(4, draft_hidden, dtype=draft_dtype)
        # the verify path's bonus tokens are int32, a prefill's and a disabled step's int64
        for bonus_dtype in (torch.int32, torch.int64):
            inp = types.SimpleNamespace(
                topk_p=torch.zeros(rows, topk, dtype=torch.float32),
                topk_index=torch.zeros(rows, topk, dtype=torch.int64),
                bonus_tokens=torch.zeros(rows, dtype=bonus_dtype),
                new_seq_lens=torch.zeros(rows, dtype=torch.int64),
                hidden_states=(
                    torch.zeros(rows, draft_hidden, dtype=draft_dtype) if draft_hidden else None
                ),
            )
            future_map_store(fm, slice(1, 1 + rows), inp)
        future_map_gather(fm, torch.zeros(rows, dtype=torch.int64), types.SimpleNamespace())
        zeros = torch.zeros(rows, dtype=torch.int64)
        disabled_step_prologue(zeros, zeros, req_to_token, zeros, torch.int32)
        if catch_up_buffers is not None:
            hidden_buf, tokens_buf = catch_up_buffers
            catch_up_record(
                torch.zeros(2, rows, dtype=torch.int64),
                torch.zeros(rows, hidden_buf.shape[-1], dtype=hidden_buf.dtype),
                zeros,
                hidden_buf,
                tokens_buf,
            )
        if on_gpu:
            torch.cuda.synchronize(device)


__all__: List[str] = [
    "catch_up_record",
    "disabled_step_prologue",
    "future_map_gather",
    "future_map_store",
    "warm_up",
]
