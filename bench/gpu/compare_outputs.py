#!/usr/bin/env python3
"""Greedy output comparison and summary of a probe_dd.py results.jsonl.

    python3 compare_outputs.py RESULTS_JSONL [REFERENCE_NAME] > summary.md

For every configuration other than the reference (default: base), compares output_ids request by
request and concurrency by concurrency against the reference run (same prompts: probe_dd.py
draws them from a fixed seed in the same order) and prints the match rate and the first
diverging position of each mismatching request.  Also prints the throughput table and the
scheduler-side counters (disabled/enabled decode steps, token pool at idle).
"""
import json
import sys


def main():
    path = sys.argv[1]
    ref_name = sys.argv[2] if len(sys.argv) > 2 else "base"
    recs = {}
    for line in open(path):
        r = json.loads(line)
        recs[r["name"]] = r
    ref = recs[ref_name]
    names = list(recs)
    print("| concurrency | " + " | ".join(f"{n} tok/s" for n in names) + " |")
    print("|---" * (len(names) + 1) + "|")
    by_c = {}
    for n in names:
        for run in recs[n]["runs"]:
            by_c.setdefault(str(run["concurrency"]), {})[n] = run["tok_per_s"]
    for c, row in by_c.items():
        print(f"| {c} | " + " | ".join(f"{row.get(n, '-')}" for n in names) + " |")
    print()
    print("| config | concurrency | identical requests | equal tokens | first divergences |")
    print("|---|---|---|---|---|")
    for n in names:
        if n == ref_name:
            continue
        for rb, rx in zip(ref["runs"], recs[n]["runs"]):
            if rb["concurrency"] != rx["concurrency"] or "output_ids" not in rx:
                continue
            ob, ox = rb["output_ids"], rx["output_ids"]
            same = sum(a == b for a, b in zip(ob, ox))
            tok_same = sum(sum(x == y for x, y in zip(a, b)) for a, b in zip(ob, ox))
            tok = sum(len(a) for a in ob)
            div = []
            for a, b in zip(ob, ox):
                if a != b:
                    div.append(next((i for i, (x, y) in enumerate(zip(a, b)) if x != y), min(len(a), len(b))))
            print(f"| {n} | {rb['concurrency']} | {same}/{len(ob)} | {tok_same}/{tok} | {sorted(div)[:8] or '-'} |")
    print()
    for n in names:
        for k, v in (recs[n].get("sched_stats") or {}).items():
            counts = {key: val for key, val in (v.get("counts") or {}).items() if key.startswith("dd_")}
            print(f"- {n} {k}: decode steps {counts or '(no dd counters)'}; token pool at idle: {v.get('pool_idle')}")


if __name__ == "__main__":
    main()
