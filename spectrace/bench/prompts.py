"""Token-id prompts: the same ones for every configuration, so greedy outputs can be compared."""

from __future__ import annotations

import random


def prompts_for(concurrency: int, count: int, input_len: int, vocab: int, seed: int) -> list[list[int]]:
    """``count`` prompts of ``input_len`` token ids, seeded by ``seed`` and the concurrency (ids
    near the ends of the vocabulary are avoided: they hold special tokens)."""
    rng = random.Random(seed * 100003 + concurrency)
    return [[rng.randrange(10, vocab - 10) for _ in range(input_len)] for _ in range(count)]
