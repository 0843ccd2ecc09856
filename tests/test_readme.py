"""The README says what the tool does: its example is the tool's output (rewritten with
``SPECTRACE_UPDATE_README=1``), its commands table names every command, its figures have their script."""

from __future__ import annotations

import os
import re
from pathlib import Path

import click
from click.testing import CliRunner

from spectrace.cli import LAZY_COMMANDS, main
from spectrace.source import cache_dir

README = Path(__file__).resolve().parents[1] / "README.md"
EXAMPLE = re.compile(r"(<!-- example: spectrace (?P<args>[^(]+?) \(.*?-->\n)(?P<body>.*?)(<!-- end of example -->)", re.S)


def example_block(args: list[str], output: str) -> str:
    shown = output.replace(str(cache_dir()), "~/.cache/spectrace")
    return "".join(f"    {line}".rstrip() + "\n" for line in [f"$ spectrace {' '.join(args)}", *shown.splitlines()])


def test_the_example_is_what_the_tool_prints(sglang_source):
    sglang_source("0.5.9")
    text = README.read_text()
    match = EXAMPLE.search(text)
    assert match, "README.md has no example block"
    args = match["args"].split()
    result = CliRunner().invoke(main, args)
    assert result.exit_code == 0, result.output
    expected = "\n" + example_block(args, result.stdout) + "\n"
    if os.environ.get("SPECTRACE_UPDATE_README"):
        README.write_text(text[:match.start("body")] + expected + text[match.end("body"):])
        return
    assert match["body"] == expected, "the README's example drifted: SPECTRACE_UPDATE_README=1 pytest tests/test_readme.py"


def test_the_commands_table_names_every_command():
    table = README.read_text().split("## Commands", 1)[1].split("\n\n", 2)[1]
    ctx = click.Context(main)
    missing = []
    for name in LAZY_COMMANDS:
        command = main.get_command(ctx, name)
        rows = [row for row in table.splitlines() if f"`spectrace {name}" in row]
        if not rows:
            missing.append(name)
            continue
        for sub in getattr(command, "commands", {}):
            if not any(re.search(rf"[ |`]{sub}\b", re.split(r"(?<!\\)\|", row)[1]) for row in rows):
                missing.append(f"{name} {sub}")
    assert not missing, f"README.md's commands table lacks: {', '.join(missing)}"


def test_the_figures_name_the_script_that_measured_them():
    block = README.read_text().split("<!-- figures: bash bench/readme_figures.sh -->", 1)[1].split("<!-- end of figures -->")[0]
    assert "bench/readme_figures.sh" in block and re.search(r"\d+ s\b", block), block
