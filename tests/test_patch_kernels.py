"""The 0.5.12 series' fused kernels (``dynamic_disable_kernels.py``, from its source in
patches/dynamic-disable/src/, which patch 0001 adds byte for byte), run under Triton's
interpreter on the CPU against the torch code each one replaces: the same values, bit for bit,
for the layouts the disabled step and the future map pass.

Needs torch and triton (skipped without them, as in CI); the series' GPU runs
(``bench/gpu/run.sh``) run the compiled kernels.
"""

from __future__ import annotations

import importlib.util
import types
from pathlib import Path

import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("triton")

KERNELS_FILE = "sglang/srt/speculative/dynamic_disable_kernels.py"
SRC = Path(__file__).resolve().parent.parent / "patches/dynamic-disable/src/0.5.12"


@pytest.fixture
def kernels(interpreted):
    spec = importlib.util.spec_from_file_location("dynamic_disable_kernels_under_test", SRC / KERNELS_FILE.removeprefix("sglang/srt/"))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def future_map(slots, topk, width, bonus_dtype=torch.int64):
    """The buffers FutureMap._lazy_init_buf makes (one row per slot), filled with noise."""
    g = torch.Generator().manual_seed(slots * 7 + topk)
    fm = types.SimpleNamespace(
        future_buffer_len=slots,
        topk_p_buf=torch.rand(slots, topk, generator=g),
        topk_index_buf=torch.randint(0, 1 << 40, (slots, topk), generator=g),
        bonus_tokens_buf=torch.randint(0, 1 << 20, (slots,), generator=g).to(bonus_dtype),
        new_seq_lens_buf=torch.randint(0, 1 << 20, (slots,), generator=g),
    )
    if width is not None:
        fm.hidden_states_buf = torch.randn(slots, width, generator=g).to(torch.bfloat16)
    return fm


def draft_input(bs, topk, width, hidden_row_stride=None):
    g = torch.Generator().manual_seed(bs * 13 + topk)
    hidden = None
    if width is not None:
        # a strided view, as a slice of the target's hidden states can be
        wide = torch.randn(bs, hidden_row_stride or width, generator=g).to(torch.bfloat16)
        hidden = wide[:, :width]
    return types.SimpleNamespace(
        topk_p=torch.rand(bs, topk, generator=g),
        topk_index=torch.randint(0, 1 << 40, (bs, topk), generator=g),
        bonus_tokens=torch.randint(0, 1 << 20, (bs,), generator=g, dtype=torch.int32),
        new_seq_lens=torch.randint(0, 1 << 20, (bs,), generator=g),
        hidden_states=hidden,
    )


FIELDS = ["topk_p", "topk_index", "bonus_tokens", "new_seq_lens"]
BUFS = ["topk_p_buf", "topk_index_buf", "bonus_tokens_buf", "new_seq_lens_buf"]


@pytest.fixture
def interpreted(monkeypatch):
    monkeypatch.setenv("TRITON_INTERPRET", "1")


@pytest.mark.parametrize("topk, width, stride", [(1, 1500, None), (3, 2048, 2560), (1, None, None)])
def test_future_map_store_writes_what_the_five_copies_write(kernels, topk, width, stride):
    fused, reference = future_map(40, topk, width), future_map(40, topk, width)
    inp = draft_input(5, topk, width, stride)
    interval = slice(7, 12)
    assert kernels.future_map_store(fused, interval, inp)
    for field, buf in zip(FIELDS, BUFS):
        getattr(reference, buf)[interval] = getattr(inp, field)
    compared = BUFS
    if width is not None:
        reference.hidden_states_buf[interval] = inp.hidden_states
        compared = BUFS + ["hidden_states_buf"]
    for buf in compared:
        assert torch.equal(getattr(fused, buf), getattr(reference, buf)), buf
    # the int32 bonus tokens went into the int64 buffer as the copy converts them
    assert fused.bonus_tokens_buf.dtype == torch.int64


@pytest.mark.parametrize("topk, width", [(1, 1500), (2, 4096), (1, None)])
def test_future_map_gather_reads_what_the_five_index_kernels_read(kernels, topk, width):
    fm = future_map(50, topk, width, bonus_dtype=torch.int32)
    indices = torch.tensor([3, 49, 0, 17, 17, 8])
    out = types.SimpleNamespace(hidden_states="untouched")
    assert kernels.future_map_gather(fm, indices, out)
    for field, buf in zip(FIELDS, BUFS):
        want = getattr(fm, buf)[indices]
        got = getattr(out, field)
        assert got.dtype == want.dtype and torch.equal(got, want), field
    if width is None:
        assert out.hidden_states == "untouched"
    else:
        assert torch.equal(out.hidden_states, fm.hidden_states_buf[indices])


def test_future_map_kernels_leave_layouts_they_were_not_written_for_to_the_copies(kernels):
    fm = future_map(20, 1, 64)
    before = {buf: getattr(fm, buf).clone() for buf in BUFS}
    inp = draft_input(3, 1, 64)
    inp.topk_p = inp.topk_p.view(-1)  # one-dimensional: not the buffer's row shape
    assert not kernels.future_map_store(fm, slice(2, 5), inp)
    assert all(torch.equal(getattr(fm, buf), before[buf]) for buf in BUFS)
    assert not kernels.future_map_store(fm, slice(5, 5), draft_input(0, 1, 64))
    assert not kernels.future_map_gather(fm, torch.tensor([], dtype=torch.int64), types.SimpleNamespace())


@pytest.mark.parametrize("bs, orig_dtype", [(1, torch.int32), (300, None)])
def test_disabled_step_prologue_equals_the_torch_ops_it_replaces(kernels, bs, orig_dtype):
    g = torch.Generator().manual_seed(bs)
    req_to_token = torch.randint(0, 1 << 30, (400, 700), generator=g, dtype=torch.int32)
    seq_lens = torch.randint(0, 699, (bs,), generator=g)
    req_pool_indices = torch.randperm(400, generator=g)[:bs]
    bonus = torch.randint(0, 1 << 20, (bs,), generator=g, dtype=torch.int32)
    new, loc, ids, orig = kernels.disabled_step_prologue(seq_lens, req_pool_indices, req_to_token, bonus, orig_dtype)
    assert torch.equal(new, seq_lens + 1) and new.dtype == seq_lens.dtype
    want_loc = req_to_token[req_pool_indices, seq_lens].to(torch.int64)
    assert loc.dtype == torch.int64 and torch.equal(loc, want_loc)
    assert ids.dtype == torch.int64 and torch.equal(ids, bonus.to(torch.int64))
    if orig_dtype is None:
        assert orig is None
    else:
        assert orig.dtype == orig_dtype and torch.equal(orig, (seq_lens + 1).to(orig_dtype))


def test_catch_up_record_writes_what_the_two_index_puts_write(kernels):
    g = torch.Generator().manual_seed(5)
    hidden_buf = torch.randn(6, 16, 1500, generator=g).to(torch.bfloat16)
    tokens_buf = torch.randint(0, 100, (6, 16), generator=g)
    reference_hidden, reference_tokens = hidden_buf.clone(), tokens_buf.clone()
    places = torch.tensor([[4, 0, 5], [15, 3, 0]])
    hidden = torch.randn(3, 1500, generator=g).to(torch.bfloat16)
    tokens = torch.randint(0, 1 << 20, (3,), generator=g)
    kernels.catch_up_record(places, hidden, tokens, hidden_buf, tokens_buf)
    at = places.unbind(0)
    reference_hidden[at] = hidden
    reference_tokens[at] = tokens
    assert torch.equal(hidden_buf, reference_hidden)
    assert torch.equal(tokens_buf, reference_tokens)


def test_catch_up_record_fallback_converts_hidden_states_as_the_kernel_does(kernels):
    """The kernel stores each value converted to the buffer's dtype; its index_put fallback (here:
    non-contiguous places) must convert too, as index_put converts no dtype. The callers pass the
    buffer's float dtype already (Triton's interpreter rounds a float32 to bfloat16 otherwise than
    the GPU, so only the integer conversion is compared through the kernel)."""
    g = torch.Generator().manual_seed(9)
    hidden = torch.randn(2, 64, generator=g)  # float32 into a bf16 buffer
    tokens = torch.tensor([7, 8], dtype=torch.int32)  # int32 into an int64 buffer
    places = torch.tensor([[1, 0], [3, 2]]).t()  # [[1, 3], [0, 2]], not contiguous
    hidden_buf = torch.zeros(4, 4, 64, dtype=torch.bfloat16)
    tokens_buf = torch.zeros(4, 4, dtype=torch.int64)
    kernels.catch_up_record(places, hidden, tokens, hidden_buf, tokens_buf)
    assert torch.equal(hidden_buf[1, 0], hidden[0].to(torch.bfloat16))
    assert torch.equal(hidden_buf[3, 2], hidden[1].to(torch.bfloat16))
    assert tokens_buf[1, 0] == 7 and tokens_buf[3, 2] == 8 and tokens_buf.sum() == 15
    kernel_tokens = torch.zeros(4, 4, dtype=torch.int64)
    kernels.catch_up_record(places.contiguous(), hidden.to(torch.bfloat16), tokens,
                            torch.zeros(4, 4, 64, dtype=torch.bfloat16), kernel_tokens)
    assert torch.equal(kernel_tokens, tokens_buf)


class LaunchCounter:
    """Stands in for a @triton.jit kernel: counts launches, then launches the real one."""

    def __init__(self, kernel):
        self.kernel, self.launches = kernel, 0

    def __getitem__(self, grid):
        self.launches += 1
        return self.kernel[grid]


def test_warm_up_launches_every_kernel_once_per_dtype_signature(kernels, monkeypatch):
    counters = {}
    for name in ("_copy_rows_kernel", "_disabled_prologue_kernel", "_record_kernel"):
        counters[name] = LaunchCounter(getattr(kernels, name))
        monkeypatch.setattr(kernels, name, counters[name])
    req_to_token = torch.zeros(8, 64, dtype=torch.int32)
    hidden_buf = torch.ones(4, 16, 96, dtype=torch.bfloat16)
    tokens_buf = torch.ones(4, 16, dtype=torch.int64)
    kernels.warm_up(torch.device("cpu"), 1, 80, torch.bfloat16, req_to_token, (hidden_buf, tokens_buf))
    # two stores (int32 and int64 bonus tokens) and one gather; none fell back to the torch copies
    assert {name: c.launches for name, c in counters.items()} == {
        "_copy_rows_kernel": 3, "_disabled_prologue_kernel": 1, "_record_kernel": 1}
    # it wrote into the catch-up buffers' slot 0 only, which no pending position holds yet
    assert hidden_buf[0, 0].eq(0).all() and hidden_buf[1:].eq(1).all() and hidden_buf[0, 1:].eq(1).all()
    assert tokens_buf[0, 0] == 0 and tokens_buf.sum() == tokens_buf.numel() - 1
    # a STANDALONE server's map has no hidden_states rows, and catch-up may be off
    counters["_copy_rows_kernel"].launches = 0
    kernels.warm_up(torch.device("cpu"), 1, None, None, req_to_token, None)
    assert counters["_copy_rows_kernel"].launches == 3 and counters["_record_kernel"].launches == 1
