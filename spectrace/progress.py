"""Progress on stderr, only when stderr is a terminal and --quiet is off.

``Bar(label)`` is a callback ``(done, total)`` for work that counts; ``waiting(label)`` wraps a
call that cannot report progress and shows the elapsed time once it has taken two seconds.
"""

from __future__ import annotations

import contextlib
import sys
import threading
import time
from typing import Iterator

from spectrace import ui

DELAY_S = 2.0  # shorter waits need no indicator
CLEAR = "\r\033[K"


def _enabled() -> bool:
    return ui.level >= ui.NORMAL and sys.stderr.isatty()


class Bar:
    """A one-line progress bar."""

    def __init__(self, label: str):
        self.label = label
        self.tty = _enabled()
        self.last = 0.0

    def __call__(self, done: int, total: int):
        if not self.tty or total == 0:
            return
        now = time.monotonic()
        if done != total and now - self.last < 0.1:
            return
        self.last = now
        width = 30
        filled = int(width * done / total)
        sys.stderr.write(f"\r{self.label} [{'#' * filled}{'.' * (width - filled)}] {done}/{total}")
        if done == total:
            sys.stderr.write("\n")
        sys.stderr.flush()


_active = threading.Lock()  # one indicator at a time: a nested wait stays silent


@contextlib.contextmanager
def waiting(label: str, delay: float = DELAY_S) -> Iterator[None]:
    """``label ... 7s`` on one line while the block runs longer than ``delay``; erased at the end."""
    if not _enabled() or not _active.acquire(blocking=False):
        yield
        return
    done = threading.Event()
    shown = False
    start = time.monotonic()

    def tick():
        nonlocal shown
        if done.wait(delay):
            return
        while True:
            shown = True
            sys.stderr.write(f"{CLEAR}{label} ... {time.monotonic() - start:.0f}s")
            sys.stderr.flush()
            if done.wait(1.0):
                return

    thread = threading.Thread(target=tick, name="spectrace-progress", daemon=True)
    thread.start()
    try:
        yield
    finally:
        done.set()
        thread.join()
        if shown:
            sys.stderr.write(CLEAR)
            sys.stderr.flush()
        _active.release()
