"""The shims' report: JSON lines, one ``os.write`` per event on an ``O_APPEND`` descriptor, so lines
from several processes (TP ranks, restarts) interleave whole and a killed process loses nothing
but the line it was writing. ``spectrace report`` (``cli.load_reports``) reads them."""

from __future__ import annotations

import json
import os
import sys
import time
from pathlib import Path


class ReportWriter:
    def __init__(self, path: str | None):
        self.path = path.replace("{pid}", str(os.getpid())) if path else None
        self.fd = None
        self.failed_writes = 0
        if self.path:
            Path(self.path).parent.mkdir(parents=True, exist_ok=True)
            self.fd = os.open(self.path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)

    def write(self, event: dict) -> None:
        if self.fd is None:
            return
        event.setdefault("pid", os.getpid())
        event.setdefault("time", round(time.time(), 3))
        try:
            os.write(self.fd, (json.dumps(event, default=str) + "\n").encode())
        except OSError as exc:
            # the report itself failed (disk full, say): stderr is the only place left to say so
            self.failed_writes += 1
            if self.failed_writes == 1:
                print(f"[spectrace] cannot write the report {self.path}: {exc!r} (further failures "
                      "are not printed)", file=sys.stderr, flush=True)

    def close(self) -> None:
        if self.fd is not None:
            os.close(self.fd)
            self.fd = None
