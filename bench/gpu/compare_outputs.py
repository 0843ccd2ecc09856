#!/usr/bin/env python3
"""Greedy output comparison and summary of a probe_dd.py results.jsonl.

    python3 compare_outputs.py RESULTS_JSONL [REFERENCE_NAME] > summary.md

For every configuration other than the reference (default: base), compares output_ids request by
request and concurrency by concurrency against the reference run (same prompts: probe_dd.py
draws them from a fixed seed in the same order, so timed runs are compared only between
configurations with the same --conc list; switch runs, with their own seed, always) and prints the match rate and the first
diverging position of each mismatching request.  Also prints the throughput table and the
scheduler-side counters (disabled/enabled decode steps, token pool at idle).

    python3 compare_outputs.py RESULTS_JSONL REF [--only a,b,c] [--better-of base,aon]

With --reps (probe_dd.py), timed runs are paired by (concurrency, rep), and the throughput table
shows the median and the range of the repetitions.  --better-of names the configurations whose
larger median at each concurrency is the goal's denominator (issue 5: the better of baseline and
always-on); every configuration's median is then given as a ratio to it, with the ratio's range
over the repetitions (rep r against the better configuration's rep r).  --only keeps the named
configurations (the reference is always kept).  --mean-of base,base2 gives every median as a ratio to
the mean of the named configurations' medians: two engines of one configuration differ by 1-14 %.

    python3 compare_outputs.py RESULTS_JSONL REF --logs OUT/log-aon.txt,OUT/log-abase.txt

--logs adds the configurations of phases that were killed after some timed runs (probe_dd.py writes
results.jsonl only at the end): their tok/s from the log's "[probe] RUN" lines, without outputs, so
they join the throughput tables and not the output comparison.  A configuration that results.jsonl
has is kept from there.
"""
import argparse
import ast
import json
import re
import statistics
import sys
from pathlib import Path

# the checkout's spectrace.bench (standard library only): C=1 request times in one table format
sys.path.append(str(Path(__file__).resolve().parents[2]))
from spectrace.bench import render_request_latency  # noqa: E402

RUN_LINE = re.compile(r"^\[probe\] RUN (\S+) (?:conc=\S+|switch run): (\{.*\})\s*$")


def runs_from_log(path: str) -> dict:
    """{name: record} from one probe_dd.py log's RUN lines (the record holds runs only)."""
    recs = {}
    with open(path, errors="replace") as f:
        for line in f:
            m = RUN_LINE.match(line)
            if m:
                recs.setdefault(m.group(1), {"name": m.group(1), "runs": [], "from_log": path})["runs"].append(
                    ast.literal_eval(m.group(2)))
    return recs


def timed_runs(rec: dict) -> dict:
    """{concurrency: {rep: tok/s}} of a configuration's runs; a switch run "switch64#2" is
    rep 1 of "switch64"."""
    out = {}
    for run in rec["runs"]:
        c = run["concurrency"]
        if isinstance(c, int):
            out.setdefault(c, {})[run.get("rep", 0)] = run["tok_per_s"]
        else:
            key, _, n = str(c).partition("#")
            out.setdefault(key, {})[int(n) - 1 if n else 0] = run["tok_per_s"]
    return out


def cell(values: list) -> str:
    med = statistics.median(values)
    if len(values) == 1:
        return f"{med:,.1f}"
    return f"{med:,.1f} ({min(values):,.0f}–{max(values):,.0f})"


def configurations(arg: str, recs: dict, flag: str, results: str) -> list:
    """The comma-separated configuration names of a flag, each one present."""
    names = [n for n in arg.split(",") if n]
    missing = [n for n in names if n not in recs]
    if missing:
        raise SystemExit(f"{flag}: no configuration {missing} in {results}")
    return names


def concurrencies(runs: dict) -> list:
    """Every configuration's concurrencies: the numbers in order, then the switch runs."""
    return sorted({c for r in runs.values() for c in r}, key=lambda c: (isinstance(c, str), str(c).zfill(6)))


def ratio_table_head(title: str, column: str, names: list) -> None:
    print()
    print(title)
    print()
    print(f"| concurrency | {column} | " + " | ".join(names) + " |")
    print("|---" * (len(names) + 2) + "|")


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("results")
    ap.add_argument("ref", nargs="?", default="base")
    ap.add_argument("--only", default="", help="comma-separated configurations to keep")
    ap.add_argument("--better-of", default="", help="comma-separated configurations: the goal's denominator")
    ap.add_argument("--mean-of", default="", help="comma-separated configurations: also each median as a ratio "
                    "to the mean of their medians (two engines of one reference configuration)")
    ap.add_argument("--logs", default="", help="comma-separated probe logs: configurations results.jsonl lacks")
    args = ap.parse_args(argv)
    recs = {}
    try:
        with open(args.results) as f:
            for line in f:
                r = json.loads(line)
                recs[r["name"]] = r
        logged = {path: runs_from_log(path) for path in filter(None, args.logs.split(","))}
    except (OSError, ValueError, KeyError, SyntaxError) as e:
        raise SystemExit(f"compare_outputs: cannot read the results or a log: {e!r}")
    for path, from_log in logged.items():
        for name, rec in from_log.items():
            if name not in recs:
                recs[name] = rec
                print(f"({name}: tok/s from the RUN lines of {path}; its phase wrote no results)")
                print()
    if args.ref not in recs:
        raise SystemExit(f"compare_outputs: no configuration {args.ref!r} in {args.results}")
    ref_name = args.ref
    keep = [n for n in args.only.split(",") if n]
    if keep:
        recs = {n: r for n, r in recs.items() if n in keep or n == ref_name}
    ref = recs[ref_name]
    names = list(recs)
    print("| concurrency | " + " | ".join(f"{n} tok/s" for n in names) + " |")
    print("|---" * (len(names) + 1) + "|")
    by_c = {}
    for n in names:
        for run in recs[n]["runs"]:
            by_c.setdefault(str(run["concurrency"]), {}).setdefault(n, []).append(run["tok_per_s"])
    for c, row in by_c.items():
        print(f"| {c} | " + " | ".join(cell(row[n]) if n in row else "-" for n in names) + " |")
    runs = {n: timed_runs(recs[n]) for n in names}
    better = configurations(args.better_of, recs, "--better-of", args.results)
    if better:
        ratio_table_head(f"Ratio to the better of {' / '.join(better)} at each concurrency (median over "
                         "repetitions; range: rep r against rep r of the better one):", "better", names)
        for c in concurrencies(runs):
            meds = {n: statistics.median(runs[n][c].values()) for n in better if c in runs[n]}
            if not meds:
                continue
            best = max(meds, key=meds.get)
            cells = []
            for n in names:
                if c not in runs[n]:
                    cells.append("-")
                    continue
                ratio = statistics.median(runs[n][c].values()) / meds[best]
                per_rep = [v / runs[best][c][r] for r, v in runs[n][c].items() if r in runs[best][c]]
                cells.append(f"{ratio:.3f}" + (f" ({min(per_rep):.3f}–{max(per_rep):.3f})" if len(per_rep) > 1 else ""))
            print(f"| {c} | {best} | " + " | ".join(cells) + " |")
    mean_of = configurations(args.mean_of, recs, "--mean-of", args.results)
    if mean_of:
        ratio_table_head(f"Median as a ratio to the mean of the medians of {' and '.join(mean_of)}:", "mean", names)
        for c in concurrencies(runs):
            if not all(c in runs[n] for n in mean_of):
                continue
            mean = statistics.mean(statistics.median(runs[n][c].values()) for n in mean_of)
            cells = [f"{statistics.median(runs[n][c].values()) / mean:.3f}" if c in runs[n] else "-" for n in names]
            print(f"| {c} | {mean:,.1f} | " + " | ".join(cells) + " |")
    print("\n".join(render_request_latency([recs[n] for n in names], between="the previous concurrency's run")))
    print()
    print("| config | concurrency | identical requests | equal tokens | first divergences |")
    print("|---|---|---|---|---|")
    ref_timed = [r["concurrency"] for r in ref["runs"] if isinstance(r["concurrency"], int)]
    for n in names:
        if n == ref_name:
            continue
        timed = [r["concurrency"] for r in recs[n]["runs"] if isinstance(r["concurrency"], int)]
        for rx in recs[n]["runs"]:
            if "output_ids" not in rx:
                continue
            if isinstance(rx["concurrency"], int):
                # timed runs draw prompts from one seeded stream after a warm-up sized by the
                # largest concurrency: comparable only when both used the same --conc list
                if timed != ref_timed:
                    continue
                rb = next((r for r in ref["runs"] if r["concurrency"] == rx["concurrency"]
                           and r.get("rep", 0) == rx.get("rep", 0)), None)
                if rb is None or "output_ids" not in rb:
                    continue
            else:
                # switch runs ("switch64", "switch64#2") draw their own fixed prompts
                key = str(rx["concurrency"]).split("#")[0]
                rb = next((r for r in ref["runs"] if str(r["concurrency"]) == key), None)
                if rb is None or "output_ids" not in rb:
                    continue
            ob, ox = rb["output_ids"], rx["output_ids"]
            same = sum(a == b for a, b in zip(ob, ox))
            tok_same = sum(sum(x == y for x, y in zip(a, b)) for a, b in zip(ob, ox))
            tok = sum(len(a) for a in ob)
            div = []
            for a, b in zip(ob, ox):
                if a != b:
                    div.append(next((i for i, (x, y) in enumerate(zip(a, b)) if x != y), min(len(a), len(b))))
            label = f"{rx['concurrency']}" + (f" rep {rx['rep']}" if rx.get("rep") else "")
            print(f"| {n} | {label} | {same}/{len(ob)} | {tok_same}/{tok} | {sorted(div)[:8] or '-'} |")
    print()
    for n in names:
        for k, v in (recs[n].get("sched_stats") or {}).items():
            counts = {key: val for key, val in (v.get("counts") or {}).items() if key.startswith("dd_")}
            print(f"- {n} {k}: decode steps {counts or '(no dd counters)'}; token pool at idle: {v.get('pool_idle')}")


if __name__ == "__main__":
    main()
