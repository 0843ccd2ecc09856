#!/usr/bin/env python3
"""The 0.5.12 series' fused kernels on the GPU: equal to the torch code they replace, and how long
each takes against it, on a stream the way a decode step queues them.

Runs on the device after ``dd-run.sh`` applied the series to /tmp/site (the patched
``sglang.srt.speculative.dynamic_disable_kernels`` must be importable):

    PYTHONPATH=/tmp/site python3 bench/gpu/check_kernels.py > $OUT/kernels.md

For each case: whether the fused result equals the reference bit for bit, then per call of each
side: the stream time from CUDA events around ``--iters`` back-to-back eager calls (on the H200 the
host launches these more slowly than the device runs them, so this is the host's cost), the host
time, and the device time of the same calls replayed from one CUDA graph (no host in the way; a
graph's launch spacing is tighter than an eager stream's).  Exit status 1 when any result differs.
"""

from __future__ import annotations

import argparse
import sys
import time
import types

import torch


def timed(fn, iters: int):
    """(device µs per call, host µs per call, graph-replayed device µs per call) of ``iters``
    eager calls of fn after a warm-up, and of ``graph_timed``."""
    for _ in range(20):
        fn()
    torch.cuda.synchronize()
    start, stop = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    t0 = time.perf_counter()
    start.record()
    for _ in range(iters):
        fn()
    stop.record()
    host = (time.perf_counter() - t0) / iters * 1e6
    torch.cuda.synchronize()
    return start.elapsed_time(stop) * 1e3 / iters, host, graph_timed(fn)


def graph_timed(fn, calls: int = 50, replays: int = 20):
    """Device µs per call of fn with the host out of the way: ``calls`` calls captured in one CUDA
    graph, replayed ``replays`` times. The launch spacing inside a graph is smaller than on an
    eagerly fed stream, so this bounds the device-side cost from below. A string if capture fails."""
    try:
        side = torch.cuda.Stream()
        side.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(side):
            for _ in range(3):
                fn()
        torch.cuda.current_stream().wait_stream(side)
        graph = torch.cuda.CUDAGraph()
        with torch.cuda.graph(graph):
            for _ in range(calls):
                fn()
        graph.replay()
        torch.cuda.synchronize()
        start, stop = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        for _ in range(replays):
            graph.replay()
        stop.record()
        torch.cuda.synchronize()
        return start.elapsed_time(stop) * 1e3 / (replays * calls)
    except Exception as exc:  # reported in the table, not hidden: the eager figures still stand
        return f"capture failed: {type(exc).__name__}"


def future_map(slots, topk, width, dev):
    return types.SimpleNamespace(
        future_buffer_len=slots,
        topk_p_buf=torch.rand(slots, topk, device=dev),
        topk_index_buf=torch.randint(0, 1 << 20, (slots, topk), device=dev),
        bonus_tokens_buf=torch.randint(0, 1 << 17, (slots,), device=dev),
        new_seq_lens_buf=torch.randint(0, 1 << 12, (slots,), device=dev),
        hidden_states_buf=torch.randn(slots, width, device=dev, dtype=torch.bfloat16),
    )


def draft_input(bs, topk, width, dev):
    return types.SimpleNamespace(
        topk_p=torch.rand(bs, topk, device=dev),
        topk_index=torch.randint(0, 1 << 20, (bs, topk), device=dev),
        bonus_tokens=torch.randint(0, 1 << 17, (bs,), device=dev),
        new_seq_lens=torch.randint(0, 1 << 12, (bs,), device=dev),
        hidden_states=torch.randn(bs, width, device=dev, dtype=torch.bfloat16),
    )


FIELDS = ("topk_p", "topk_index", "bonus_tokens", "new_seq_lens", "hidden_states")
BUFS = tuple(f + "_buf" for f in FIELDS)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--iters", type=int, default=2000)
    ap.add_argument("--batch", default="1,64,128", help="batch sizes, comma-separated")
    ap.add_argument("--width", type=int, default=4096, help="the draft hidden size the future map holds")
    ap.add_argument("--target-width", type=int, default=12288, help="EAGLE-3's catch-up hidden width")
    args = ap.parse_args(argv)
    from sglang.srt.speculative import dynamic_disable_kernels as k

    dev = torch.device("cuda")
    rows = []
    bad = 0
    for bs in (int(b) for b in args.batch.split(",")):
        slots = 4 * 128 + 2 * 128
        interval = slice(17, 17 + bs)
        indices = torch.randperm(slots, device=dev)[:bs]
        # future map, store side
        fused_map, ref_map = future_map(slots, 1, args.width, dev), future_map(slots, 1, args.width, dev)
        for b in BUFS:
            getattr(ref_map, b).copy_(getattr(fused_map, b))
        inp = draft_input(bs, 1, args.width, dev)

        def store_ref():
            for f, b in zip(FIELDS, BUFS):
                getattr(ref_map, b)[interval] = getattr(inp, f)

        ok = k.future_map_store(fused_map, interval, inp)
        store_ref()
        equal = ok and all(torch.equal(getattr(fused_map, b), getattr(ref_map, b)) for b in BUFS)
        rows.append(("future-map store (5 fields)", bs, equal,
                     timed(store_ref, args.iters), timed(lambda: k.future_map_store(fused_map, interval, inp), args.iters)))
        # future map, gather side
        out = types.SimpleNamespace()

        def gather_ref():
            return [getattr(ref_map, b)[indices] for b in BUFS]

        ok = k.future_map_gather(ref_map, indices, out)
        equal = ok and all(torch.equal(getattr(out, f), r) for f, r in zip(FIELDS, gather_ref()))
        rows.append(("future-map gather (5 fields)", bs, equal,
                     timed(gather_ref, args.iters), timed(lambda: k.future_map_gather(ref_map, indices, out), args.iters)))
        # the disabled step's prologue
        req_to_token = torch.randint(0, 1 << 19, (130, 4096), device=dev, dtype=torch.int32)
        seq_lens = torch.randint(0, 4000, (bs,), device=dev)
        pool_idx = torch.randperm(130, device=dev)[:bs]
        bonus = torch.randint(0, 1 << 17, (bs,), device=dev)

        def prologue_ref():
            new = seq_lens + 1
            return new, req_to_token[pool_idx, seq_lens].to(torch.int64), bonus.to(torch.int64), new.to(torch.int32)

        got = k.disabled_step_prologue(seq_lens, pool_idx, req_to_token, bonus, torch.int32)
        equal = all(torch.equal(g, r) and g.dtype == r.dtype for g, r in zip(got, prologue_ref()))
        rows.append(("disabled-step prologue", bs, equal, timed(prologue_ref, args.iters),
                     timed(lambda: k.disabled_step_prologue(seq_lens, pool_idx, req_to_token, bonus, torch.int32), args.iters)))
        # the catch-up record
        hidden_buf = torch.zeros(128, 16, args.target_width, device=dev, dtype=torch.bfloat16)
        tokens_buf = torch.zeros(128, 16, device=dev, dtype=torch.int64)
        ref_hidden, ref_tokens = hidden_buf.clone(), tokens_buf.clone()
        places = torch.stack([torch.randperm(128, device=dev)[:bs], torch.randint(0, 16, (bs,), device=dev)])
        hidden = torch.randn(bs, args.target_width, device=dev, dtype=torch.bfloat16)
        tokens = torch.randint(0, 1 << 17, (bs,), device=dev)

        def record_ref():
            at = places.unbind(0)
            ref_hidden[at] = hidden
            ref_tokens[at] = tokens

        k.catch_up_record(places, hidden, tokens, hidden_buf, tokens_buf)
        record_ref()
        equal = torch.equal(hidden_buf, ref_hidden) and torch.equal(tokens_buf, ref_tokens)
        rows.append(("catch-up record", bs, equal, timed(record_ref, args.iters),
                     timed(lambda: k.catch_up_record(places, hidden, tokens, hidden_buf, tokens_buf), args.iters)))

    print(f"{torch.cuda.get_device_name(0)}, torch {torch.__version__}, {args.iters} calls per figure")
    print()
    print("Eager: CUDA events around back-to-back calls (host-bound when the host launches slower than")
    print("the device runs them). Graph: the same calls replayed from one CUDA graph (device only).")
    print()
    print("| what | batch | fused result equal | torch: eager device µs/call, host µs/call, graph µs/call "
          "| fused: eager device µs/call, host µs/call, graph µs/call |")
    print("|---|---|---|---|---|")

    def cell(t):
        graph = f"{t[2]:.1f}" if isinstance(t[2], float) else t[2]
        return f"{t[0]:.1f}, {t[1]:.1f}, {graph}"

    for what, bs, equal, ref, fused in rows:
        bad += not equal
        print(f"| {what} | {bs} | {'yes' if equal else 'NO'} | {cell(ref)} | {cell(fused)} |")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
