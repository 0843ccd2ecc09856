"""docs/results/shims-0.5.12-gpu.sh: every spectrace-bench table plan names a configuration file that
spectrace reads, and its --better-of, --mean-of and --reference name configurations of that file. A wrong name
fails only on the GPU machine, after minutes of set-up (the table-pk plan first named an always-on
configuration it does not have)."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pytest

from spectrace.bench import load_config_file

ROOT = Path(__file__).resolve().parent.parent
SCRIPT = ROOT / "docs/results/shims-0.5.12-gpu.sh"


def table_plans() -> list[str]:
    case = re.search(r"^\s*(table[^)]*)\)\s*$", SCRIPT.read_text(), re.M)
    return case.group(1).split("|")


def better_arguments(plan: str) -> list[str]:
    """The script's own BETTER lines, run by bash for this plan."""
    lines = [line for line in SCRIPT.read_text().splitlines() if "BETTER=(" in line]
    script = f'PLAN={plan}\n' + "\n".join(lines) + '\nprintf "%s\\n" "${BETTER[@]}"'
    out = subprocess.run(["bash", "-c", script], capture_output=True, text=True, check=True).stdout
    return [a for a in out.splitlines() if a]


@pytest.mark.parametrize("plan", table_plans())
def test_each_table_plan_names_configurations_its_file_has(plan):
    configs, _ = load_config_file(str(ROOT / f"docs/results/{plan}-0.5.12.toml"))
    names = {c["name"] for c in configs}
    args = better_arguments(plan)
    named = [v for flag, v in zip(args, args[1:]) if flag in ("--better-of", "--mean-of", "--reference")]
    assert all(set(v.split(",")) <= names for v in named), (plan, named, names)
    if plan != "metrics":
        assert "--better-of" in args


def test_the_plans_are_the_ones_the_script_offers():
    assert set(table_plans()) == {"table", "table-agree", "table-pk", "table-c1", "metrics"}
