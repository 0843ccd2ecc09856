"""Ctrl-C: the command reports it once and exits 130; process-pool workers stay silent.

The terminal sends SIGINT to the whole process group. A forked pool worker would print its own
KeyboardInterrupt traceback; instead workers ignore SIGINT, the parent alone raises
KeyboardInterrupt, and the pool (``process_pool``) cancels the tasks not started yet, lets the
running ones finish and shuts down.
(Terminating the workers breaks the pool, and Python 3.11's pool manager thread then fails on
the futures the parent cancelled, printing a traceback of its own.)
"""

from __future__ import annotations

import contextlib
import os
import signal
import threading
from typing import TYPE_CHECKING, Iterator

if TYPE_CHECKING:  # imported where a pool starts: multiprocessing costs every command's start 20 ms
    from concurrent.futures import ProcessPoolExecutor

_active = False  # inherited by forked children: only a CLI command's workers ignore SIGINT
_fork_hook = False


def _worker_ignores_sigint() -> None:
    if _active:
        signal.signal(signal.SIGINT, signal.SIG_IGN)


def _main_thread() -> bool:
    return threading.current_thread() is threading.main_thread()


@contextlib.contextmanager
def handled() -> Iterator[None]:
    """For the length of a command: pool workers forked meanwhile leave SIGINT to this process."""
    global _active, _fork_hook
    if not _main_thread() or signal.getsignal(signal.SIGINT) is signal.SIG_IGN:
        yield  # a background job started with SIGINT ignored keeps it that way
        return
    if not _fork_hook:
        os.register_at_fork(after_in_child=_worker_ignores_sigint)
        _fork_hook = True
    was_active, _active = _active, True
    try:
        yield
    finally:
        _active = was_active


@contextlib.contextmanager
def deferred() -> Iterator[list]:
    """Hold Ctrl-C while a rollback or a short must-finish step runs. Yields a list that holds
    the signal number if one came, so the caller can report the interruption afterwards."""
    got: list = []
    if not _main_thread():
        yield got
        return
    previous = signal.signal(signal.SIGINT, lambda signum, frame: got.append(signum))
    try:
        yield got
    finally:
        signal.signal(signal.SIGINT, previous)


@contextlib.contextmanager
def process_pool(workers: int) -> Iterator[ProcessPoolExecutor]:
    """A process pool that, when the body is interrupted, drops the tasks not started yet
    (``with ProcessPoolExecutor()`` alone would run every submitted task before exiting)."""
    from concurrent.futures import ProcessPoolExecutor

    pool = ProcessPoolExecutor(max_workers=workers)
    try:
        yield pool
    except BaseException:
        pool.shutdown(wait=True, cancel_futures=True)
        raise
    pool.shutdown(wait=True)
