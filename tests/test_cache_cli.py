"""``spectrace cache info`` / ``clean``: on a cache of its own, filled by spectrace itself
(``index`` of two small releases and of another tree), plus entries of other formats."""

from __future__ import annotations

import hashlib
from pathlib import Path

import pytest
from click.testing import CliRunner

from spectrace.cli import main
from spectrace.contracts.facts import FACTS_VERSION


def invoke(*args):
    return CliRunner().invoke(main, list(args))


def small_release(cache: Path, version: str) -> Path:
    root = cache / "sglang" / version
    (root / "sglang").mkdir(parents=True)
    (root / "sglang" / "__init__.py").write_text("")
    (root / "sglang" / "version.py").write_text(f'__version__ = "{version}"\n')
    (root / "sglang" / "worker.py").write_text(f"class Worker:\n    def step(self):\n        return {version!r}\n")
    return root


@pytest.fixture
def cache(tmp_path, monkeypatch):
    cache = tmp_path / "cache"
    monkeypatch.setenv("SPECTRACE_CACHE_DIR", str(cache))
    monkeypatch.setenv("SPECTRACE_OFFLINE", "1")
    kept = small_release(cache, "9.9.1")
    small_release(cache, "9.9.2")
    other = tmp_path / "other" / "pkg"
    other.mkdir(parents=True)
    (other / "__init__.py").write_text("def f():\n    return 1\n")
    for args in (["--sglang", "9.9.1"], ["--sglang", "9.9.2"], ["--source", str(other)]):
        result = invoke("index", *args)
        assert result.exit_code == 0, result.output
    # a map: its result, and a bundle of the whole summaries it completed after the light index
    result = invoke("map", "--source", str(other), "f", "-o", str(tmp_path / "f.json"))
    assert result.exit_code == 0, result.output
    facts = cache / "contracts" / f"facts-v{FACTS_VERSION}"
    facts.mkdir(parents=True)
    worker = (kept / "sglang" / "worker.py").read_bytes()
    (facts / f"{hashlib.sha1(worker).hexdigest()}.pkl").write_bytes(b"kept")
    (facts / f"{'0' * 40}.pkl").write_bytes(b"of no kept release")
    for stale in (cache / "index" / "v1-py30", cache / "contracts" / "facts-v0"):
        stale.mkdir(parents=True)
        (stale / "entry.pkl").write_bytes(b"x" * 1000)
    return cache


def files(root: Path) -> set[str]:
    return {p.relative_to(root).as_posix() for p in root.rglob("*") if p.is_file()}


def test_info_says_where_the_cache_is_and_what_it_holds(cache):
    result = invoke("cache", "info")
    assert result.exit_code == 0, result.output
    lines = result.stdout.splitlines()
    assert lines[0] == f"cache: {cache} (SPECTRACE_CACHE_DIR)"
    rows = {line[:54].strip(): line[54:].split()[0] for line in lines[1:-1]}
    assert rows == {"SGLang 9.9.1 source": "1", "SGLang 9.9.2 source": "1",
                    "index pack of a cached release": "2", "index pack of another tree": "1",
                    "map result (rebuilt when needed)": "1",
                    "index bundle": "4", "index of another format (v1-py30)": "1",
                    "contract facts": "2", "contract facts of another format (facts-v0)": "1"}
    assert lines[-1].startswith("total: ") and " MB;" in lines[-1]


def test_clean_keeps_the_named_releases_and_what_they_need(cache):
    before = files(cache)
    result = invoke("cache", "clean", "--keep-versions", "9.9.1")
    assert result.exit_code == 0, result.output
    after = files(cache)
    assert {f for f in after if f.startswith("sglang/")} == {f for f in before if f.startswith("sglang/9.9.1/")}
    assert not any("v1-py30" in f or "facts-v0" in f for f in after)
    assert [f for f in after if "/packs/" in f] and len([f for f in after if "/packs/" in f]) == 1
    assert len([f for f in after if "/bundles/" in f]) == 1
    assert [f for f in after if f.startswith("contracts/")] == [
        f for f in before if f.startswith("contracts/facts-v") and "0" * 40 not in f and "facts-v0" not in f]
    assert result.stdout.splitlines()[-1].startswith("freed ") and "(kept: SGLang 9.9.1)" in result.stdout
    warm = invoke("-v", "index", "--sglang", "9.9.1")  # what was kept still serves
    assert warm.exit_code == 0, warm.output
    assert files(cache) == after  # a warm index writes nothing new


def test_clean_without_versions_empties_it(cache):
    result = invoke("cache", "clean")
    assert result.exit_code == 0, result.output
    assert files(cache) == set()
    assert invoke("cache", "info").stdout.splitlines()[1:] == ["empty"]


def test_a_version_that_is_not_cached_is_refused_and_nothing_removed(cache):
    before = files(cache)
    result = invoke("cache", "clean", "--keep-versions", "9.9.1,1.2.3")
    assert result.exit_code == 2
    assert result.stderr.splitlines() == [
        "spectrace: --keep-versions 1.2.3: not in the cache (cached: 9.9.1, 9.9.2); nothing was removed"]
    assert files(cache) == before
