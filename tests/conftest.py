"""Shared fixtures: real SGLang source fetched from PyPI once per run and cached, and the bench's
HTTP stand-in (tests/http_standin.py) served on a free port.

The cache is SPECTRACE_CACHE_DIR when set (CI sets it to a directory it keeps for the run),
else the user cache: a version is downloaded with ``pip download --no-deps`` the first time.
"""

from __future__ import annotations

import gc
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


def copy_release(source: SglangSource, dest: Path, subdirs: tuple[str, ...] | None = None) -> Path:
    """A writable copy of ``source``'s package at ``dest``: all of ``sglang/``, or only ``subdirs``
    (relative to the python root, e.g. ``"sglang/srt/managers"``) plus every ``__init__.py`` on
    their way and the version files."""
    if subdirs is None:
        shutil.copytree(source.root / "sglang", dest / "sglang")
        return dest
    for sub in subdirs:
        shutil.copytree(source.root / sub, dest / sub, dirs_exist_ok=True)
        parts = Path(sub).parts
        for i in range(1, len(parts)):
            init = source.root.joinpath(*parts[:i], "__init__.py")
            if init.exists():
                (dest.joinpath(*parts[:i])).mkdir(parents=True, exist_ok=True)
                shutil.copy2(init, dest.joinpath(*parts[:i], "__init__.py"))
    for extra in ("_version.py", "version.py"):
        f = source.root / "sglang" / extra
        if f.exists():
            shutil.copy2(f, dest / "sglang" / extra)
    return dest


@pytest.fixture
def sglang_copy(sglang_source, tmp_path):
    """``sglang_copy("0.5.9", subdirs=(...)) -> Path``: a writable copy of real source in tmp.

    ``subdirs`` limits the copy to some package folders (relative to the python root, e.g.
    ``"sglang/srt/managers"``) plus every ``__init__.py`` on their way, to keep copies cheap.
    """

    def copy(version: str, subdirs: tuple[str, ...] | None = None) -> Path:
        return copy_release(sglang_source(version), tmp_path / f"sglang-{version}", subdirs)

    return copy


@pytest.fixture(scope="session")
def patched_release(sglang_source, tmp_path_factory):
    """``patched_release("0.5.12") -> Path``: one copy of the release's ``sglang/srt`` per run,
    the shipped dynamic-disable series applied, for tests that only read the patched files. Its
    files are read-only, so that a test that writes fails instead of changing what the others read."""
    from spectrace.patches import engine
    from spectrace.patches.series import SERIES_DIR_ENV

    trees: dict[str, Path] = {}

    def get(version: str) -> Path:
        if version not in trees:
            tree = copy_release(sglang_source(version), tmp_path_factory.mktemp(f"patched-{version}"), ("sglang/srt",))
            with pytest.MonkeyPatch.context() as env:
                env.delenv(SERIES_DIR_ENV, raising=False)
                engine.apply(tree, "dynamic-disable", use_contracts=False)
            for path in (tree / "sglang").rglob("*"):
                if path.is_file():
                    path.chmod(0o444)
            trees[version] = tree
        return trees[version]

    return get


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


def remove_index_packs(base: Path) -> None:
    """The index keeps one pack per analysed tree, keyed by its path; a temporary copy's pack is
    never read again. Left in place, a run of the suite adds about 450 MB to the cache."""
    from spectrace.tracer.summary_cache import SummaryCache

    cache = SummaryCache()
    for tree in _trees_under(base):
        cache.pack_path(tree).unlink(missing_ok=True)


@pytest.hookimpl(tryfirst=True)
def pytest_runtest_teardown(item):
    """A passed test's tmp_path is removed as its fixtures are torn down (tmp_path_retention_policy
    in pyproject.toml), which runs after this: the packs of the trees it analysed there go first."""
    tmp = getattr(item, "funcargs", {}).get("tmp_path")
    if tmp is not None:
        remove_index_packs(tmp)


@pytest.fixture(autouse=True)
def cyclic_gc_on_after_each_test():
    """An analysis command run in-process (click's CliRunner) switches the cyclic GC off, as it
    does for its own short-lived process; a test worker lives on and must collect its cycles."""
    yield
    if not gc.isenabled():
        gc.enable()


@pytest.fixture(scope="session", autouse=True)
def no_index_packs_of_temporary_trees(tmp_path_factory):
    """The packs of trees in session-wide folders (tmp_path_factory.mktemp)."""
    yield
    remove_index_packs(tmp_path_factory.getbasetemp())


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
