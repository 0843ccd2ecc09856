"""``spectrace run`` (start a program with the runtime shims) and ``spectrace report``."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path

import click

from spectrace.shims import runtime
from spectrace.errors import SpectraceError
from spectrace.output import check_appendable


# --------------------------------------------------------------------------------------------
# report reading: several files, several processes (TP ranks) per file
# --------------------------------------------------------------------------------------------

@dataclass
class ContractRow:
    id: str
    checks: int = 0
    violations: int = 0
    skipped: int = 0
    first: dict | None = None
    consumer: dict | None = None
    check: str | None = None
    ranks: set = field(default_factory=set)


@dataclass
class MergedReport:
    rows: dict[str, ContractRow]
    inactive: dict[str, str]
    processes: list[dict]
    bad_lines: int = 0
    # processes whose last summary is periodic (killed, e.g. SGLang's shutdown SIGKILLs its
    # schedulers): their counts stop at that summary
    unfinished: list[dict] = field(default_factory=list)

    @property
    def total_violations(self) -> int:
        return sum(r.violations for r in self.rows.values())

    @property
    def total_checks(self) -> int:
        return sum(r.checks for r in self.rows.values())


def _rank_label(rank: dict | None) -> str:
    if not rank:
        return "-"
    parts = [f"{k.replace('_rank', '')}{v}" for k, v in rank.items() if k.endswith("_rank") and k != "attn_tp_rank"]
    return ",".join(parts) or "-"


def _counts_error(ev: dict, key: str) -> str | None:
    counts = ev.get(key)
    if counts is None:
        return None
    if not isinstance(counts, dict):
        return f"'{key}' is not an object"
    if not all(isinstance(n, int) and not isinstance(n, bool) for n in counts.values()):
        return f"'{key}' holds a count that is not an integer"
    return None


def _entries_error(ev: dict, key: str) -> str | None:
    entries = ev.get(key)
    if entries is None:
        return None
    if not isinstance(entries, list) or not all(isinstance(e, dict) and isinstance(e.get("id"), str) for e in entries):
        return f"'{key}' is not a list of objects with an 'id'"
    return None


def event_shape_error(ev: object) -> str | None:
    """Why a JSON value is not an event the shims write (report_writer, checks.py), or None."""
    if not isinstance(ev, dict):
        return f"a JSON {type(ev).__name__}, not an object"
    kind = ev.get("event")
    if not isinstance(kind, str):
        return "no 'event' name"
    if ev.get("rank") is not None and not isinstance(ev["rank"], dict):
        return "'rank' is not an object"
    if kind == "start":
        return _entries_error(ev, "contracts") or _entries_error(ev, "inactive")
    if kind == "summary":
        return _counts_error(ev, "checks") or _counts_error(ev, "violations") or _counts_error(ev, "skipped")
    if kind == "violation" and not isinstance(ev.get("contract"), str):
        return "a violation without a 'contract' name"
    return None


def load_reports(paths: list[str | os.PathLike]) -> MergedReport:
    """Merge JSON-lines reports: per process the last summary counts; processes add up."""
    starts: dict[tuple, dict] = {}
    summaries: dict[tuple, dict] = {}
    violations: list[dict] = []
    bad = 0
    for path in paths:
        p = Path(path)
        if not p.is_file():
            raise SpectraceError(f"no such report: {p}")
        with open(p, encoding="utf-8", errors="replace") as fh:
            for number, line in enumerate(fh, 1):
                line = line.strip()
                if not line:
                    continue
                try:
                    ev = json.loads(line)
                except json.JSONDecodeError:
                    bad += 1  # a process killed mid-write leaves at most one partial line
                    continue
                problem = event_shape_error(ev)
                if problem:
                    raise SpectraceError(f"{p}:{number}: not a shim report event: {problem}")
                key = (str(p), ev.get("pid"), json.dumps(ev.get("rank"), sort_keys=True))
                kind = ev.get("event")
                if kind == "start":
                    starts[key] = ev
                elif kind == "summary":
                    summaries[key] = ev
                elif kind == "violation":
                    violations.append(ev)
    if not starts and not summaries and not violations:
        raise SpectraceError("the report holds no shim events (did the program import SGLang's scheduler?)")
    rows: dict[str, ContractRow] = {}
    inactive: dict[str, str] = {}
    processes = []
    for key, ev in starts.items():
        processes.append({"pid": key[1], "rank": ev.get("rank"), "sglang": ev.get("sglang"),
                          "mode": ev.get("mode"), "return_sites": ev.get("return_sites")})
        for c in ev.get("contracts", []):
            row = rows.setdefault(c["id"], ContractRow(c["id"]))
            row.consumer = row.consumer or c.get("consumer")
            row.check = row.check or c.get("check")
        for c in ev.get("inactive", []):
            inactive.setdefault(c["id"], c.get("reason", ""))
    unfinished = [{"pid": key[1], "rank": ev.get("rank"), "steps": ev.get("steps")}
                  for key, ev in summaries.items() if not ev.get("final")]
    for key, ev in summaries.items():
        for cid, n in (ev.get("checks") or {}).items():
            row = rows.setdefault(cid, ContractRow(cid))
            row.checks += int(n)
            row.ranks.add(_rank_label(ev.get("rank")))
        for cid, n in (ev.get("violations") or {}).items():
            rows.setdefault(cid, ContractRow(cid)).violations += int(n)
        for cid, n in (ev.get("skipped") or {}).items():
            if cid in rows:
                rows[cid].skipped += int(n)
    seen_in_summary = {(k, cid) for k, ev in summaries.items() for cid, n in (ev.get("violations") or {}).items() if n}
    for ev in sorted(violations, key=lambda e: (e.get("time", 0), e.get("step", 0))):
        row = rows.setdefault(ev["contract"], ContractRow(ev["contract"]))
        if row.first is None:
            row.first = ev
        # a process killed before any summary still counts its violations
        rank = json.dumps(ev.get("rank"), sort_keys=True)
        if not any(k[1] == ev.get("pid") and k[2] == rank and cid == ev["contract"] for k, cid in seen_in_summary):
            row.violations = max(row.violations, 1)
    for cid in list(inactive):
        if cid in rows and rows[cid].checks:
            inactive.pop(cid)
    return MergedReport(rows, inactive, processes, bad, unfinished)


def _site(site: dict | None) -> str:
    if not site:
        return "?"
    return f"{site.get('file', '?')}:{site.get('line', '?')}"


def render_table(rep: MergedReport) -> str:
    header = ["contract", "checks", "violations", "first violation (step, rank): consumer <- producer"]
    lines = []
    for row in sorted(rep.rows.values(), key=lambda r: r.id):
        if row.first:
            f = row.first
            prod = f.get("producer") or {}
            ret = prod.get("return_site")
            prod_text = _site(prod)
            if prod.get("qualname"):
                prod_text += f" {prod['qualname']}"
            if ret:
                prod_text += f" (return at {_site(ret)})"
            first = (f"step {f.get('step')} {_rank_label(f.get('rank'))}: {f.get('detail')}; "
                     f"{_site(f.get('consumer'))} {(f.get('consumer') or {}).get('qualname', '')} <- {prod_text}")
        else:
            first = "-"
        lines.append([row.id, str(row.checks), str(row.violations), first])
    widths = [max(len(x[i]) for x in [header] + lines) for i in range(3)]
    out = []
    for cells in [header, ["-" * w for w in widths] + ["-" * 10]] + lines:
        out.append("  ".join(c.ljust(widths[i]) if i < 3 else c for i, c in enumerate(cells)).rstrip())
    ranks = sorted({_rank_label(p.get("rank")) for p in rep.processes})
    versions = sorted({str(p.get("sglang")) for p in rep.processes})
    out.append("")
    out.append(f"{len(rep.processes)} process(es), ranks {', '.join(ranks) or '-'}, SGLang {', '.join(versions) or '?'}; "
               f"{rep.total_checks} checks, {rep.total_violations} violations")
    if rep.inactive:
        out.append("not checked in this SGLang (catalog contracts whose consumer is absent or not evaluable):")
        for cid, reason in sorted(rep.inactive.items()):
            out.append(f"  {cid}: {reason}")
    if rep.unfinished:
        who = ", ".join(f"pid {u['pid']} ({_rank_label(u.get('rank'))}, {u.get('steps')} steps)"
                        for u in rep.unfinished)
        out.append(f"ended without a final summary (killed): {who}; their counts stop at the "
                   "last periodic summary")
    if rep.bad_lines:
        out.append(f"({rep.bad_lines} unreadable line(s) skipped)")
    return "\n".join(out)


REPORT_SCHEMA_VERSION = 1  # docs/schemas/report.schema.json: `spectrace report --json`


@click.command("report")
@click.argument("files", nargs=-1, required=True, type=click.Path(dir_okay=False))
@click.option("--json", "as_json", is_flag=True, help="Print the merged counts as JSON.")
def report_command(files, as_json):
    """Print the shims' reports as a table; exit 1 on a violation, 2 on input that is not a report.

    Several files, or one file written by several processes (TP ranks), are merged; the exit
    status is 1 when any contract was violated, 2 when a file is missing or holds a JSON line
    that is no shim event.
    """
    rep = load_reports(list(files))
    if as_json:
        click.echo(json.dumps({
            "schema": "spectrace-report", "schema_version": REPORT_SCHEMA_VERSION,
            "contracts": {r.id: {"checks": r.checks, "violations": r.violations, "skipped": r.skipped,
                                 "consumer": r.consumer, "first_violation": r.first}
                          for r in rep.rows.values()},
            "inactive": rep.inactive, "processes": rep.processes, "unfinished": rep.unfinished,
            "checks": rep.total_checks, "violations": rep.total_violations}, indent=1, default=str))
    else:
        click.echo(render_table(rep))
    sys.exit(1 if rep.total_violations else 0)


@click.command("run", context_settings={"ignore_unknown_options": True, "allow_interspersed_args": False})
@click.option("--mode", type=click.Choice(runtime.MODES), default="warn", show_default=True,
              help="warn: log once per contract; raise: ContractViolation stops the step; record: report only.")
@click.option("--report", "report_path", type=click.Path(dir_okay=False), default="spectrace-shims.jsonl",
              show_default=True, help="JSON-lines report (appended; several processes share it).")
@click.option("--catalog", default=None,
              help="Contract catalog dir or file, or several joined with os.pathsep "
                   "(default: the packaged contracts/catalog).")
@click.option("--value-sample", type=int, default=16, show_default=True,
              help="Run the device-side new_seq_lens value check on every N-th decode step (0: never).")
@click.option("--pool-stats/--no-pool-stats", default=False,
              help="Add KV-pool counters to SGLang's get_server_info() (used by spectrace bench).")
@click.argument("command", nargs=-1, required=True, type=click.UNPROCESSED)
def run_command(mode, report_path, catalog, value_sample, pool_stats, command):
    """Run COMMAND with the shims in every Python process.

    The runtime shims are active in every Python process COMMAND starts, SGLang's spawned
    scheduler subprocesses included; COMMAND is typically ``python -m sglang.launch_server ...``.

    \b
      spectrace run --mode warn --report shims.jsonl -- python -m sglang.launch_server ...
      spectrace report shims.jsonl
    """
    if value_sample < 0:
        raise SpectraceError("--value-sample must be >= 0")
    check_appendable(report_path.replace("{pid}", str(os.getpid())))  # before COMMAND starts, not after it ran
    try:
        runtime.load_runtime_catalog(catalog)
    except SpectraceError as exc:
        raise SpectraceError(f"cannot read the contract catalog: {exc}") from exc
    env = runtime.child_environment(mode, report_path, catalog, value_sample, pool_stats)
    try:
        proc = subprocess.Popen(list(command), env=env)
    except FileNotFoundError as exc:
        raise SpectraceError(f"command not found: {command[0]}") from exc
    # the child gets Ctrl-C from the terminal itself; we only wait for it
    previous = signal.signal(signal.SIGINT, signal.SIG_IGN)
    try:
        rc = proc.wait()
    finally:
        signal.signal(signal.SIGINT, previous)
    if Path(report_path).is_file():
        try:
            rep = load_reports([report_path])
            click.echo(f"spectrace: {rep.total_checks} checks, {rep.total_violations} violations "
                       f"in {len(rep.processes)} process(es); `spectrace report {report_path}` for the table",
                       err=True)
        except SpectraceError as exc:  # the program's exit code still wins
            click.echo(f"spectrace: {exc}", err=True)
    sys.exit(rc if rc >= 0 else 128 - rc)
