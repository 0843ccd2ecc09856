"""How chatty the CLI is on stderr: ``-q`` keeps only errors and warnings, ``-v`` adds detail.

Informational lines ("using SGLang 0.5.9 ...", "wrote out.json") and progress go through here;
errors and warnings do not, so ``--quiet`` never hides why a command failed.
"""

from __future__ import annotations

import click

QUIET, NORMAL, VERBOSE = 0, 1, 2

level = NORMAL


def set_level(new: int) -> None:
    global level
    level = new


def info(message: str) -> None:
    """A line a person at a terminal wants and a script does not (suppressed by --quiet)."""
    if level >= NORMAL:
        click.echo(message, err=True)


def detail(message: str) -> None:
    """Timing and cache statistics (only with --verbose)."""
    if level >= VERBOSE:
        click.echo(message, err=True)


def plural(count: int, word: str, words: str | None = None) -> str:
    """``1 file``, ``2 files``: the count with its noun agreeing."""
    return f"{count} {word if count == 1 else words or word + 's'}"
