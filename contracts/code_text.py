"""A source's code alone: its comments and plain strings blanked, so that a word search over it
finds the names the code uses, not those its comments and docstrings speak of.

The strings are found as the outline's scan finds them (``tracer/outline.py``): one pass from the
start, the longest quotes first. An f-string is kept as it is, its replacement fields being code.
Wherever the scan cannot be sure there is no answer (None) and the caller reads the whole source:
a quote left outside every string (an unterminated one), or f-strings where Python 3.12 nests
quotes in them.
"""

from __future__ import annotations

import re
import sys

from spectrace.tracer.outline import STRING_OR_COMMENT

_FSTRING = re.compile(rb"(?<![\w])(?:[fF][rR]?|[rR][fF])['\"]")
_NESTING_FSTRINGS = sys.version_info >= (3, 12)


def code_text(source: bytes) -> bytes | None:
    """``source`` with each comment and each string but an f-string overwritten by spaces (a
    space joins no two words), or None where the scan cannot be sure of the strings."""
    if _NESTING_FSTRINGS and _FSTRING.search(source):
        return None
    pieces, pos = [], 0
    for m in STRING_OR_COMMENT.finditer(source):
        start, end = m.span()
        between = source[pos:start]
        if b"'" in between or b'"' in between:
            return None  # an unterminated string: the parser says where
        pieces.append(between)
        # (a string's prefix is the letters just before its quote: an f among them makes it an f-string)
        keep = source[start] != 0x23 and b"f" in source[max(0, start - 2):start].lower()
        pieces.append(source[start:end] if keep else b" " * (end - start))
        pos = end
    rest = source[pos:]
    if b"'" in rest or b'"' in rest:
        return None
    pieces.append(rest)
    return b"".join(pieces)
