"""Dominance over the block ids the fact collectors give each statement (node_context.py): which
write or binding runs before every arrival at a later statement of the same function."""

from __future__ import annotations

import re


def dominates(earlier: list[str], later: list[str]) -> bool:
    """Whether what runs in blocks ``earlier`` runs before every arrival at blocks ``later``: the
    same blocks or enclosing ones, or a try body/``finally`` that all of the statement's other
    ways out pass (see ``try_block``)."""
    n = len(earlier)
    if later[:n] == earlier:
        return True
    if not n or not earlier[-1].endswith(("T", "y")) or later[: n - 1] != earlier[:-1]:
        return False
    if len(later) < n:
        return True
    at = earlier[-1][:-1]
    return not re.match(rf"{at}[tThy]", later[n - 1])


# a try body or `else` (t, T), a handler (h<line>), `finally` (y), the body of a with that may swallow (t)
_EXCEPTIONAL = re.compile(r"^\d+(?:[tTy]|h\d+)$")


def apart_by_exceptions(earlier: list[str], later: list[str]) -> bool:
    """Whether ``earlier`` encloses ``later`` but for the blocks an exception may leave or enter
    (try bodies, handlers, swallowing with bodies): what runs in ``earlier`` and not before
    ``later`` is skipped by an error, under no condition of its own."""
    kept = [b for b in earlier if not _EXCEPTIONAL.match(b)]
    return [b for b in later if not _EXCEPTIONAL.match(b)][: len(kept)] == kept
