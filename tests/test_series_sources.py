"""The dynamic-disable series is generated from sources kept in the repository
(patches/dynamic-disable/src/ and edits/, by tools/make_series.py): the shipped patches, series and
manifest must be exactly what the generator writes from them, and the added modules must be clean
Python.  Lint: compile() plus a small stdlib check (unused imports, unused local variables) always;
ruff with src/ruff.toml as well when it is installed."""

from __future__ import annotations

import ast
import datetime
import importlib.util
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
SERIES_DIR = ROOT / "patches/dynamic-disable"
SRC = SERIES_DIR / "src"
SRC_MODULES = sorted(SRC.rglob("*.py"))


@pytest.fixture
def make_series():
    spec = importlib.util.spec_from_file_location("make_series_under_test", SERIES_DIR / "tools/make_series.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _versions():
    spec = importlib.util.spec_from_file_location("make_series_versions", SERIES_DIR / "tools/make_series.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return sorted(module.PATCHES)


@pytest.mark.parametrize("version", _versions())
def test_the_shipped_series_is_what_its_sources_generate(version, make_series, sglang_source, tmp_path):
    """Regenerated into a temp dir (hashes from the real pristine release), every file equals the
    shipped one byte for byte: an edit to src/ or edits/ without regenerating, or to a .patch or the
    manifest by hand, fails here."""
    pristine = sglang_source(version).root
    make_series.generate(version, tmp_path, pristine)
    shipped = SERIES_DIR / version
    names = {p.name for p in tmp_path.iterdir()} | {p.name for p in shipped.iterdir()}
    stale = sorted(n for n in names if not (shipped / n).is_file() or not (tmp_path / n).is_file()
                   or (shipped / n).read_bytes() != (tmp_path / n).read_bytes())
    assert not stale, f"run: python patches/dynamic-disable/tools/make_series.py {version} ({stale})"


@pytest.mark.skipif(shutil.which("patch") is None, reason="needs patch(1)")
@pytest.mark.parametrize("version", _versions())
def test_the_patches_apply_to_the_release_and_add_the_src_files(version, make_series, sglang_source):
    make_series.trial_apply(version, SERIES_DIR / version, sglang_source(version).root)


def _added_lines(version: str) -> list[str]:
    """Every added line of every patch, blank ones too, as SGLang's own formatter leaves them
    (tests/test_series_format.py holds the patches to it)."""
    return [line for patch in sorted((SERIES_DIR / version).glob("*.patch"))
            for line in patch.read_text().splitlines() if line.startswith("+") and not line.startswith("+++ ")]


@pytest.mark.parametrize("version", ["0.5.17", "0.5.23"])
def test_the_core_does_not_grow(version):
    """The core's size as written plainly (docs/patch-design-0.5.17.md, "Size"): a change that adds
    lines raises this bound on purpose, with the page's figures."""
    assert 300 < len(_added_lines(version)) <= 575


@pytest.mark.xfail(strict=True, reason="the 450-line goal is open: docs/patch-design-0.5.17.md, Size")
@pytest.mark.parametrize("version", ["0.5.17", "0.5.23"])
def test_the_core_adds_at_most_450_lines(version):
    """A core an SGLang maintainer can read, in at most 450 added lines written plainly."""
    assert len(_added_lines(version)) <= 450


@pytest.mark.parametrize("version", _versions())
def test_manifest_arguments_and_added_files_come_from_the_code(version, make_series):
    """server_args: every parser.add_argument the series adds to server_args.py, none typed by hand."""
    from spectrace.patches.series import load_series

    manifest = load_series("dynamic-disable", version, ROOT / "patches").manifest
    texts = list(make_series.patch_texts(version).values())
    assert manifest["server_args"] == make_series.server_args(texts)
    assert "--speculative-dynamic-disable" in manifest["server_args"]
    if version in ("0.5.9", "0.5.12"):
        assert "--speculative-disable-load-rule" in manifest["server_args"]
        assert ("--speculative-disable-draft" in manifest["server_args"]) == (version == "0.5.12")
    else:  # the core: at most three new server arguments
        assert manifest["server_args"] == ["--speculative-dynamic-disable", "--speculative-disable-above-bs"]
    # src/<version>/ keeps the added modules without their sglang/srt/ prefix
    assert set(manifest["adds_files"]) == {"sglang/srt/" + p.relative_to(SRC / version).as_posix()
                                           for p in (SRC / version).rglob("*.py")}


def test_server_args_are_read_from_added_annotated_fields_too(make_series):
    """0.5.17 declares an option as an annotated ServerArgs field, not a parser call."""
    diff = ("--- a/sglang/srt/server_args.py\n+++ b/sglang/srt/server_args.py\n@@ -1,2 +1,6 @@\n"
            "     kept: A[int, \"old\"] = 1\n+    speculative_new_flag: A[\n+        bool,\n+        \"help\",\n+    ] = False\n")
    assert make_series.server_args([diff]) == ["--speculative-new-flag"]


def test_server_args_are_read_from_the_added_parser_lines_only(make_series):
    diff = ("--- a/sglang/srt/server_args.py\n+++ b/sglang/srt/server_args.py\n@@ -1,2 +1,6 @@\n"
            " parser.add_argument(\"--kept\")\n+        parser.add_argument(\"--one\", type=int)\n"
            "+        parser.add_argument(\n+            '--two',\n+        )\n x\n"
            "--- a/sglang/srt/other.py\n+++ b/sglang/srt/other.py\n@@ -1 +1,2 @@\n x\n"
            "+parser.add_argument(\"--elsewhere\")\n")
    assert make_series.server_args([diff]) == ["--one", "--two"]


@pytest.mark.skipif(shutil.which("diff") is None, reason="needs GNU diff")
@pytest.mark.parametrize("text", ["a\nb\n", "one line\n", "no newline\nat end", "x"])
def test_a_new_file_diff_is_what_gnu_diff_writes(make_series, tmp_path, text):
    (tmp_path / "f.py").write_text(text)
    proc = subprocess.run(["diff", "-u", "--label", "/dev/null", "--label", "b/sglang/f.py", "/dev/null",
                           str(tmp_path / "f.py")], capture_output=True, text=True)
    assert make_series.new_file_diff("sglang/f.py", text.encode()) == proc.stdout


def test_a_removed_line_that_looks_like_a_file_header_does_not_split_a_diff(make_series):
    a = "--- a/sglang/a.py\n+++ b/sglang/a.py\n@@ -1,2 +1 @@\n--- a/sglang/x.py\n keep\n"
    b = "--- a/sglang/b.py\n+++ b/sglang/b.py\n@@ -1 +1 @@\n-old\n\\ No newline at end of file\n+new\n"
    assert make_series.split_diff(a + b, "t") == {"sglang/a.py": a, "sglang/b.py": b}


@pytest.mark.skipif(shutil.which("patch") is None or shutil.which("diff") is None, reason="needs patch and diff")
def test_an_edited_tree_enters_the_repository_and_a_stale_series_is_caught(make_series, tmp_path, monkeypatch):
    """--from-tree: a new file goes to src/, an edit becomes the stem's .diff, headers are stubbed;
    the series generated from them applies to the pristine tree and gives the edited one; --check
    then passes, and fails once src/ changes without regenerating."""
    pristine, edited, home = tmp_path / "pristine", tmp_path / "edited", tmp_path / "series"
    (pristine / "sglang/srt").mkdir(parents=True)
    (pristine / "sglang/srt/server_args.py").write_text("class A:\n    x = 1\n\n\ndef parse(parser):\n    pass\n")
    shutil.copytree(pristine, edited)
    (edited / "sglang/srt/server_args.py").write_text(
        "class A:\n    x = 1\n\n\ndef parse(parser):\n    parser.add_argument(\"--new-flag\")\n"
        "    os.environ.get(\"SGLANG_SPEC_DISABLE_NEW\")\n")
    (edited / "sglang/srt/added.py").write_text("VALUE = 1\n")
    monkeypatch.setattr(make_series, "HERE", home)
    monkeypatch.setitem(make_series.PATCHES, "9.9", [("0001-add", ["sglang/srt/added.py"]),
                                                      ("0002-args", ["sglang/srt/server_args.py"])])
    assert make_series.main(["9.9", "--pristine", str(pristine), "--from-tree", str(edited)]) == 0
    assert (home / "src/9.9/added.py").read_text() == "VALUE = 1\n"
    assert not (home / "edits/9.9/0001-add.diff").exists()
    assert (home / "edits/9.9/0002-args.diff").read_text().startswith("--- a/sglang/srt/server_args.py\n")
    assert "Description: args\n" in (home / "edits/9.9/0002-args.header").read_text()
    assert (home / "9.9/series").read_text().split("\n")[1:3] == ["0001-add.patch", "0002-args.patch"]
    manifest = (home / "9.9/manifest.toml").read_text()
    assert 'server_args = ["--new-flag"]' in manifest and 'environment = ["SGLANG_SPEC_DISABLE_NEW"]' in manifest
    assert 'adds_files = ["sglang/srt/added.py"]' in manifest and 'path = "sglang/srt/server_args.py"' in manifest

    assert make_series.main(["9.9", "--pristine", str(pristine), "--check"]) == 0
    (home / "src/9.9/added.py").write_text("VALUE = 2\n")
    assert make_series.main(["9.9", "--pristine", str(pristine), "--check"]) == 1
    (home / "src/9.9/added.py").write_text("VALUE = 1\n")
    # importing again dates only the patches whose content changed
    for stem in ("0001-add", "0002-args"):
        header = home / f"edits/9.9/{stem}.header"
        header.write_text(re.sub(r"Last-Update: .*", "Last-Update: 2000-01-01", header.read_text()))
    with (edited / "sglang/srt/server_args.py").open("a") as f:
        f.write("    return parser\n")
    assert make_series.main(["9.9", "--pristine", str(pristine), "--from-tree", str(edited)]) == 0
    assert "Last-Update: 2000-01-01" in (home / "edits/9.9/0001-add.header").read_text()
    assert f"Last-Update: {datetime.date.today().isoformat()}" in (home / "edits/9.9/0002-args.header").read_text()
    # a changed file that no patch of the table takes is refused, naming it
    (edited / "sglang/srt/stray.py").write_text("")
    with pytest.raises(make_series.MakeSeriesError, match="changed but in no patch: sglang/srt/stray.py"):
        make_series.main(["9.9", "--pristine", str(pristine), "--from-tree", str(edited)])


def unused_names(path: Path) -> list[str]:
    """pyflakes' two commonest findings, with the stdlib: imports never used (a name counts as used
    if loaded anywhere or named in a string, as quoted annotations and __all__ do) and locals
    assigned (plain name targets) but never read in their function."""
    source = path.read_text()
    compile(source, str(path), "exec")
    tree = ast.parse(source, str(path))
    loaded = {n.id for n in ast.walk(tree) if isinstance(n, ast.Name) and not isinstance(n.ctx, ast.Store)}
    strings = " ".join(n.value for n in ast.walk(tree) if isinstance(n, ast.Constant) and isinstance(n.value, str))
    problems = []
    for node in ast.walk(tree):
        if isinstance(node, (ast.Import, ast.ImportFrom)) and getattr(node, "module", None) != "__future__":
            for alias in node.names:
                name = (alias.asname or alias.name).split(".")[0]
                if name not in loaded and not re.search(rf"\b{re.escape(name)}\b", strings):
                    problems.append(f"{path.name}:{node.lineno}: {name} imported but unused")
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            declared = {n for s in ast.walk(node) if isinstance(s, (ast.Global, ast.Nonlocal)) for n in s.names}
            reads = {n.id for n in ast.walk(node) if isinstance(n, ast.Name) and not isinstance(n.ctx, ast.Store)}
            for stmt in _own_statements(node):
                targets = stmt.targets if isinstance(stmt, ast.Assign) else [stmt.target]
                for t in targets:
                    if isinstance(t, ast.Name) and t.id not in reads and t.id not in declared and not t.id.startswith("_"):
                        problems.append(f"{path.name}:{stmt.lineno}: local {t.id} assigned but never used")
    return problems


def _own_statements(func):
    """The assignments of ``func`` itself (not of the functions and classes nested in it)."""
    todo = list(func.body)
    while todo:
        node = todo.pop()
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)):
            continue
        if isinstance(node, ast.Assign) or (isinstance(node, ast.AnnAssign) and node.value is not None):
            yield node
        todo.extend(ast.iter_child_nodes(node))


def test_the_stdlib_lint_finds_what_it_is_for(tmp_path):
    bad = tmp_path / "bad.py"
    bad.write_text("import os\nimport sys\nfrom typing import Optional\n\n\ndef f(x) -> 'Optional[int]':\n"
                   "    y = 1\n    z = 2\n    def g():\n        return z\n    return g, sys\n")
    assert unused_names(bad) == ["bad.py:1: os imported but unused", "bad.py:7: local y assigned but never used"]


@pytest.mark.parametrize("path", SRC_MODULES, ids=lambda p: str(p.relative_to(SRC)))
def test_the_added_modules_compile_and_leave_nothing_unused(path):
    assert unused_names(path) == []


@pytest.mark.skipif(importlib.util.find_spec("ruff") is None, reason="ruff is not installed (not in the test extra)")
def test_the_added_modules_pass_ruff():
    proc = subprocess.run([sys.executable, "-m", "ruff", "check", "--no-cache", "--config", str(SRC / "ruff.toml"), str(SRC)],
                          capture_output=True, text=True)
    assert proc.returncode == 0, proc.stdout + proc.stderr
