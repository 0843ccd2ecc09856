"""Request kinds of one dummy-weight engine (``--drafts kinds``): the vocabulary split into disjoint
sets, one per draft regime, so that a request's drafts are accepted always, about half the time or
never, fixed by the tokens of its prompt. Pure Python: the bench draws prompts from the sets, the
weight edit (drafts.py) reads the target's lm_head mapping from the same split.

With every layer's output zeroed (drafts.py), the target's greedy token after x is the y whose
lm_head row holds x's embedding, and the EAGLE-3 draft predicts, two positions on, the token whose
hidden state it reads (``accepted``'s reasoning). Per set, the target's lm_head row y copies:

- ``accepted``: embed row y: the token repeats, every draft is right (accept length 1 + steps);
- ``half``: embed row of y's partner in a pairing within the set: the target alternates p, f(p),
  p, ...; the first draft token is right, the second wrong (accept length 2);
- ``never``: embed row of y's successor on one cycle through the whole set: the target walks the
  cycle backwards, a period longer than two positions, so the first draft token is already wrong
  (accept length 1).

Each mapping stays inside its set, so a prompt of one kind keeps its greedy continuation, and a
later turn that resends it, in the set.
"""

from __future__ import annotations

import random
from dataclasses import dataclass

KIND_REGIMES = ("accepted", "half", "never")
EDGE = 10  # ids this close to the vocabulary's ends hold special tokens: in no set


@dataclass(frozen=True)
class VocabularySplit:
    vocab: int
    seed: int
    sets: dict[str, tuple[int, ...]]  # regime -> its token ids, in the order the mappings pair them

    def regime_of(self, token: int) -> str | None:
        for regime, ids in self.sets.items():
            if token in ids:
                return regime
        return None


def split_vocabulary(vocab: int, seed: int = 0) -> VocabularySplit:
    """Three disjoint sets of equal, even size from a seeded shuffle of the ids inside the edges."""
    ids = list(range(EDGE, vocab - EDGE))
    if len(ids) < 6 * len(KIND_REGIMES):
        raise ValueError(f"a vocabulary of {vocab} tokens is too small for {len(KIND_REGIMES)} request kinds")
    random.Random(seed).shuffle(ids)
    size = len(ids) // len(KIND_REGIMES) // 2 * 2
    return VocabularySplit(vocab, seed, {r: tuple(ids[i * size:(i + 1) * size]) for i, r in enumerate(KIND_REGIMES)})


def target_rows(split: VocabularySplit, rows: int) -> list[int]:
    """source[y]: the embed row that the target's lm_head row y copies, for ``rows`` rows (ids
    outside the sets, vocabulary padding included, keep their own row)."""
    source = list(range(rows))
    half = split.sets["half"]
    for a, b in zip(half[0::2], half[1::2]):
        source[a], source[b] = b, a
    never = split.sets["never"]
    for k, y in enumerate(never):
        source[y] = never[(k + 1) % len(never)]
    return source


def greedy_next(split: VocabularySplit, token: int) -> int:
    """The target's greedy token after ``token`` under the edit (the inverse of target_rows)."""
    regime = split.regime_of(token)
    if regime == "half":
        ids = split.sets["half"]
        k = ids.index(token)
        return ids[k + 1] if k % 2 == 0 else ids[k - 1]
    if regime == "never":
        ids = split.sets["never"]
        return ids[ids.index(token) - 1]
    return token
