"""A module's outline: its source with the bodies of its functions blanked, found by a text scan.

A light summary (``index.light_summary``) holds no function body, so parsing the bodies is wasted
on it: the outline keeps every line outside the bodies of the functions not nested in one (module
code, class bodies, decorators, signatures) and keeps each blanked body's last line as ``...`` at
the body's indentation, so that the parse of the outline gives every node the lines and columns it
has in the source, each function's ``end_lineno`` included. Parsing it costs a fraction of the
whole parse.

The scan first masks the strings and comments (one pass from the start, as the tokenizer reads
them), so that what is left of a line is code: its brackets are brackets, a trailing backslash is
a continuation, a ``def`` is a definition. A body ends at the first line indented no deeper than
its ``def`` that starts a logical line (the brackets opened since the header are closed and the
line before does not continue). Wherever the scan cannot be sure it gives no outline and the
caller parses the whole source: tabs or form feeds in an indentation, ``\\r`` line ends, a coding
declaration, an unterminated string, f-strings where Python 3.12 nests quotes in them. A syntax
error inside a blanked body is not seen here; it shows when that body is parsed.
"""

from __future__ import annotations

import re
import sys
from dataclasses import dataclass

# A comment or a whole string, the longest quotes first (the letters of a prefix are code to the
# scan: they hold no bracket).
STRING_OR_COMMENT = re.compile(
    rb"#[^\n]*"
    rb"|'''(?:[^'\\]|\\.|'(?!''))*'''"
    rb'|"""(?:[^"\\]|\\.|"(?!""))*"""'
    rb"|'(?:[^'\\\n]|\\.)*'"
    rb'|"(?:[^"\\\n]|\\.)*"', re.S)
_FSTRING = re.compile(rb"(?<![\w])(?:[fF][rR]?|[rR][fF])['\"]")
_CLASS_LINE = re.compile(rb"\n[ ]*class\b")
_NESTING_FSTRINGS = sys.version_info >= (3, 12)


@dataclass(frozen=True)
class Outline:
    text: bytes  # the source with the bodies blanked
    classes_in_bodies: bool  # whether a class statement was blanked (a class defined in a function)


def outline(source: bytes) -> Outline | None:
    """The source with each function body blanked (see the module's docstring), or None where the
    scan cannot be sure of the bodies' extent."""
    second_end = source.find(b"\n", source.find(b"\n") + 1)
    if b"\r" in source or b"\f" in source or b"coding" in source[:second_end if second_end >= 0 else len(source)]:
        return None
    masked = _masked(source)
    if masked is None or b"\t" in masked:  # (a tab outside strings: maybe in an indentation)
        return None
    spans = _body_spans(masked, source)
    if spans is None:
        return None
    if not spans:
        return Outline(source, False)
    pieces, pos = [], 0
    for first, last, indent, header_end, end in spans:  # the body's lines (0-based), the line ends around it
        pieces += [source[pos:header_end + 1], b"\n" * (last - first), b" " * (indent + 1), b"..."]
        pos = end
    pieces.append(source[pos:])
    classes = [m.start() for m in _CLASS_LINE.finditer(masked)]
    in_bodies = any(start <= at < end for at in classes for _f, _l, _i, start, end in spans) if classes else False
    return Outline(b"".join(pieces), in_bodies)


def _masked(source: bytes) -> bytes | None:
    """The source with every string and comment overwritten, byte for byte (a string's line ends
    too, so that every line end left is one between logical or physical lines of code)."""
    if _NESTING_FSTRINGS and _FSTRING.search(source):
        return None
    masked = STRING_OR_COMMENT.sub(_fill, source)
    if b"'" in masked or b'"' in masked:
        return None  # an unterminated string: the parser says where
    return masked


def _fill(m: re.Match) -> bytes:
    n = m.end() - m.start()
    return b" " * n if m.group()[0] == 0x23 else b"x" * n


def _body_spans(masked: bytes, source: bytes) -> list[tuple[int, int, int, int, int]] | None:
    """(first line, last line, the def's indentation, the offsets of the line ends before and
    after the body) of each blankable body (lines 0-based), or None. The defs are met in source
    order, so each line number is counted on from the last."""
    spans = []
    reached = 0  # bodies end before here: a def found inside one is left to it
    at, at_line = 0, 0  # an offset and its line
    count = source.count
    for start, indent in _def_lines(masked):
        if start < reached:
            continue
        header_end = _logical_end(masked, start)
        if header_end is None:
            return None
        header_line = at_line + count(b"\n", at, header_end)
        at, at_line = header_end, header_line
        if not masked[masked.rfind(b"\n", 0, header_end) + 1:header_end].rstrip(b" ").endswith(b":"):
            continue  # the body is on the header's line
        body_end = _body_end(masked, header_end, indent)
        if body_end is None:
            return None
        # back from the line end before the next statement over blank and comment-only lines
        end = body_end
        while True:
            line_start = masked.rfind(b"\n", 0, end) + 1
            if line_start <= header_end or masked[line_start:end].strip(b" "):
                break
            end = line_start - 1
        if line_start > header_end:
            last = at_line + count(b"\n", at, end)  # the source's lines: a string's count
            at, at_line = end, last
            spans.append((header_line + 1, last, indent, header_end, end))
        reached = body_end
    return spans


def _def_lines(masked: bytes):
    """(offset, indentation) of each line that starts with ``def`` or ``async def``."""
    find = masked.find
    pos = find(b"def ")
    while pos >= 0:
        line_start = masked.rfind(b"\n", 0, pos) + 1
        lead = masked[line_start:pos]
        code = lead.lstrip(b" ")
        if not code or (code.startswith(b"async ") and not code[6:].strip(b" ")):
            yield line_start, len(lead) - len(code)
        pos = find(b"def ", pos + 4)


def _depth(masked: bytes, start: int, end: int) -> int:
    c = masked.count
    return (c(b"(", start, end) + c(b"[", start, end) + c(b"{", start, end)
            - c(b")", start, end) - c(b"]", start, end) - c(b"}", start, end))


def _logical_end(masked: bytes, start: int) -> int | None:
    """The line end that ends the logical line starting at ``start`` (its brackets closed, no
    continuation); None when the source ends first."""
    depth, pos = 0, start
    while True:
        nl = masked.find(b"\n", pos)
        if nl < 0:
            return None
        depth += _depth(masked, pos, nl)
        if depth < 0:
            return None
        if depth == 0 and masked[nl - 1:nl] != b"\\":
            return nl
        pos = nl + 1


_CANDIDATES: dict[int, re.Pattern] = {}


def _body_end(masked: bytes, header_end: int, indent: int) -> int | None:
    """The offset of the line end before the first logical line after ``header_end`` indented no
    deeper than ``indent`` (the source's length when the body runs to the end)."""
    candidate = _CANDIDATES.get(indent)
    if candidate is None:  # a line end, at most `indent` spaces (not given back), then code
        candidate = _CANDIDATES[indent] = re.compile(rb"\n[ ]{0,%d}+(?=[^ \n])" % indent)
    depth, pos = 0, header_end
    while True:
        m = candidate.search(masked, pos + 1)
        if m is None:
            return len(masked) if _depth(masked, pos, len(masked)) + depth == 0 else None
        nl = m.start()
        depth += _depth(masked, pos, nl)
        if depth < 0:
            return None
        if depth == 0 and masked[nl - 1:nl] != b"\\":
            return nl
        pos = nl
