"""``spectrace map`` answered from its result cache: the same bytes for the same map of an
unchanged tree, and a map built anew after any change to a file of the tree."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from click.testing import CliRunner

from spectrace.cli import main
from spectrace.tracer import map_cache

FROM_CACHE = "from the result cache"
BUILT = "graph built in"

APP = '''from pkg.helpers import helper


def main():
    helper()
    first()


def first():
    return 1
'''
HELPERS = '''def helper():
    return 2
'''


@pytest.fixture
def tree(tmp_path, monkeypatch):
    monkeypatch.setenv("SPECTRACE_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.delenv("SPECTRACE_NO_CACHE", raising=False)
    monkeypatch.delenv("SPECTRACE_MAP_RESULT_CACHE", raising=False)
    pkg = tmp_path / "src" / "pkg"
    pkg.mkdir(parents=True)
    (pkg / "__init__.py").write_text("")
    (pkg / "app.py").write_text(APP)
    (pkg / "helpers.py").write_text(HELPERS)
    return pkg


def run_map(pkg: Path, *extra: str):
    """(the json map, stdout and stderr together) of ``main`` in the package, at --verbose."""
    out = pkg.parent.parent / "map.json"
    r = CliRunner().invoke(main, ["-v", "map", "--source", str(pkg), "pkg.app.main", "--depth", "1", "-o", str(out),
                                  *extra], catch_exceptions=False)
    assert r.exit_code == 0, r.output
    return out.read_bytes(), r.output


def callees(data: bytes) -> set[str]:
    return {e["target"] for e in json.loads(data)["edges"]}


def test_the_same_map_again_is_read_back_byte_for_byte(tree):
    first, said = run_map(tree)
    assert BUILT in said and FROM_CACHE not in said
    again, said_again = run_map(tree)
    assert FROM_CACHE in said_again and BUILT not in said_again
    assert again == first
    # the summary line is the same words as when it was built
    summary = [ln for ln in said.splitlines() if "functions," in ln]
    assert summary and summary == [ln for ln in said_again.splitlines() if "functions," in ln]


def test_an_edited_file_builds_the_map_again(tree):
    first, _ = run_map(tree)
    assert "pkg.app.first" in callees(first)
    (tree / "app.py").write_text(APP.replace("    first()\n", "    second()\n") + "\n\ndef second():\n    pass\n")
    edited, said = run_map(tree)
    assert BUILT in said
    assert "pkg.app.second" in callees(edited) and "pkg.app.first" not in callees(edited)


def test_an_edit_of_the_same_size_with_the_old_mtime_makes_a_new_key(tree):
    """The key is stricter than the index's pack (size and mtime): the file's ctime moved."""
    app = tree / "app.py"
    run_map(tree)
    before = app.stat()
    text = APP.replace("first()\n", "frist()\n")
    assert len(text) == len(APP)
    app.write_text(text)
    os.utime(app, ns=(before.st_atime_ns, before.st_mtime_ns))
    assert app.stat().st_size == before.st_size and app.stat().st_mtime_ns == before.st_mtime_ns
    _, said = run_map(tree)
    assert BUILT in said


def test_an_added_and_a_removed_file_build_the_map_again(tree):
    with_helpers, _ = run_map(tree)
    assert "pkg.helpers.helper" in callees(with_helpers)
    (tree / "helpers.py").unlink()
    removed, said = run_map(tree)
    assert BUILT in said and "pkg.helpers.helper" not in callees(removed)
    (tree / "helpers.py").write_text(HELPERS)
    added, said = run_map(tree)
    assert BUILT in said and added == with_helpers


def test_a_tree_back_in_a_state_seen_before_gets_that_state_s_map(tree):
    helpers = tree / "helpers.py"
    helpers.rename(tree.parent / "helpers.py")
    without, _ = run_map(tree)
    (tree.parent / "helpers.py").rename(helpers)
    run_map(tree)
    helpers.rename(tree.parent / "helpers.py")  # every file as it was for the first map
    again, said = run_map(tree)
    assert FROM_CACHE in said and again == without


def test_a_new_file_that_no_map_reaches_still_makes_a_new_key(tree):
    run_map(tree)
    (tree / "unrelated.py").write_text("x = 1\n")
    _, said = run_map(tree)
    assert BUILT in said


def test_other_arguments_are_another_map(tree):
    depth1, _ = run_map(tree)
    out = tree.parent.parent / "map.json"
    r = CliRunner().invoke(main, ["-v", "map", "--source", str(tree), "pkg.app.main", "--depth", "0",
                                  "-o", str(out)], catch_exceptions=False)
    assert r.exit_code == 0 and BUILT in r.output
    assert out.read_bytes() != depth1
    _, said = run_map(tree, "--format", "text")
    assert BUILT in said


def test_no_result_cache_and_its_variable_build_every_time(tree, monkeypatch):
    first, _ = run_map(tree)
    again, said = run_map(tree, "--no-result-cache")
    assert BUILT in said and again == first
    monkeypatch.setenv("SPECTRACE_MAP_RESULT_CACHE", "0")
    _, said = run_map(tree)
    assert BUILT in said


def test_a_damaged_result_is_built_again(tree):
    first, _ = run_map(tree)
    kept = list((Path(os.environ["SPECTRACE_CACHE_DIR"])).rglob("map-*.pkl"))
    assert len(kept) == 1
    kept[0].write_bytes(b"not a pickle")
    again, said = run_map(tree)
    assert BUILT in said and again == first
    assert FROM_CACHE in run_map(tree)[1]


def test_a_failed_map_is_not_kept(tree):
    for _ in range(2):
        r = CliRunner().invoke(main, ["map", "--source", str(tree), "pkg.app.nothing", "--format", "json"])
        assert r.exit_code == 2 and "unknown root" in r.output
    assert not list(Path(os.environ["SPECTRACE_CACHE_DIR"]).rglob("map-*.pkl"))


def test_only_the_most_recently_used_results_are_kept(tree, monkeypatch):
    monkeypatch.setattr(map_cache, "KEEP", 2)
    for depth in ("0", "1", "2"):
        r = CliRunner().invoke(main, ["map", "--source", str(tree), "pkg.app.main", "--depth", depth,
                                      "--format", "json"], catch_exceptions=False)
        assert r.exit_code == 0
    assert len(list(Path(os.environ["SPECTRACE_CACHE_DIR"]).rglob("map-*.pkl"))) == 2
