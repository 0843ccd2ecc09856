"""One error type for everything a user can get wrong: the CLI prints it as one line."""

from __future__ import annotations

MESSAGE_LIMIT = 400  # characters; an exception's text can be a whole parsed syntax tree


class SpectraceError(Exception):
    """A user-facing failure: bad input, missing source, unreachable network.

    The CLI prints ``spectrace: <message>`` and exits with ``exit_code``.
    """

    exit_code = 2

    def __init__(self, message: str, exit_code: int | None = None):
        super().__init__(message)
        if exit_code is not None:
            self.exit_code = exit_code


class Interrupted(SpectraceError):
    """Ctrl-C, reported with what it left behind (e.g. "the tree is unchanged (rolled back)")."""

    exit_code = 130


def one_line(text: object, limit: int = MESSAGE_LIMIT) -> str:
    """``text`` on one line of at most ``limit`` characters (plus a note of how much was cut).

    Line breaks and the indentation around them become one space; spaces inside a line stay,
    since a message may quote a line of code (a hunk that does not match)."""
    flat = " ".join(part.strip() for part in str(text).splitlines() if part.strip())
    if len(flat) <= limit:
        return flat
    return f"{flat[:limit]}... ({len(flat) - limit} more characters)"


def describe(exc: BaseException) -> str:
    """An exception as one capped line: ``Type: message``, or the OSError's reason and file."""
    if isinstance(exc, OSError) and exc.strerror:
        return one_line(f"{exc.strerror}: {exc.filename}" if exc.filename else exc.strerror)
    text = str(exc)
    return one_line(f"{type(exc).__name__}: {text}" if text else type(exc).__name__)
