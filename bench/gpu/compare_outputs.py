#!/usr/bin/env python3
"""Greedy output comparison and summary of a probe_dd.py results.jsonl.

    python3 compare_outputs.py RESULTS_JSONL [REFERENCE_NAME] > summary.md

For every configuration other than the reference (default: base), compares output_ids request by
request and concurrency by concurrency against the reference run (same prompts: probe_dd.py
draws them from a fixed seed in the same order, so timed runs are compared only between
configurations with the same --conc list; switch runs, with their own seed, always) and prints the match rate and the first
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
                rb = next(r for r in ref["runs"] if r["concurrency"] == rx["concurrency"])
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
            print(f"| {n} | {rx['concurrency']} | {same}/{len(ob)} | {tok_same}/{tok} | {sorted(div)[:8] or '-'} |")
    print()
    for n in names:
        for k, v in (recs[n].get("sched_stats") or {}).items():
            counts = {key: val for key, val in (v.get("counts") or {}).items() if key.startswith("dd_")}
            print(f"- {n} {k}: decode steps {counts or '(no dd counters)'}; token pool at idle: {v.get('pool_idle')}")


if __name__ == "__main__":
    main()
