"""docs/dynamic-disable-options.md lists every switch of the shipped dynamic-disable series: each
server argument that patch 0002 adds and each SGLANG_SPEC_DISABLE_* variable the series reads, in
every SGLang version it targets, and nothing that no series has. Read from the shipped patches."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SERIES = ROOT / "patches/dynamic-disable"
DOC = ROOT / "docs/dynamic-disable-options.md"


def switches() -> tuple[set[str], set[str]]:
    arguments, variables = set(), set()
    for patch in SERIES.glob("*/0*.patch"):
        added = "\n".join(line for line in patch.read_text().splitlines() if line.startswith("+"))
        variables |= set(re.findall(r"[\"'](SGLANG_SPEC_DISABLE_[A-Z_]+)[\"']", added))
        if patch.name.startswith("0002-"):
            arguments |= set(re.findall(r"[\"'](--speculative-[a-z-]+)[\"']", added))
    return arguments, variables


def test_the_options_page_lists_every_switch_of_every_series_and_no_other():
    arguments, variables = switches()
    assert "--speculative-dynamic-disable" in arguments and "SGLANG_SPEC_DISABLE_PREFILL_KV_ONLY" in variables
    listed = set(re.findall(r"^\| `([^`]+)`", DOC.read_text(), re.M))
    assert arguments | variables <= listed, sorted((arguments | variables) - listed)
    assert listed <= arguments | variables, sorted(listed - arguments - variables)
