"""Every ``-o FILE``: checked before the work starts, written atomically, refused in one line.

A missing directory is an error, never created: a typo in ``-o`` should not leave new folders.
"""

from __future__ import annotations

import errno
import io
import os
import sys
from pathlib import Path

from spectrace.atomic import atomic_write
from spectrace.errors import SpectraceError


def _refuse(path: str, reason: str) -> SpectraceError:
    return SpectraceError(f"cannot write {path}: {reason}", exit_code=2)


def _reason(exc: OSError) -> str:
    return exc.strerror or str(exc)


def check_output(path: str) -> None:
    """Refuse an output path that cannot be written, before any analysis runs."""
    if not path:
        raise SpectraceError("cannot write to an empty file name (-o '')", exit_code=2)
    target = Path(os.path.realpath(path))  # write through a symlink, not over it
    if target.is_dir():
        raise _refuse(path, "is a directory")
    parent = target.parent
    if not parent.exists():
        raise _refuse(path, f"no such directory: {Path(path).parent}")
    if not parent.is_dir():
        raise _refuse(path, f"not a directory: {Path(path).parent}")
    if target.exists() and not target.is_file():
        if not os.access(target, os.W_OK):  # a device or FIFO such as /dev/stdout
            raise _refuse(path, os.strerror(errno.EACCES))
        return
    # access() says yes to root on /proc; only creating a file there tells
    probe = parent / f".{target.name}.{os.getpid()}.probe"
    try:
        fd = os.open(probe, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    except OSError as exc:
        if exc.errno == errno.ENOENT:  # the directory exists, yet refuses new files (/proc, /sys)
            raise _refuse(path, f"{Path(path).parent} does not take new files") from exc
        raise _refuse(path, _reason(exc)) from exc
    os.close(fd)
    os.unlink(probe)


def check_appendable(path: str) -> None:
    """Refuse a file to be appended to (a report that processes add to) before anything runs:
    its directory must exist and take new files; an existing file must be a writable file."""
    if not path:
        raise SpectraceError("cannot write to an empty file name", exit_code=2)
    target = Path(os.path.realpath(path))
    if target.exists():
        if target.is_dir():
            raise _refuse(path, "is a directory")
        if not os.access(target, os.W_OK):
            raise _refuse(path, os.strerror(errno.EACCES))
        return
    check_output(path)


def write_output(path: str, data: str | bytes) -> None:
    """Replace ``path`` with ``data`` (its permission bits kept); SpectraceError in one line if it cannot."""
    check_output(path)
    target = Path(os.path.realpath(path))
    try:
        if target.exists() and not target.is_file():  # a device or FIFO cannot be renamed over
            with open(target, "wb" if isinstance(data, bytes) else "w") as fh:
                fh.write(data)
        else:
            atomic_write(target, data, mode_from=target)
    except OSError as exc:
        raise _refuse(path, _reason(exc)) from exc


def output_option_callback(ctx, param, value):
    """click callback for ``-o``: the same one-line refusal for every command."""
    if value is not None:
        check_output(value)
    return value


def guard_stdout() -> None:
    """Make a reader that goes away (``spectrace ... | head``) an error every command sees.

    With ``PYTHONUNBUFFERED`` (or ``python -u``) ``sys.stdout`` writes straight to the file, and a
    write the pipe took only part of is dropped without an error, so a command exits 0 with its
    output cut. A buffered writer on the same descriptor retries the rest and raises
    BrokenPipeError, which the CLI turns into exit 141 (docs/cli.md). Lines still go out as they
    are written.
    """
    stream = sys.stdout
    if not isinstance(stream, io.TextIOWrapper) or not isinstance(stream.buffer, io.RawIOBase):
        return  # already buffered, or not a real file (click's test runner)
    try:
        fd = stream.fileno()
    except (OSError, ValueError):
        return
    stream.flush()
    raw = io.FileIO(fd, "w", closefd=False)
    sys.stdout = io.TextIOWrapper(io.BufferedWriter(raw), encoding=stream.encoding, errors=stream.errors,
                                  line_buffering=True, write_through=True)
