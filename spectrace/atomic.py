"""One way to replace a file: write a temporary file beside it, fsync, rename. A reader, or a crash,
sees the old bytes or the new ones, never a mix."""

from __future__ import annotations

import contextlib
import os
import shutil
from pathlib import Path


def _fsync_dir(directory: Path) -> None:
    # some filesystems refuse to open or fsync a directory: the rename is still atomic there
    with contextlib.suppress(OSError):
        fd = os.open(directory, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)


def atomic_write(path: str | os.PathLike, data: bytes | str, *, mode_from: str | os.PathLike | None = None,
                 durable: bool = True) -> None:
    """Replace ``path`` with ``data``. ``mode_from`` copies that file's permission bits; ``durable``
    fsyncs the file and its directory (a cache that can be rebuilt skips it). Raises OSError."""
    path = Path(path)
    if isinstance(data, str):
        data = data.encode()
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    try:
        with open(tmp, "wb") as fh:
            fh.write(data)
            if durable:
                fh.flush()
                os.fsync(fh.fileno())
        if mode_from is not None and Path(mode_from).exists():
            shutil.copymode(mode_from, tmp)
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            tmp.unlink()
        raise
    if durable:
        _fsync_dir(path.parent)
