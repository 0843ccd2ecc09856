"""The GPU results under docs/results: every engine log in a call's archive (``logs.tar.xz`` or
``all.tar.xz``) belongs to that call. Its name must be a phase the call's ``console.txt`` started
(``[run] PHASE NAME``) or a configuration its bench run log started (``[bench] configuration NAME:``).
A session once packed six logs of earlier calls into a call's archive, found by hand after it
was committed."""

from __future__ import annotations

import re
import tarfile
from pathlib import Path

import pytest

RESULTS = Path(__file__).resolve().parents[1] / "docs" / "results"
ARCHIVES = sorted(p for name in ("logs.tar.xz", "all.tar.xz") for p in RESULTS.rglob(name))
STARTED = (re.compile(r"^\[run\] PHASE (\S+) \(limit", re.M),
           re.compile(r"^\[bench\] configuration (\S+?):", re.M))


def started_in(folder: Path) -> set[str]:
    names: set[str] = set()
    for log in ("console.txt", "run.log", "shims-run.log"):
        path = folder / log
        if path.is_file():
            text = path.read_text(errors="replace")
            for pattern in STARTED:
                names.update(pattern.findall(text))
    return names


def logged_in(archive: Path) -> set[str]:
    with tarfile.open(archive) as tar:
        return {m.group(1) for n in tar.getnames() if (m := re.fullmatch(r"(?:.*/)?log-(.+)\.txt", n))}


def test_there_are_archives_to_check():
    assert len(ARCHIVES) >= 20


@pytest.mark.parametrize("archive", ARCHIVES, ids=lambda p: str(p.relative_to(RESULTS)))
def test_every_log_in_an_archive_is_of_its_own_call(archive):
    started = started_in(archive.parent)
    logged = logged_in(archive)
    if not started:
        pytest.skip("no console or bench run log beside this archive to check it against")
    assert logged, "an archive without engine logs"
    assert logged <= started, f"logs of engines this call never started: {sorted(logged - started)}"
