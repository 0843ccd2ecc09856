#!/usr/bin/env python3
"""CPU check of bench/gpu/agree.py's premise: with SGLang's dummy embedding (uniform in +-1e-3,
bf16), lm_head = embed_tokens and RMSNorm weights 1, the logits E . rmsnorm(E[x]) peak at x itself,
by a wide margin, for the 8B shape (vocab 128256, hidden 4096).

    python3 bench/gpu/agree_check.py [--vocab 128256] [--hidden 4096] [--samples 64]

Prints the fraction of sampled tokens whose argmax is the token itself and the smallest margin
(self logit minus the best other logit) in units of the other logits' standard deviation.
"""
import argparse

import numpy as np


def to_bf16(a: np.ndarray) -> np.ndarray:
    """Round float32 to the nearest bfloat16 (kept in float32)."""
    bits = a.astype(np.float32).view(np.uint32)
    rounded = (bits + 0x7FFF + ((bits >> 16) & 1)) & 0xFFFF0000
    return rounded.view(np.float32)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--vocab", type=int, default=128256)
    ap.add_argument("--hidden", type=int, default=4096)
    ap.add_argument("--samples", type=int, default=64)
    ap.add_argument("--eps", type=float, default=1e-5)
    a = ap.parse_args()
    rng = np.random.default_rng(1234)
    emb = to_bf16(rng.uniform(-1e-3, 1e-3, size=(a.vocab, a.hidden)).astype(np.float32))
    xs = rng.choice(a.vocab, size=a.samples, replace=False)
    e = emb[xs]
    normed = to_bf16(e / np.sqrt((e * e).mean(axis=1, keepdims=True) + a.eps))
    logits = emb @ normed.T  # (vocab, samples), float32 accumulation as in a bf16 GEMM
    hits, margins = 0, []
    for j, x in enumerate(xs):
        col = logits[:, j]
        own = col[x]
        others = np.delete(col, x)
        hits += int(col.argmax() == x)
        margins.append((own - others.max()) / others.std())
    print(f"vocab {a.vocab}, hidden {a.hidden}: argmax == token for {hits}/{a.samples} sampled tokens; "
          f"smallest margin {min(margins):.1f} std of the other logits (largest other: "
          f"{max((np.delete(logits[:, j], x).max() - np.delete(logits[:, j], x).mean()) / np.delete(logits[:, j], x).std() for j, x in enumerate(xs)):.1f} std above their mean)")


if __name__ == "__main__":
    main()
