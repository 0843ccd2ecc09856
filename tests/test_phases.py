"""bench/gpu/*.phases: every phase of every committed phases file is NAME|SECONDS|ARGS, and dd-run.sh's
way of passing ARGS (split on whitespace, after --name NAME) parses with probe_dd.py's own parser. A
typo there costs a device call (minutes of set-up, then a phase that exits at once)."""

from __future__ import annotations

import contextlib
import io
from pathlib import Path

import pytest

PHASES = sorted((Path(__file__).resolve().parent.parent / "bench/gpu").glob("*.phases"))


@pytest.fixture(scope="module")
def probe(bench_gpu_tool):
    return bench_gpu_tool("probe_dd")


@pytest.mark.parametrize("path", PHASES, ids=[p.name for p in PHASES])
def test_every_phase_parses_as_dd_run_passes_it(probe, path):
    names = []
    for phase in path.read_text().strip().split(";"):
        name, seconds, args = phase.split("|", 2)
        assert name and int(seconds) > 0, phase
        err = io.StringIO()
        with contextlib.redirect_stderr(err):
            try:
                parsed = probe.parser().parse_args(["--name", name, *args.split()])
            except SystemExit:
                pytest.fail(f"{path.name} phase {name}: {err.getvalue().strip()}")
        if parsed.profile:
            assert all(spec.split(":")[1].isdigit() for spec in parsed.profile.split(",")), phase
        names.append(name)
    assert len(names) == len(set(names)), f"{path.name}: a phase name twice: {names}"


def test_there_are_phases_to_check():
    assert {"profile.phases", "request-profile-cpu.phases", "window-sweep.phases"} <= {p.name for p in PHASES}
