"""Caches that cannot be used cost only time: one warning line on stderr per cache, then carry on."""

from __future__ import annotations

import sys

_warned: set[str] = set()


def warn_cache_unusable(what: str, exc: OSError, action: str = "write") -> None:
    if what not in _warned:
        _warned.add(what)
        print(f"spectrace: warning: cannot {action} the {what} cache ({exc}); continuing without it", file=sys.stderr)
