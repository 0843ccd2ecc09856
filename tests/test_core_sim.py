"""bench/core_sim.py as a command: the scenario format of its docstring, its last line, and one
clear line with a non-zero exit for bad input."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
SIM = ROOT / "bench/core_sim.py"


def run(*args):
    return subprocess.run([sys.executable, str(SIM), *map(str, args)], capture_output=True, text=True, cwd=ROOT)


@pytest.mark.parametrize("version", ["0.5.17", "0.5.23"])
def test_the_last_line_is_the_ratio_to_the_oracle(version):
    proc = run("--version", version, "--scenario", ROOT / "tests/scenarios/never-comes-back.json")
    assert proc.returncode == 0, proc.stderr
    last = proc.stdout.strip().splitlines()[-1]
    ratio = float(re.fullmatch(r"sim: ratio_to_oracle=([0-9.]+)", last).group(1))
    assert 0.97 < ratio <= 1.0


def test_a_phase_that_the_oracle_and_the_core_run_alike(tmp_path):
    """Speculation at accept length 1 only costs, at any batch size: the oracle decodes plainly, and
    so does the core after measuring speculation once; the phase's table row says so."""
    f = tmp_path / "s.json"
    f.write_text(json.dumps({"plain_ms": [5, 0.01], "spec_ms": [8, 0.2], "noise": 0.0, "seed": 0,
                             "phases": [{"tokens": 400000, "bs": 32, "accept": 1.0}]}))
    proc = run("--version", "0.5.17", "--scenario", f)
    row = proc.stdout.splitlines()[1].split()
    assert row[:4] == ["1", "400000", "32", "1.00"] and float(row[5]) < 0.01


@pytest.mark.parametrize("content, message", [
    ("{", "Expecting property name"),
    ('{"plain_ms": [1], "spec_ms": [1, 2], "noise": 0, "seed": 0, "phases": [{"tokens": 1, "bs": 1, "accept": 1}]}',
     "plain_ms and spec_ms take [a, b]"),
    ('{"plain_ms": [1, 2], "spec_ms": [1, 2], "noise": 0, "seed": 0, "phases": [{"tokens": 1, "bs": 1, "accept": 0.5}]}',
     "accept >= 1"),
    ('{"plain_ms": [1, 2], "noise": 0, "seed": 0, "phases": []}', "KeyError: 'spec_ms'"),
    ('{"plain_ms": [1, 2], "spec_ms": [1, 2], "noise": 0, "seed": 0, "request_tokens": 0, '
     '"phases": [{"tokens": 1, "bs": 1, "accept": 1}]}', "request_tokens must be > 0"),
])
def test_bad_scenarios_get_one_line_and_exit_2(tmp_path, content, message):
    f = tmp_path / "bad.json"
    f.write_text(content)
    proc = run("--version", "0.5.17", "--scenario", f)
    assert proc.returncode == 2 and proc.stdout == ""
    assert len(proc.stderr.strip().splitlines()) == 1 and message in proc.stderr, proc.stderr


def test_a_tier_scenario_replays_each_policy_with_its_last_line():
    path = ROOT / "tests/scenarios/tiers/acceptance-moves.json"
    for policy in ("tiers", "core:3", "fixed:0"):
        proc = run("--scenario", path, "--policy", policy)
        assert proc.returncode == 0, proc.stderr
        assert re.fullmatch(r"sim: ratio_to_oracle=[0-9.]+", proc.stdout.strip().splitlines()[-1])


@pytest.mark.parametrize("args, message", [
    (("--scenario", "tests/scenarios/tiers/shrinking.json", "--policy", "core:4"), "no policy 'core:4'"),
    (("--scenario", "tests/scenarios/never-comes-back.json", "--policy", "tiers"), "--policy needs a scenario with tier_ms"),
])
def test_a_policy_that_does_not_fit_gets_one_line(args, message):
    proc = run(*args)
    assert proc.returncode == 2 and proc.stdout == ""
    assert len(proc.stderr.strip().splitlines()) == 1 and message in proc.stderr
