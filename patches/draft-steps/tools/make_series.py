#!/usr/bin/env python3
"""Generate the draft-steps series of one SGLang version, which applies over the dynamic-disable one.

    python patches/draft-steps/tools/make_series.py VERSION            # write VERSION/
    python patches/draft-steps/tools/make_series.py VERSION --check    # exit 1 if VERSION/ is stale
    python patches/draft-steps/tools/make_series.py VERSION --from-tree EDITED_DIR

The dynamic-disable generator (patches/dynamic-disable/tools/make_series.py, whose docstring says how
src/ and edits/ make a series) with this series' layout; its pristine tree is the release with the
dynamic-disable series applied, made here from spectrace's source cache.
"""

from __future__ import annotations

import atexit
import importlib.util
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent.parent  # patches/draft-steps
BASE = HERE.parent / "dynamic-disable"

spec = importlib.util.spec_from_file_location("dd_make_series", BASE / "tools/make_series.py")
base = importlib.util.module_from_spec(spec)
spec.loader.exec_module(base)

base.SERIES = "draft-steps"
base.HERE = HERE
_LAYOUT = [
    ("0001-tier-policy-module", ["sglang/srt/speculative/draft_steps.py"]),
    ("0002-worker-tiers", ["sglang/srt/speculative/eagle_worker_v2.py"]),
]
base.PATCHES = {"0.5.17": _LAYOUT, "0.5.23": _LAYOUT}
base.VERIFIED = {
    "0.5.23": [
        "statically and on the CPU only (tests/test_tier_policy.py, the CPU replay of docs/draft-steps.md): "
        "NOT run on a GPU (0.5.23 needs torch 2.13+)",
    ],
    "0.5.17": [
        "H200 (the series of 75fc86f), drafts always accepted, C = 1-128, shims on, greedy outputs equal (docs/results.md)",
        "H200 (the series of 489bc91): serving traffic and the GPU test of the tier policy (docs/results.md)",
        "not yet run on a GPU: half-accepted and never-accepted drafts; batch size 1 judging each new request by its drafts",
    ],
}
base.EXTRA_MANIFEST = {"applies_over": "dynamic-disable"}
_DESCRIPTION = (
    "With --speculative-adaptive and --speculative-dynamic-disable: each decode step's number of "
    "draft steps (0: the core's plain step) by measured step time per tier and acceptance per draft "
    "position and batch-size bucket, instead of upstream's tier table and moving average (docs/draft-steps.md)."
)
base.DESCRIPTION = {"0.5.17": _DESCRIPTION, "0.5.23": _DESCRIPTION}

_pristine = base.default_pristine


def with_dynamic_disable(version: str) -> Path | None:
    """The release from spectrace's cache with the dynamic-disable series applied, in a temporary dir."""
    release = _pristine(version)
    if release is None:
        return None
    tmp = Path(tempfile.mkdtemp(prefix=f"draft-steps-{version}-"))
    atexit.register(shutil.rmtree, tmp, True)
    shutil.copytree(release / "sglang", tmp / "sglang")
    series = BASE / version
    for name in (series / "series").read_text().split():
        if name.endswith(".patch"):
            subprocess.run(["patch", "-p1", "-s", "--batch", "-d", str(tmp), "-i", str(series / name)], check=True)
    return tmp


base.default_pristine = with_dynamic_disable

if __name__ == "__main__":
    try:
        sys.exit(base.main())
    except base.MakeSeriesError as exc:
        sys.exit(f"make_series: {exc}")
