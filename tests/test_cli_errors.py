"""The command line fails cleanly: one line, a documented exit code (docs/cli.md), no traceback,
no half-changed tree, no directory created by a mistyped ``-o``."""

from __future__ import annotations

import difflib
import errno
import hashlib
import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest
from click.testing import CliRunner

from spectrace import ui
from spectrace.cli import main
from spectrace.patches import engine
from spectrace.patches.series import SERIES_DIR_ENV

REPO = Path(__file__).resolve().parents[1]


def invoke(*args, **kwargs):
    return CliRunner().invoke(main, list(args), **kwargs)


def assert_one_line(result, code: int, startswith: str):
    assert result.exit_code == code, result.output
    assert "Traceback" not in result.output
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith(startswith), result.stderr


# ---------------------------------------------------------------- -o


OUTPUT_COMMANDS = [
    ["map", "--sglang", "0.5.9", "Scheduler.run_batch"],
    ["contracts", "extract", "--sglang", "0.5.9"],
    ["contracts", "check", "--sglang", "0.5.9"],
    ["contracts", "diff", "0.5.9", "0.5.9"],
]


@pytest.mark.parametrize("command", OUTPUT_COMMANDS, ids=lambda c: " ".join(c[:2]))
def test_output_into_a_missing_directory_is_refused_and_not_created(command, tmp_path):
    target = tmp_path / "missing" / "out.json"
    result = invoke(*command, "-o", str(target))
    assert_one_line(result, 2, f"spectrace: cannot write {target}: no such directory: {target.parent}")
    assert not target.parent.exists()


@pytest.mark.parametrize("command", OUTPUT_COMMANDS, ids=lambda c: " ".join(c[:2]))
def test_output_that_is_a_directory_is_refused(command, tmp_path):
    result = invoke(*command, "-o", str(tmp_path))
    assert_one_line(result, 2, f"spectrace: cannot write {tmp_path}: is a directory")


def test_output_where_no_file_can_be_created(tmp_path):
    result = invoke("map", "--sglang", "0.5.9", "Scheduler.run_batch", "-o", "/proc/x.svg")
    assert_one_line(result, 2, "spectrace: cannot write /proc/x.svg: ")  # as root: "/proc does not take new files"
    assert not Path("/proc/x.svg").exists()


def test_output_on_a_read_only_filesystem(tmp_path, monkeypatch):
    real_open = os.open
    readonly = tmp_path / "ro"
    readonly.mkdir()

    def fake_open(path, flags, *args, **kwargs):  # what a read-only mount answers to O_CREAT
        if str(path).startswith(str(readonly)) and flags & os.O_CREAT:
            raise OSError(errno.EROFS, os.strerror(errno.EROFS), str(path))
        return real_open(path, flags, *args, **kwargs)

    monkeypatch.setattr(os, "open", fake_open)
    result = invoke("contracts", "check", "--sglang", "0.5.9", "-o", str(readonly / "check.txt"))
    assert_one_line(result, 2, f"spectrace: cannot write {readonly / 'check.txt'}: Read-only file system")
    assert list(readonly.iterdir()) == []


def test_output_is_written_whole_and_keeps_the_file_mode(tmp_path, sglang_source):
    sglang_source("0.5.9")
    target = tmp_path / "map.json"
    target.write_text("old")
    target.chmod(0o640)
    result = invoke("map", "--sglang", "0.5.9", "Scheduler.run_batch", "--depth", "1", "-o", str(target))
    assert result.exit_code == 0, result.output
    assert target.read_text().startswith("{") and (target.stat().st_mode & 0o777) == 0o640
    assert sorted(p.name for p in tmp_path.iterdir()) == ["map.json"]  # no temp or probe file left


# ---------------------------------------------------------------- broken pipe


def test_closed_stdout_ends_quietly():
    """``spectrace patch list | head -0``: the reader is gone before anything is written."""
    proc = subprocess.Popen([sys.executable, "-m", "spectrace", "patch", "list"], cwd=REPO,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    proc.stdout.close()
    stderr = proc.stderr.read().decode()
    proc.wait(timeout=120)
    assert proc.returncode == 141, stderr
    assert "Broken pipe" not in stderr and "Traceback" not in stderr and "Exception ignored" not in stderr


def test_head_of_a_large_output_is_quiet(sglang_source):
    sglang_source("0.5.9")
    proc = subprocess.run(
        f"'{sys.executable}' -m spectrace map --sglang 0.5.9 Scheduler.run_batch --depth 3 --format json | head -1",
        shell=True, cwd=REPO, capture_output=True, text=True, timeout=300)
    assert proc.stdout == "{\n"
    assert "Broken pipe" not in proc.stderr and "Traceback" not in proc.stderr, proc.stderr


# ---------------------------------------------------------------- Ctrl-C


def test_keyboard_interrupt_exits_130_in_one_line(monkeypatch):
    def interrupted(spec):
        raise KeyboardInterrupt

    monkeypatch.setattr("spectrace.contracts.cli.resolve_source", interrupted)
    result = invoke("contracts", "extract", "--sglang", "0.5.9")
    assert_one_line(result, 130, "spectrace: interrupted")


def tiny_series(tmp_path: Path, monkeypatch) -> Path:
    """A two-file SGLang-shaped tree (version 9.9.9) and a one-patch series for it, manifest written
    by ``spectrace patch manifest``."""
    tree = tmp_path / "tree"
    (tree / "sglang").mkdir(parents=True)
    (tree / "sglang" / "__init__.py").write_text("")
    (tree / "sglang" / "version.py").write_text('__version__ = "9.9.9"\n')
    files = {"sglang/a.py": "A = 1\nB = 2\nC = 3\n", "sglang/b.py": "X = 1\nY = 2\nZ = 3\n"}
    diff = ""
    for rel, text in files.items():
        (tree / rel).write_text(text)
        new = text.replace("2\n", "20\n")
        diff += "".join(difflib.unified_diff(text.splitlines(True), new.splitlines(True), f"a/{rel}", f"b/{rel}"))
    directory = tmp_path / "series-root" / "tiny" / "9.9.9"
    directory.mkdir(parents=True)
    (directory / "0001-twenty.patch").write_text("Description: twenty\n---\n" + diff)
    (directory / "series").write_text("0001-twenty.patch\n")
    monkeypatch.setenv(SERIES_DIR_ENV, str(tmp_path / "series-root"))
    result = invoke("patch", "manifest", "--sglang", str(tree), "--series", "tiny")
    assert result.exit_code == 0, result.output
    return tree


def digest(root: Path) -> dict[str, str]:
    return {p.relative_to(root).as_posix(): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(root.rglob("*")) if p.is_file()}


def test_interrupted_apply_rolls_back_and_says_so(tmp_path, monkeypatch):
    tree = tiny_series(tmp_path, monkeypatch)
    before = digest(tree)
    real_put = engine._put
    calls = []

    def put_then_interrupt(root, rel, data, writes=None):
        real_put(root, rel, data, writes)
        calls.append(rel)
        if len(calls) == 1:  # after the first file is patched, before the second
            raise KeyboardInterrupt

    monkeypatch.setattr(engine, "_put", put_then_interrupt)
    result = invoke("patch", "apply", "--sglang", str(tree), "--series", "tiny", "--no-contract-gate")
    assert result.exit_code == 130, result.output
    assert result.stderr.strip().splitlines() == ["spectrace: interrupted; the tree is unchanged (rolled back)"]
    assert calls[0] == "sglang/a.py"
    assert digest(tree) == before  # the patched file is back, no journal or temp file is left


def test_interrupt_in_the_contract_gate_changes_nothing(tmp_path, monkeypatch):
    tree = tiny_series(tmp_path, monkeypatch)
    before = digest(tree)

    def gate(source, series, phase, baseline=None):
        raise KeyboardInterrupt

    monkeypatch.setattr(engine, "contract_gate", gate)
    result = invoke("patch", "apply", "--sglang", str(tree), "--series", "tiny")
    assert_one_line(result, 130, "spectrace: interrupted; the tree is unchanged")
    assert digest(tree) == before


def test_gate_failure_never_dumps_a_huge_message(tmp_path, monkeypatch):
    tree = tiny_series(tmp_path, monkeypatch)

    def checker(source):
        raise ValueError("Module(body=[" + "SimpleStatementLine(), " * 40000 + "])")  # ~900 KB

    monkeypatch.setattr(engine, "run_contract_catalog", checker)
    result = invoke("patch", "check", "--sglang", str(tree), "--series", "tiny")
    assert result.exit_code == 1
    gate = [line for line in result.output.splitlines() if line.startswith("gate contracts (before)")]
    assert len(gate) == 1 and "the contract checker failed: ValueError: Module(body=[" in gate[0]
    assert max(len(line) for line in result.output.splitlines()) < 1100


def test_pool_workers_leave_ctrl_c_to_the_parent(tmp_path):
    """SIGINT to the whole process group (what a terminal's Ctrl-C sends) during a process pool:
    the parent alone reports it; no worker prints a traceback."""
    script = tmp_path / "pool.py"
    script.write_text(textwrap.dedent("""
        import sys, time
        from spectrace import interrupts

        def work(i):
            time.sleep(0.2)
            return i

        if __name__ == "__main__":
            try:
                with interrupts.handled(), interrupts.process_pool(2) as pool:
                    print("ready", flush=True)
                    list(pool.map(work, range(10000)))
            except KeyboardInterrupt:
                print("parent interrupted", file=sys.stderr)
                sys.exit(130)
    """))
    proc = subprocess.Popen([sys.executable, str(script)], cwd=REPO, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True, start_new_session=True)
    assert proc.stdout.readline() == "ready\n"
    time.sleep(1.0)  # the workers are busy
    os.killpg(proc.pid, signal.SIGINT)
    _, stderr = proc.communicate(timeout=60)
    assert proc.returncode == 130
    assert stderr.strip() == "parent interrupted", stderr


# ---------------------------------------------------------------- diff --exit-code, --quiet


def test_diff_of_a_version_with_itself_says_no_drift(sglang_source):
    sglang_source("0.5.9")
    result = invoke("contracts", "diff", "0.5.9", "0.5.9", "--exit-code")
    assert result.exit_code == 0, result.output
    assert result.stdout == "no drift between 0.5.9 and 0.5.9\n"


def test_diff_exit_code_is_1_on_drift(sglang_source):
    sglang_source("0.5.9"), sglang_source("0.5.23")
    result = invoke("contracts", "diff", "0.5.9", "0.5.23", "--exit-code")
    assert result.exit_code == 1, result.output
    assert result.stdout.startswith("0.5.9 -> 0.5.23:")
    assert invoke("contracts", "diff", "0.5.9", "0.5.23").exit_code == 0  # without the flag drift is not a failure


def test_quiet_keeps_stderr_to_errors(tmp_path, sglang_source):
    sglang_source("0.5.9")
    out = tmp_path / "check.json"
    loud = invoke("contracts", "check", "--sglang", "0.5.9", "--format", "json", "-o", str(out))
    assert "spectrace: using SGLang 0.5.9" in loud.stderr and f"wrote {out}" in loud.stderr
    quiet = invoke("-q", "contracts", "check", "--sglang", "0.5.9", "--format", "json", "-o", str(out))
    assert quiet.exit_code == loud.exit_code
    assert quiet.stderr == ""
    assert out.read_text().startswith("{")
    failing = invoke("-q", "map", "--sglang", str(tmp_path / "nowhere"), "X")
    assert failing.exit_code == 2 and failing.stderr.startswith("spectrace: no such directory")  # errors stay


def test_verbose_adds_timing(sglang_source):
    sglang_source("0.5.9")
    result = invoke("-v", "contracts", "extract", "--sglang", "0.5.9", "--format", "json")
    assert "spectrace: extracting contracts from SGLang 0.5.9 in " in result.stderr
    assert ui.level == ui.VERBOSE
    invoke("patch", "list")
    assert ui.level == ui.NORMAL  # each invocation starts from the default


# ---------------------------------------------------------------- completion


def test_shell_completion_through_the_lazy_group():
    env = {"_SPECTRACE_COMPLETE": "bash_complete", "COMP_WORDS": "spectrace contracts ", "COMP_CWORD": "2"}
    result = CliRunner().invoke(main, [], env=env, prog_name="spectrace")
    assert result.exit_code == 0
    assert result.output.split() == ["plain,check", "plain,diff", "plain,extract"]
    source = CliRunner().invoke(main, [], env={"_SPECTRACE_COMPLETE": "bash_source"}, prog_name="spectrace")
    assert "_spectrace_completion()" in source.output


# ---------------------------------------------------------------- what a new user types


def spectrace_process(*args, env_extra=None):
    env = dict(os.environ, **(env_extra or {}))
    return subprocess.Popen([sys.executable, "-m", "spectrace", *args], cwd=REPO, env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)


@pytest.mark.parametrize("unbuffered", ["1", ""], ids=["PYTHONUNBUFFERED", "buffered"])
def test_a_reader_that_stops_part_way_gives_141(unbuffered, sglang_source):
    """``map ... | head``: the pipe took part of a large output, then its reader left. Unbuffered,
    Python drops the short write's rest without an error; the CLI still sees the broken pipe."""
    sglang_source("0.5.9")
    proc = spectrace_process("-q", "map", "--sglang", "0.5.9", "Scheduler.run_batch", "--depth", "3",
                             "--format", "json", env_extra={"PYTHONUNBUFFERED": unbuffered})
    assert proc.stdout.read(10) == b'{\n "schema'
    proc.stdout.close()
    stderr = proc.stderr.read().decode()
    assert proc.wait(timeout=120) == 141, stderr
    assert "Traceback" not in stderr and "Broken pipe" not in stderr and "Exception ignored" not in stderr


@pytest.mark.parametrize("command", [["map", "--sglang", "0.5.9", "Scheduler.run_batch"],
                                     ["contracts", "extract", "--sglang", "0.5.9"],
                                     ["contracts", "diff", "0.5.9", "0.5.9"]], ids=lambda c: " ".join(c[:2]))
def test_every_command_gives_141_to_a_closed_stdout(command, sglang_source):
    sglang_source("0.5.9")
    proc = spectrace_process("-q", *command, env_extra={"PYTHONUNBUFFERED": "1"})
    proc.stdout.close()
    stderr = proc.stderr.read().decode()
    assert proc.wait(timeout=120) == 141, stderr
    assert stderr == ""


def test_an_empty_output_name_is_refused():
    result = invoke("contracts", "extract", "--sglang", "/nonexistent", "-o", "")
    assert_one_line(result, 2, "spectrace: cannot write to an empty file name")


@pytest.mark.parametrize("args", [["-h"], ["patch", "-h"], ["patch", "status", "-h"], ["contracts", "check", "-h"]])
def test_dash_h_is_help(args):
    result = invoke(*args)
    assert result.exit_code == 0 and result.stdout.startswith("Usage: ") and "-h, --help" in result.stdout


@pytest.mark.parametrize("where", ["before", "after"])
def test_quiet_and_verbose_go_before_or_after_the_command(where):
    for flag, level in (("-q", ui.QUIET), ("--verbose", ui.VERBOSE)):
        args = [flag, "patch", "list"] if where == "before" else ["patch", "list", flag]
        assert invoke(*args).exit_code == 0
        assert ui.level == level
    result = invoke("-q", "patch", "list", "-v")
    assert result.exit_code == 2 and "--quiet and --verbose contradict each other" in result.stderr


def test_a_mistyped_command_gets_did_you_mean():
    result = invoke("mapp")
    assert result.exit_code == 2 and "No such command 'mapp'. Did you mean 'map'?" in result.stderr
    assert "Did you mean 'check'?" in invoke("contracts", "chek").stderr


@pytest.mark.parametrize("group", [[], ["patch"], ["contracts"]], ids=lambda g: " ".join(["spectrace", *g]))
def test_help_summaries_are_whole_sentences(group):
    text = invoke(*group, "--help").stdout
    listing = text.split("Commands:\n", 1)[1]
    summaries, current = [], ""
    for line in listing.splitlines():
        if line[:3].strip():  # a new command's row: "  name  summary"
            summaries.append(current)
            current = line.split(None, 1)[1]
        else:
            current += " " + line.strip()
    summaries = [s for s in summaries + [current] if s]
    assert summaries
    for summary in summaries:
        assert summary.endswith(".") and not summary.endswith("..."), summary
        assert summary.count("(") == summary.count(")"), summary


def test_python_dash_m_names_the_program_spectrace():
    proc = subprocess.run([sys.executable, "-m", "spectrace", "--version"], cwd=REPO, capture_output=True, text=True)
    assert proc.stdout.startswith("spectrace, version "), proc.stdout


def test_a_hunk_that_does_not_match_quotes_the_line_as_it_is(tmp_path, monkeypatch):
    tree = tiny_series(tmp_path, monkeypatch)
    (tree / "sglang" / "a.py").write_text("A = 1\nB    =   7\nC = 3\n")
    before = digest(tree)
    result = invoke("patch", "apply", "--sglang", str(tree), "--series", "tiny", "--no-contract-gate")
    assert_one_line(result, 2, "spectrace: ")
    assert "line 2 is 'B    =   7', the patch expects 'B = 2'" in result.stderr
    assert digest(tree) == before


def test_counts_of_one_are_singular(tmp_path, monkeypatch):
    tree = tiny_series(tmp_path, monkeypatch)
    result = invoke("patch", "check", "--sglang", str(tree), "--series", "tiny", "--no-contract-gate")
    assert "(1 patch, 2 files)" in result.stdout and "1 patch matches manifest.toml" in result.stdout
    result = invoke("patch", "apply", "--sglang", str(tree), "--series", "tiny", "--no-contract-gate")
    assert "applied 1 patch of 'tiny' to 2 files" in result.stdout
    (tree / "sglang" / "b.py").write_text("edited\n")
    assert "; 1 file changed since" in invoke("patch", "status", "--sglang", str(tree)).stdout


@pytest.mark.parametrize("command", ["status", "check", "apply", "revert", "adopt"])
def test_a_tree_without_a_version_is_one_line(command, tmp_path):
    tree = tmp_path / "tree"
    (tree / "sglang").mkdir(parents=True)
    (tree / "sglang" / "__init__.py").write_text("")
    before = digest(tree)
    result = invoke("patch", command, "--sglang", str(tree))
    assert_one_line(result, 2, f"spectrace: no SGLang version in {tree}: ")
    assert digest(tree) == before and not (tree / ".spectrace").exists()
