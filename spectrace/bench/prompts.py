"""Token-id prompts: the same ones for every configuration, so greedy outputs can be compared."""

from __future__ import annotations

import random


def prompts_for(concurrency: int, count: int, input_len: int, vocab: int, seed: int) -> list[list[int]]:
    """``count`` prompts of ``input_len`` token ids, seeded by ``seed`` and the concurrency (ids
    near the ends of the vocabulary are avoided: they hold special tokens)."""
    rng = random.Random(seed * 100003 + concurrency)
    return [[rng.randrange(10, vocab - 10) for _ in range(input_len)] for _ in range(count)]


def output_lengths(count: int, output_len: int, spread: float) -> list[int]:
    """Each request's output length: ``output_len`` for all, or with ``spread`` s in (0, 1) evenly
    spread from (1 - s) to (1 + s) times it (the mean stays ``output_len``), so that the batch
    shrinks while a run goes on, as requests of a serving engine end at different times."""
    if spread <= 0 or count < 2:
        return [output_len] * count
    low, high = output_len * (1 - spread), output_len * (1 + spread)
    return [max(1, round(low + (high - low) * i / (count - 1))) for i in range(count)]
