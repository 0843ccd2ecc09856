#!/usr/bin/env python3
"""Score `spectrace map --sglang V ROOT --depth 1` against the hand key bench/callgraph/sglang-<V>.json.

The key lists, per root, every call site in the root's body with the SGLang function(s) it can
reach (``edges``), and what is not scored (``not_in_key``: calls into torch / the stdlib / other
packages, constructors of classes without an ``__init__`` in source, nested functions, property
reads).  An edge spectrace draws to a property getter (one the key lists, or a ``property`` edge:
a read spectrace found) or to such a class is neutral: neither true nor false.  Edges to unresolved call sites (``?...``) are counted apart.

    python bench/callgraph/score_sglang.py --version 0.5.9 --version 0.5.23 --json /tmp/sglang-score.json
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent


def fmt(x):
    return "-" if x is None else f"{x:.2f}"


def ratio(a, b):
    return a / b if b else None


def score_version(version: str, spectrace: str) -> dict:
    key = json.loads((HERE / f"sglang-{version}.json").read_text())
    roots = {alias: r["qualname"] for alias, r in key["roots"].items()}
    proc = subprocess.run(
        [spectrace, "map", "--sglang", version, *roots.values(), "--depth", "1", "--format", "json"],
        capture_output=True, text=True,
    )
    if proc.returncode != 0:
        return {"version": version, "status": f"crash (exit {proc.returncode})", "detail": proc.stderr.strip()[-300:]}
    graph = json.loads(proc.stdout)
    found_by_root: dict[str, set[str]] = {q: set() for q in roots.values()}
    property_reads: dict[str, set[str]] = {q: set() for q in roots.values()}  # not in the key: neutral
    for e in graph["edges"]:
        if e["source"] in found_by_root:
            found_by_root[e["source"]].add(e["target"])
            if e.get("resolution") == "property":
                property_reads[e["source"]].add(e["target"])
    result = {"version": version, "status": "ok", "roots": {}}
    for alias, qual in roots.items():
        entry = key["roots"][alias]
        expected = {e["callee"] for e in entry["edges"]}
        neutral_props = {x["callee"] for x in entry["not_in_key"] if x.get("kind") == "property"}
        neutral_classes = {x["call"].rsplit(".", 1)[-1] for x in entry["not_in_key"]
                           if x["why"].startswith(x["call"].rsplit(".", 1)[-1] + ": class without __init__")
                           or "dataclass" in x["why"]}
        found = found_by_root[qual]
        unresolved = {t for t in found if t.startswith("?")}
        neutral = {t for t in found - unresolved - expected
                   if t in neutral_props or t in property_reads[qual] or t.rsplit(".", 1)[-1] in neutral_classes
                   or (t.endswith(".__init__") and t.rsplit(".", 2)[-2] in neutral_classes)}
        scored = found - unresolved - neutral
        tp = scored & expected
        sites = {e["callee"]: e["sites"][0] for e in entry["edges"]}
        result["roots"][alias] = {
            "key": len(expected), "found": len(scored), "tp": len(tp),
            "precision": ratio(len(tp), len(scored)), "recall": ratio(len(tp), len(expected)),
            "missed": sorted(f"{c} ({sites[c]})" for c in expected - scored),
            "false": sorted(scored - expected), "neutral": sorted(neutral), "unresolved": sorted(unresolved),
        }
    tp = sum(r["tp"] for r in result["roots"].values())
    result["overall"] = {
        "precision": ratio(tp, sum(r["found"] for r in result["roots"].values())),
        "recall": ratio(tp, sum(r["key"] for r in result["roots"].values())),
        "tp": tp, "key": sum(r["key"] for r in result["roots"].values()),
        "found": sum(r["found"] for r in result["roots"].values()),
    }
    return result


def short(name: str) -> str:
    return name.replace("sglang.srt.", "")


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--version", action="append", help="SGLang version with a key (default: all keys)")
    parser.add_argument("--spectrace", default="spectrace")
    parser.add_argument("--json", help="write the scores here")
    parser.add_argument("--details", action="store_true", help="list misses and false edges")
    args = parser.parse_args(argv)
    versions = args.version or sorted(p.stem.split("-", 1)[1] for p in HERE.glob("sglang-*.json"))
    results = [score_version(v, args.spectrace) for v in versions]
    for res in results:
        print(f"\n### SGLang {res['version']}\n")
        if res["status"] != "ok":
            print(f"{res['status']}: {res.get('detail', '')}")
            continue
        print("| root | key edges | spectrace edges | P | R | missed | false |")
        print("|---|---|---|---|---|---|---|")
        for alias, r in res["roots"].items():
            print(f"| {alias} | {r['key']} | {r['found']} | {fmt(r['precision'])} | {fmt(r['recall'])} | "
                  f"{len(r['missed'])} | {len(r['false'])} |")
        o = res["overall"]
        print(f"| **overall** | {o['key']} | {o['found']} | **{fmt(o['precision'])}** | **{fmt(o['recall'])}** | "
              f"{o['key'] - o['tp']} | {o['found'] - o['tp']} |")
        if args.details:
            for alias, r in res["roots"].items():
                for label in ("missed", "false", "neutral", "unresolved"):
                    if r[label]:
                        print(f"- {alias} {label}: " + ", ".join(short(x) for x in r[label]))
    if args.json:
        Path(args.json).write_text(json.dumps(results, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
