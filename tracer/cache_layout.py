"""Where the index cache keeps its files, with the standard library alone (a warm ``map`` answered
from its result cache finds them without importing the parser's modules)."""

from __future__ import annotations

import hashlib
import sys
from pathlib import Path

from spectrace.source import cache_dir

SUMMARY_FORMAT = 22  # bump when the summary layout changes: old cache entries are ignored


def index_cache_root() -> Path:
    return cache_dir() / "index" / f"v{SUMMARY_FORMAT}-py{sys.version_info[0]}{sys.version_info[1]}"


# what is kept beside a tree's pack, named by these prefixes and a key
MAP_RESULT_PREFIX = "map-"
TEXT_SCANS_PREFIX = "scans-"


def pack_path(cache_root: Path, tree_root: Path) -> Path:
    """The tree's pack; what else is kept per tree (text scans, map results) lies beside it."""
    key = hashlib.blake2b(str(tree_root.resolve()).encode(), digest_size=10).hexdigest()
    return cache_root / "packs" / f"{key}.pkl"
