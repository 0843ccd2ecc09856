#!/usr/bin/env python3
"""Time other Python call-graph tools on SGLang and count the `model_worker` dispatch they resolve.

Runs pyan3, code2flow and jarviscg (installed in their own venv, never in spectrace's) on
  * the whole ``sglang`` package, and
  * the files of ``srt/managers`` + ``srt/speculative``,
each under ``/usr/bin/time -v`` (wall time, peak RSS) and ``timeout``.  From each tool's output it
reads the edges leaving ``Scheduler.run_batch`` and counts how many of the polymorphic targets of
``self.model_worker.forward_batch_generation`` the tool found.  The targets are not hard-coded:
they are the worker classes ``SpeculativeAlgorithm.create_worker`` returns plus ``TpModelWorker``,
each mapped to the class that defines the ``forward_batch_generation`` it inherits (read with ``ast``
from the same source).

    python bench/compare_tools.py --sglang "$SPECTRACE_CACHE_DIR/sglang/0.5.9" --venv .bench-venv \
        --timeout 300 --markdown /tmp/other_tools.md

The tools are not spectrace dependencies; install them with
``python -m venv .bench-venv && .bench-venv/bin/pip install pyan3 code2flow jarviscg``.
"""

from __future__ import annotations

import argparse
import ast
import json
import os
import platform
import re
import shlex
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

CALLER = "Scheduler.run_batch"
METHOD = "forward_batch_generation"
SUBSET_DIRS = ("sglang/srt/managers", "sglang/srt/speculative")

INPUTS = {
    # name -> (description, shell expression listing the files, directory argument)
    "subset": (
        "srt/managers + srt/speculative",
        "$(find sglang/srt/managers sglang/srt/speculative -name '*.py' | sort)",
        None,
    ),
    "whole": ("whole sglang package", "$(find sglang -name '*.py' | sort)", "sglang"),
}


def tool_command(tool: str, files_expr: str, directory: str | None, out: str) -> str:
    """The shell command for one tool on one input (run with cwd = the directory holding sglang/)."""
    if tool == "pyan3":
        # --root: sglang/srt has no __init__.py, pyan3 cannot infer the package root by itself.
        return f"pyan3 {files_expr} --root . --uses --no-defines --text --file {out}"
    if tool == "code2flow":
        # code2flow takes files or a directory; --skip-parse-errors gives it its best chance.
        sources = directory or files_expr
        return f"code2flow {sources} --language py --skip-parse-errors --quiet -o {out}"
    if tool == "jarviscg":
        return f"jarviscg {files_expr} --package . -o {out}"
    raise ValueError(tool)


OUTPUT_SUFFIX = {"pyan3": "txt", "code2flow": "json", "jarviscg": "json"}


# --------------------------------------------------------------------------- targets from source


def polymorphic_targets(sglang_root: Path) -> dict[str, str]:
    """worker class -> class whose forward_batch_generation it runs (by name, through its bases)."""
    classes: dict[str, tuple[list[str], bool]] = {}
    created: list[str] = []
    for directory in SUBSET_DIRS:
        for path in sorted((sglang_root / directory).rglob("*.py")):
            tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
            for node in ast.walk(tree):
                if isinstance(node, ast.ClassDef):
                    bases = [b.id if isinstance(b, ast.Name) else getattr(b, "attr", "") for b in node.bases]
                    defines = any(
                        isinstance(item, (ast.FunctionDef, ast.AsyncFunctionDef)) and item.name == METHOD
                        for item in node.body
                    )
                    classes[node.name] = (bases, defines)
                if isinstance(node, ast.FunctionDef) and node.name == "create_worker":
                    created += [
                        ret.value.id
                        for ret in ast.walk(node)
                        if isinstance(ret, ast.Return) and isinstance(ret.value, ast.Name)
                    ]

    def defining_class(name: str, seen=()) -> str | None:
        if name not in classes or name in seen:
            return None
        bases, defines = classes[name]
        if defines:
            return name
        for base in bases:
            found = defining_class(base, seen + (name,))
            if found:
                return found
        return None

    workers = ["TpModelWorker"] + [c for c in created if c != "TpModelWorker"]
    return {w: defining_class(w) for w in dict.fromkeys(workers)}


# --------------------------------------------------------------------------- reading tool outputs


def short(name: str) -> str:
    """`module::Class.meth` or `pkg.mod.Class.meth` -> `Class.meth`."""
    name = name.split("::")[-1]
    return ".".join(name.split(".")[-2:])


def callees_pyan3(path: Path) -> set[str]:
    callees, current = set(), None
    for line in path.read_text(errors="replace").splitlines():
        if not line.strip():
            continue
        if not line.startswith(" "):
            current = short(line.strip())
        elif current == CALLER:
            callees.add(short(re.sub(r"^\s*\[[A-Z]\]\s*", "", line)))
    return callees


def callees_code2flow(path: Path) -> set[str]:
    graph = json.loads(path.read_text())["graph"]
    nodes = graph["nodes"]
    callers = {uid for uid, node in nodes.items() if short(node["name"]) == CALLER}
    return {short(nodes[e["target"]]["name"]) for e in graph["edges"] if e["source"] in callers}


def callees_jarviscg(path: Path) -> set[str]:
    adjacency = json.loads(path.read_text())
    return {short(t) for caller, targets in adjacency.items() if short(caller) == CALLER for t in targets}


READERS = {"pyan3": callees_pyan3, "code2flow": callees_code2flow, "jarviscg": callees_jarviscg}


# --------------------------------------------------------------------------- running


@dataclass
class Result:
    tool: str
    input: str
    command: str
    status: str = "ok"
    wall_s: float | None = None
    peak_rss_mb: float | None = None
    callees: int | None = None
    resolved: list[str] = field(default_factory=list)
    other_fbg: list[str] = field(default_factory=list)
    note: str = ""


def parse_time_v(text: str) -> tuple[float | None, float | None]:
    wall = rss = None
    m = re.search(r"Elapsed \(wall clock\) time \(h:mm:ss or m:ss\): (\S+)", text)
    if m:
        parts = [float(p) for p in m.group(1).split(":")]
        wall = sum(p * 60**i for i, p in enumerate(reversed(parts)))
    m = re.search(r"Maximum resident set size \(kbytes\): (\d+)", text)
    if m:
        rss = int(m.group(1)) / 1024
    return wall, rss


def run_one(tool, input_name, args, targets, workdir: Path) -> Result:
    _, files_expr, directory = INPUTS[input_name]
    out = workdir / f"{tool}-{input_name}.{OUTPUT_SUFFIX[tool]}"
    command = tool_command(tool, files_expr, directory, str(out))
    result = Result(tool, input_name, command)
    time_file = workdir / f"{tool}-{input_name}.time"
    log_file = workdir / f"{tool}-{input_name}.log"
    out.unlink(missing_ok=True)
    # time -v measures timeout and (through wait4's rusage) the tool it waits for; --foreground
    # makes timeout kill only the tool and then reap it, so a timed-out run still reports the
    # peak RSS it had reached (without it timeout kills its whole group, itself included).
    wrapped = (
        f"/usr/bin/time -v -o {shlex.quote(str(time_file))} "
        f"timeout --foreground -s KILL {args.timeout} bash -c {shlex.quote(command)}"
    )
    env = dict(os.environ, PATH=f"{args.venv}/bin:{os.environ['PATH']}")
    started = time.monotonic()
    with open(log_file, "w") as log:
        proc = subprocess.run(wrapped, shell=True, cwd=args.sglang, env=env, stdout=log, stderr=subprocess.STDOUT)
    elapsed = time.monotonic() - started
    result.wall_s, result.peak_rss_mb = parse_time_v(time_file.read_text() if time_file.exists() else "")
    if result.wall_s is None:
        result.wall_s = elapsed
    rc = proc.returncode
    log_lines = log_file.read_text(errors="replace").strip().splitlines()
    frames = [line.strip() for line in log_lines if line.strip().startswith("File ")]
    log_tail = [(log_lines[-1] if log_lines else "") + (f" ({frames[-1]})" if frames else "")]
    if rc in (124, 137) or "Command terminated by signal 9" in (time_file.read_text() if time_file.exists() else ""):
        result.status = f"timeout ({args.timeout} s)"
        result.note = "killed; peak RSS is what it had reached"
        return result
    if rc != 0 or not out.exists() or out.stat().st_size == 0:
        result.status = f"crash (exit {rc})"
        result.note = log_tail[0][:220]
        return result
    try:
        callees = READERS[tool](out)
    except Exception as exc:  # a tool wrote something we cannot read: report, don't hide
        result.status = "unreadable output"
        result.note = f"{type(exc).__name__}: {exc}"[:160]
        return result
    result.callees = len(callees)
    wanted = {f"{definer}.{METHOD}" for definer in targets.values() if definer}
    result.resolved = sorted(w for w, definer in targets.items() if definer and f"{definer}.{METHOD}" in callees)
    result.other_fbg = sorted(c for c in callees if c.endswith("." + METHOD) and c not in wanted)
    return result


def tool_versions(venv: str) -> dict[str, str]:
    out = subprocess.run(
        [f"{venv}/bin/python", "-m", "pip", "list", "--format=json"], capture_output=True, text=True, check=True
    ).stdout
    installed = {p["name"].lower(): p["version"] for p in json.loads(out)}
    return {tool: installed.get(tool, "?") for tool in READERS}


def fmt_seconds(s: float | None) -> str:
    if s is None:
        return "-"
    return f"{s:.1f} s" if s < 60 else f"{int(s // 60)} min {s % 60:.0f} s"


def markdown(results, targets, versions, args) -> str:
    n_workers = len(targets)
    definers = sorted({d for d in targets.values() if d})
    lines = [
        "## Other tools",
        "",
        f"Measured by `bench/compare_tools.py` on {platform.node() or 'this machine'} "
        f"({os.cpu_count()} cores, Python {platform.python_version()}), SGLang source `{args.sglang}`, "
        f"timeout {args.timeout} s per run, one run each, tools run one at a time.",
        "Tool versions: " + ", ".join(f"{t} {v}" for t, v in versions.items()) + f" (venv `{args.venv}`).",
        "",
        f"Polymorphic targets of `self.model_worker.{METHOD}` in `{CALLER}`: `TpModelWorker` plus the "
        f"classes `SpeculativeAlgorithm.create_worker` returns, {n_workers} classes: "
        + ", ".join(f"`{w}`" + (f" (inherits `{d}`'s)" if d and d != w else "") for w, d in targets.items())
        + f"; {len(definers)} distinct definitions. A class counts as resolved when the tool has an edge "
        f"from `{CALLER}` to the `{METHOD}` that class runs.",
        "",
        "| input | tool | status | wall | peak RSS | callees of run_batch | model_worker targets resolved | other `forward_batch_generation` edges |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for r in results:
        desc = INPUTS[r.input][0]
        resolved = "-" if r.callees is None else f"{len(r.resolved)} / {n_workers}" + (
            f" ({', '.join(r.resolved)})" if r.resolved else ""
        )
        status = r.status + (f": `{r.note}`" if r.note else "")
        lines.append(
            f"| {desc} | {r.tool} | {status} | {fmt_seconds(r.wall_s)} | "
            f"{'-' if r.peak_rss_mb is None else f'{r.peak_rss_mb:,.0f} MB'} | "
            f"{'-' if r.callees is None else r.callees} | {resolved} | {', '.join(r.other_fbg) or '-'} |"
        )
    lines += ["", "Commands (run in the directory that holds `sglang/`, each wrapped as "
              f"`/usr/bin/time -v timeout --foreground -s KILL {args.timeout} bash -c '<command>'`):", "", "```"]
    seen = set()
    for r in results:
        if r.command not in seen:
            seen.add(r.command)
            lines.append(r.command.replace(str(Path(args.workdir).resolve()), "$OUT"))
    lines += ["```", "", "Reproduce: `python bench/compare_tools.py --sglang "
              f"{args.sglang} --venv {args.venv} --timeout {args.timeout}`.", ""]
    return "\n".join(lines)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--sglang", required=True, help="directory holding sglang/ (e.g. $SPECTRACE_CACHE_DIR/sglang/0.5.9)")
    parser.add_argument("--venv", default=".bench-venv", help="venv with pyan3, code2flow, jarviscg")
    parser.add_argument("--timeout", type=int, default=300)
    parser.add_argument("--tools", default="pyan3,code2flow,jarviscg")
    parser.add_argument("--inputs", default="subset,whole")
    parser.add_argument("--workdir", default="/tmp/spectrace-compare-tools")
    parser.add_argument("--markdown", help="write the 'Other tools' section here")
    parser.add_argument("--json", help="write raw results here")
    args = parser.parse_args(argv)
    workdir = Path(args.workdir).resolve()
    workdir.mkdir(parents=True, exist_ok=True)
    targets = polymorphic_targets(Path(args.sglang))
    print("targets:", targets, file=sys.stderr)
    versions = tool_versions(args.venv)
    results = []
    for input_name in args.inputs.split(","):
        for tool in args.tools.split(","):
            print(f"running {tool} on {input_name} ...", file=sys.stderr, flush=True)
            r = run_one(tool, input_name, args, targets, workdir)
            print(f"  {r.status} {fmt_seconds(r.wall_s)} rss={r.peak_rss_mb} resolved={r.resolved} "
                  f"other={r.other_fbg} {r.note}", file=sys.stderr, flush=True)
            results.append(r)
    text = markdown(results, targets, versions, args)
    if args.markdown:
        Path(args.markdown).write_text(text)
    if args.json:
        Path(args.json).write_text(json.dumps([r.__dict__ for r in results], indent=1))
    print(text)


if __name__ == "__main__":
    main()
