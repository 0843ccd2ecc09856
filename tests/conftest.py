"""Shared fixtures: real SGLang source fetched from PyPI once per run and cached, and the bench's
HTTP stand-in (tests/http_standin.py) served on a free port.

The cache is SPECTRACE_CACHE_DIR when set (CI sets it to a directory it keeps for the run),
else the user cache: a version is downloaded with ``pip download --no-deps`` the first time.
"""

from __future__ import annotations

import shutil
import threading
from pathlib import Path

import pytest

from spectrace.source import SglangSource, resolve_source

from http_standin import StandInApi, StandInServer

OLD = "0.5.9"      # the version of the original investigation
MID = "0.5.12"     # same scheduler contract as 0.5.9, runs on the lent H200's torch
RECENT = "0.5.23"  # a recent release with the drift


@pytest.fixture(scope="session")
def sglang_source():
    """``sglang_source("0.5.9") -> SglangSource`` (downloaded once, then reused)."""
    seen: dict[str, SglangSource] = {}

    def get(version: str) -> SglangSource:
        if version not in seen:
            seen[version] = resolve_source(version)
        return seen[version]

    return get


@pytest.fixture
def sglang_copy(sglang_source, tmp_path):
    """``sglang_copy("0.5.9", subdirs=(...)) -> Path``: a writable copy of real source in tmp.

    ``subdirs`` limits the copy to some package folders (relative to the python root, e.g.
    ``"sglang/srt/managers"``) plus every ``__init__.py`` on their way, to keep copies cheap.
    """

    def copy(version: str, subdirs: tuple[str, ...] | None = None) -> Path:
        src = sglang_source(version)
        dest = tmp_path / f"sglang-{version}"
        if subdirs is None:
            shutil.copytree(src.root / "sglang", dest / "sglang")
        else:
            for sub in subdirs:
                shutil.copytree(src.root / sub, dest / sub, dirs_exist_ok=True)
                parts = Path(sub).parts
                for i in range(1, len(parts)):
                    init = src.root.joinpath(*parts[:i], "__init__.py")
                    if init.exists():
                        (dest.joinpath(*parts[:i])).mkdir(parents=True, exist_ok=True)
                        shutil.copy2(init, dest.joinpath(*parts[:i], "__init__.py"))
            for extra in ("_version.py", "version.py"):
                f = src.root / "sglang" / extra
                if f.exists():
                    shutil.copy2(f, dest / "sglang" / extra)
        return dest

    return copy



def _trees_under(base: Path, depth: int = 4):
    """Directories a test may have analysed: tmp copies of a release, --source packages."""
    if depth < 0:
        return
    try:
        children = [c for c in base.iterdir() if c.is_dir() and not c.is_symlink()]
    except OSError:
        return
    for child in children:
        yield child
        if child.name not in ("sglang", "__pycache__", ".spectrace"):
            yield from _trees_under(child, depth - 1)


@pytest.fixture(scope="session", autouse=True)
def no_index_packs_of_temporary_trees(tmp_path_factory):
    """The index keeps one pack per analysed tree, keyed by its path; a temporary copy's pack is
    never read again. Left in place, a run of the suite adds about 450 MB to the cache."""
    yield
    from spectrace.tracer.summary_cache import SummaryCache

    cache = SummaryCache()
    for tree in _trees_under(tmp_path_factory.getbasetemp()):
        cache.pack_path(tree).unlink(missing_ok=True)


def pytest_collection_modifyitems(config, items):
    """Tests that need a real SGLang release (fetched and analysed whole) are `slow`:
    `pytest -m "not slow"` runs the fast unit tests alone."""
    for item in items:
        if {"sglang_source", "sglang_copy"} & set(getattr(item, "fixturenames", ())):
            item.add_marker(pytest.mark.slow)


@pytest.fixture
def server():
    """The URL of a running stand-in of SGLang's HTTP API, for the bench's HTTP driver."""
    httpd = StandInServer(("127.0.0.1", 0), StandInApi)
    # shutdown() waits for serve_forever's next poll: 0.5 s by default, per test
    thread = threading.Thread(target=httpd.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{httpd.server_address[1]}"
    httpd.shutdown()
    httpd.server_close()
