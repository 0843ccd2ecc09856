"""Unified-diff hunks applied in memory, with exact context matching (no fuzz).

A hunk applies where its old side (context and removed lines) matches the file byte for byte:
at the line the hunk header names (shifted by what earlier hunks added or removed), else at the
single other place where it matches. Two or more other places is a refusal: placing a hunk by
guess is how a patch lands in the wrong function.
"""

from __future__ import annotations

from dataclasses import dataclass

from spectrace.patches.series import FileDiff, Hunk, split_keepends


class HunkError(Exception):
    def __init__(self, message: str, hunk_index: int, line: int | None = None):
        super().__init__(message)
        self.hunk_index = hunk_index  # 1-based
        self.line = line


@dataclass
class Placement:
    hunk_index: int  # 1-based
    line: int  # 1-based line in the file as it was before this diff where the hunk's old side starts
    offset: int  # lines away from where the header said


def _sides(hunk: Hunk, reverse: bool) -> tuple[list[bytes], list[bytes], int]:
    old = [t.encode("utf-8") for t in (hunk.new_lines if reverse else hunk.old_lines)]
    new = [t.encode("utf-8") for t in (hunk.old_lines if reverse else hunk.new_lines)]
    start = hunk.new_start if reverse else hunk.old_start
    return old, new, start


def _matches_at(lines: list[bytes], block: list[bytes], pos: int) -> bool:
    return 0 <= pos and pos + len(block) <= len(lines) and lines[pos:pos + len(block)] == block


def _first_difference(lines: list[bytes], block: list[bytes], pos: int) -> str:
    for k, want in enumerate(block):
        have = lines[pos + k] if 0 <= pos + k < len(lines) else None
        if have != want:
            shown = "end of file" if have is None else repr(have.decode("utf-8", "replace").rstrip("\n"))[:80]
            return f"line {pos + k + 1} is {shown}, the patch expects {want.decode('utf-8', 'replace').rstrip(chr(10))!r:.80}"
    return "no difference"


def apply_file_diff(data: bytes | None, diff: FileDiff, reverse: bool = False) -> tuple[bytes | None, list[Placement]]:
    """The file's new bytes (None: the diff deletes it) and where each hunk landed; HunkError if any hunk fails."""
    creates, deletes = (diff.deletes, diff.creates) if reverse else (diff.creates, diff.deletes)
    if creates and data is not None:
        raise HunkError("the file already exists, the patch creates it", 1)
    if not creates and data is None:
        raise HunkError("the file does not exist", 1)
    lines = split_keepends(data) if data is not None else []
    out: list[bytes] = []
    cursor = 0  # lines[:cursor] are consumed
    delta = 0  # how far the file has drifted from the headers' line numbers so far
    placements = []
    for index, hunk in enumerate(diff.hunks, start=1):
        old, new, start = _sides(hunk, reverse)
        # a hunk header's old start is the line the old side begins at; for an empty old side it is
        # the line *after which* the new lines go (0: the top of the file)
        expected = (start - 1 if old else start) + delta
        if _matches_at(lines, old, expected) and expected >= cursor:
            pos = expected
        else:
            candidates = [p for p in range(cursor, len(lines) - len(old) + 1) if _matches_at(lines, old, p)]
            if not old or not candidates:
                near = min(max(expected, cursor), max(len(lines) - 1, 0))
                why = _first_difference(lines, old, near) if old else "an insertion without context lines"
                raise HunkError(f"hunk #{index} {hunk.describe()} does not match: {why}", index, near + 1)
            if len(candidates) > 1:
                where = ", ".join(str(p + 1) for p in candidates[:5])
                raise HunkError(
                    f"hunk #{index} {hunk.describe()} is ambiguous: its context matches at lines {where}", index, candidates[0] + 1
                )
            pos = candidates[0]
        placements.append(Placement(index, pos + 1, pos - expected))
        out.extend(lines[cursor:pos])
        out.extend(new)
        cursor = pos + len(old)
        # `lines` is the file before this diff, as the headers' old line numbers are: only the drift
        # (where hunks actually matched vs where the headers said) carries over to later hunks
        delta += pos - expected
    out.extend(lines[cursor:])
    result = b"".join(out)
    if deletes:
        if result:
            raise HunkError("the patch deletes the file but the file holds more than the patch removes", len(diff.hunks))
        return None, placements
    return result, placements
