"""bench/gpu/pyhook/sitecustomize.py with PROBE_GC_MS: every process that has the hook folder on its
PYTHONPATH reports its long garbage collections on stderr (the GPU runs match them to slow request
boundaries in SGLang's decode log)."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

HOOK = Path(__file__).resolve().parents[1] / "bench" / "gpu" / "pyhook"

# cyclic garbage that only a full collection frees, then that collection
PROGRAM = """
import gc
class Node:
    def __init__(self):
        self.me = self
junk = [Node() for _ in range(200000)]
del junk
gc.collect()
"""


def run(env_extra: dict) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if not k.startswith("PROBE_")}
    env.update(PYTHONPATH=str(HOOK), **env_extra)
    return subprocess.run([sys.executable, "-c", PROGRAM], env=env, capture_output=True, text=True, timeout=120)


def test_a_long_collection_is_reported_with_its_process_and_time():
    out = run({"PROBE_GC_MS": "0"})
    assert out.returncode == 0, out.stderr
    lines = [line for line in out.stderr.splitlines() if line.startswith("[probe] gc pid")]
    full = [line for line in lines if " gen 2: " in line]
    assert full, out.stderr
    pattern = re.compile(r"\[probe\] gc pid (\d+) \((.+)\) gen 2: ([\d.]+) ms, collected (\d+) "
                         r"at \d\d:\d\d:\d\d\.\d{3}$")
    matches = [pattern.match(line) for line in full]
    assert all(matches), full
    # the explicit collection freed the cycles (later ones, at shutdown, free nothing)
    assert max(int(m.group(4)) for m in matches) >= 200000


def test_above_the_threshold_only_and_nothing_without_the_variable():
    assert "[probe] gc" not in run({"PROBE_GC_MS": "100000"}).stderr
    assert "[probe] gc" not in run({}).stderr
