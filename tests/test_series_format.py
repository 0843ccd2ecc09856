"""The 0.5.17 and 0.5.23 cores, and the draft-steps series over them, are formatted as SGLang
formats its own code: its pre-commit runs isort 5.13.2 (.isort.cfg: profile black, sglang first
party) and then black 24.10.0 (88 columns, Python >= 3.10 as sglang requires). The modules the
series add must come out of both unchanged. Some of SGLang's own files do not (the releases are not
all formatter-clean), so for an edited file the rule is that no change the formatter would make
touches a line the series adds. (The 0.5.9 and 0.5.12 series predate the rule and are not held to
it.)"""

from __future__ import annotations

import difflib
import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
PATCHES = ROOT / "patches"
# each series with those it applies over, in order, and the modules they add
SERIES = {
    "dynamic-disable": (["dynamic-disable"], ["sglang/srt/speculative/dynamic_disable.py"]),
    "draft-steps": (["dynamic-disable", "draft-steps"],
                    ["sglang/srt/speculative/draft_steps.py", "sglang/srt/speculative/dynamic_disable.py"]),
}
# pinned in the test extra (pyproject.toml) at the versions SGLang's .pre-commit-config.yaml names
PINNED = {"black": "24.10.0", "isort": "5.13.2"}

pytestmark = pytest.mark.slow


def sglang_format(text: str) -> str:
    import black
    import isort

    for name, module in (("black", black), ("isort", isort)):
        assert module.__version__ == PINNED[name], f"{name} {module.__version__}: pip install -e '.[test]'"
    text = isort.code(text, config=isort.Config(profile="black", known_first_party=frozenset({"sglang"})))
    targets = {v for v in black.TargetVersion if v.value >= black.TargetVersion.PY310.value}
    return black.format_str(text, mode=black.Mode(target_versions=targets))


def changed_lines(before: list[str], after: list[str]) -> set[int]:
    """Indices of `before` that a diff to `after` replaces or deletes, and those at an insertion."""
    lines = set()
    for tag, i1, i2, _, _ in difflib.SequenceMatcher(None, before, after, autojunk=False).get_opcodes():
        if tag != "equal":
            lines.update(range(i1, max(i2, i1 + 1)))
    return lines


def added_lines(pristine: list[str], patched: list[str]) -> set[int]:
    """Indices of `patched` that the series adds or rewrites."""
    return {j for tag, _, _, j1, j2 in difflib.SequenceMatcher(None, pristine, patched, autojunk=False).get_opcodes()
            if tag in ("insert", "replace") for j in range(j1, j2)}


@pytest.fixture(scope="module", params=[(name, version) for name in SERIES for version in ("0.5.17", "0.5.23")],
                ids=lambda p: "-".join(p))
def patched(request, tmp_path_factory):
    """(pristine root, patched copy of the files the series touch, their paths, the modules they add)."""
    from spectrace.source import fetch_version

    if shutil.which("patch") is None:
        pytest.skip("needs patch(1)")
    name, version = request.param
    applied, modules = SERIES[name]
    pristine = fetch_version(version, offline=True).root
    out = tmp_path_factory.mktemp(f"format-{name}-{version}")
    patches = [PATCHES / series / version / n for series in applied
               for n in (PATCHES / series / version / "series").read_text().split() if n.endswith(".patch")]
    touched = sorted({line[6:].split("\t")[0].strip() for patch in patches for line in patch.read_text().splitlines()
                      if line.startswith("+++ b/")})
    for rel in touched:
        if (pristine / rel).is_file():
            (out / rel).parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(pristine / rel, out / rel)
    for patch in patches:
        subprocess.run(["patch", "-p1", "-s", "--batch", "-d", str(out), "-i", str(patch)], check=True)
    return pristine, out, touched, modules


def test_the_added_modules_are_what_sglangs_formatter_writes(patched):
    pristine, out, touched, modules = patched
    added = [rel for rel in touched if not (pristine / rel).is_file()]
    assert added == modules
    for rel in added:
        text = (out / rel).read_text()
        assert sglang_format(text) == text, rel


def test_no_line_the_series_adds_to_sglangs_files_is_one_the_formatter_changes(patched):
    pristine, out, touched, _ = patched
    problems = []
    for rel in touched:
        if not (pristine / rel).is_file():
            continue
        text = (out / rel).read_text()
        lines = text.splitlines()
        ours = added_lines((pristine / rel).read_text().splitlines(), lines)
        assert ours, f"{rel}: the series touches it but adds no line"
        clash = sorted(ours & changed_lines(lines, sglang_format(text).splitlines()))
        problems += [f"{rel}:{i + 1}: {lines[i].strip()}" for i in clash]
    assert not problems, "SGLang's formatter would rewrite:\n" + "\n".join(problems)


def test_the_check_sees_an_unformatted_line():
    lines = ["x = 1", "y = [1,2]"]
    assert changed_lines(lines, sglang_format("\n".join(lines) + "\n").splitlines()) == {1}
