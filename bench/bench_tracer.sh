#!/usr/bin/env bash
# Times spectrace's own index and map on an SGLang version (default 0.5.23), whole process,
# cold (empty index cache, the wheel already unpacked) and warm (the same command again: a map is
# then written from its result cache; the rows with --no-result-cache build it from the warm
# index), with the CPU time of the process
# and its workers (what other work on a shared machine moves least) and peak memory; the wall time
# also as a ratio to the floor measured in the same run: plain `ast.parse` of every file of the tree
# on one core, as the interpreter runs it by default (the files read beforehand, the parse alone
# timed; the least of ROUNDS rounds, default 1; its CPU time printed beside, and the same parse
# split over two processes).
# With SUMMARIES_BASE=<commit>, first checks that tracer/index.py of that commit and of the
# working tree summarise every module of the tree into the same pickles (a faster walk must not
# change what it records), and that each light summary (no function bodies, what `index` writes)
# is its whole one lightened; it stops if one differs.
# With MAPS_BASE=<commit>, first checks that spectrace of that commit and of the working tree write
# the bench's two maps as the same json, byte for byte, each from an empty cache; it stops if not.
# Usage: [SUMMARIES_BASE=<commit>] [MAPS_BASE=<commit>] bash bench/bench_tracer.sh [VERSION [ROUNDS]]
set -euo pipefail
version="${1:-0.5.23}"
rounds="${2:-1}"
spectrace="${SPECTRACE:-spectrace}"
src_cache="${SPECTRACE_CACHE_DIR:-$HOME/.cache/spectrace}"
"$spectrace" index --sglang "$version" >/dev/null 2>&1 || true   # make sure the wheel is unpacked
tree="$src_cache/sglang/$version"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cold_cache() { rm -rf "$work/c"; mkdir -p "$work/c"; ln -s "$src_cache/sglang" "$work/c/sglang"; }
if [ -n "${SUMMARIES_BASE:-}" ]; then
  mkdir -p "$work/base"
  git -C "$(dirname "$0")/.." show "$SUMMARIES_BASE:tracer/index.py" >"$work/base/base_index.py"
  python3 - "$tree" "$work/base" <<'PY'
import gc, pickle, sys
from pathlib import Path
sys.path.insert(0, sys.argv[2])
import base_index
from spectrace.tracer import index
gc.disable()
root = Path(sys.argv[1])
rels = sorted(str(p.relative_to(root)) for p in (root / "sglang").rglob("*.py"))


def as_current(summary):
    """The base's summary as instances of the current classes, which pickle under their names."""
    summary.__class__ = index.ModuleSummary
    for f in summary.functions.values():
        f.__class__ = index.FuncInfo
    for c in summary.classes.values():
        c.__class__ = index.ClassInfo
    return summary


differ, light_differ = [], []
for rel in rels:
    data = (root / rel).read_bytes()
    old = pickle.dumps(as_current(base_index.summarize_source(data, rel)), protocol=pickle.HIGHEST_PROTOCOL)
    whole = index.summarize_source(data, rel)
    if old != pickle.dumps(whole, protocol=pickle.HIGHEST_PROTOCOL):
        differ.append(rel)
    if (pickle.dumps(index.lighten(whole), protocol=pickle.HIGHEST_PROTOCOL)
            != pickle.dumps(index.light_summary(data, rel), protocol=pickle.HIGHEST_PROTOCOL)):
        light_differ.append(rel)
print(f"summaries: {len(rels) - len(differ)} of {len(rels)} modules pickle the same as at the base", *differ[:10])
print(f"light summaries: {len(rels) - len(light_differ)} of {len(rels)} are their whole ones lightened",
      *light_differ[:10])
sys.exit(1 if differ or light_differ else 0)
PY
fi
if [ -n "${MAPS_BASE:-}" ]; then
  mkdir -p "$work/maps-base"
  git -C "$(dirname "$0")/.." archive "$MAPS_BASE" pyproject.toml spectrace tracer contracts patches \
    | tar -x -C "$work/maps-base"
  for args in "Scheduler.run_batch --depth 2" "--field next_draft_input"; do
    for c in c1 c2; do rm -rf "$work/maps-$c"; mkdir -p "$work/maps-$c"; ln -s "$src_cache/sglang" "$work/maps-$c/sglang"; done
    # shellcheck disable=SC2086 (the arguments are words)
    (cd "$work/maps-base" && SPECTRACE_CACHE_DIR="$work/maps-c1" PYTHONPATH="$work/maps-base" \
      python3 -m spectrace -q map --sglang "$version" $args --format json) >"$work/base.json"
    # shellcheck disable=SC2086
    SPECTRACE_CACHE_DIR="$work/maps-c2" "$spectrace" -q map --sglang "$version" $args --format json >"$work/new.json"
    if cmp -s "$work/base.json" "$work/new.json"; then
      echo "maps: map $args writes the same json as at $MAPS_BASE ($(wc -c <"$work/new.json") bytes)"
    else
      echo "maps: map $args writes other json than at $MAPS_BASE"; exit 1
    fi
  done
fi
floor=$(python3 - "$tree" "$rounds" <<'PY'
import ast, os, pathlib, sys, time
files = sorted(pathlib.Path(sys.argv[1]).rglob("*.py"))
texts = [p.read_bytes() for p in files]
best = best_cpu = None
for _ in range(int(sys.argv[2])):
    t0, c0 = time.perf_counter(), time.process_time()
    for text in texts:
        try:
            ast.parse(text)
        except (SyntaxError, ValueError):
            pass
    spent, cpu = time.perf_counter() - t0, time.process_time() - c0
    best = spent if best is None else min(best, spent)
    best_cpu = cpu if best_cpu is None else min(best_cpu, cpu)
# the same parse on two cores (every other file in each of two processes): what a whole-tree index
# on two cores costs before it summarises anything
best2 = None
for _ in range(int(sys.argv[2])):
    t0 = time.perf_counter()
    pids = []
    for half in (0, 1):
        pid = os.fork()
        if pid == 0:
            for text in texts[half::2]:
                try:
                    ast.parse(text)
                except (SyntaxError, ValueError):
                    pass
            os._exit(0)
        pids.append(pid)
    for pid in pids:
        os.waitpid(pid, 0)
    spent = time.perf_counter() - t0
    best2 = spent if best2 is None else min(best2, spent)
print(f"{best:.2f} {len(files)} {best_cpu:.2f} {best2:.2f}")
PY
)
read -r floor_s nfiles floor_cpu floor2_s <<<"$floor"
timed() {  # label, command...
  local label=$1; shift
  /usr/bin/time -f "%e %M %U %S" -o "$work/t" "$@" >/dev/null 2>"$work/err" || { cat "$work/err"; exit 1; }
  read -r secs kb user sys <"$work/t"
  printf '| %s | %.3f | %s s | %.2f s | %d MiB |\n' "$label" "$(echo "$secs / $floor_s" | bc -l)" "$secs" \
    "$(echo "$user + $sys" | bc -l)" $((kb / 1024))
}
echo "SGLang $version, $(nproc) cores, $(python3 --version 2>&1), load average $(cut -d' ' -f1-3 /proc/loadavg)"
echo "floor: ast.parse of the $nfiles files on one core, $floor_s s (CPU $floor_cpu s);" \
  "on two cores $floor2_s s, $(printf '%.3f' "$(echo "$floor2_s / $floor_s" | bc -l)") of the floor"
echo "| run | ratio to the floor | wall | CPU (user+sys, all processes) | peak RSS |"
echo "|---|---|---|---|---|"
export SPECTRACE_CACHE_DIR="$work/c"
cold_cache
timed "map Scheduler.run_batch --depth 2, cold" "$spectrace" map --sglang "$version" Scheduler.run_batch --depth 2 --format json
timed "map Scheduler.run_batch --depth 2, warm" "$spectrace" map --sglang "$version" Scheduler.run_batch --depth 2 --format json
timed "map Scheduler.run_batch --depth 2, warm, --no-result-cache" "$spectrace" map --sglang "$version" Scheduler.run_batch --depth 2 --format json --no-result-cache
cold_cache
timed "index (every module), cold" "$spectrace" index --sglang "$version"
timed "index (every module), warm" "$spectrace" index --sglang "$version"
timed "map Scheduler.run_batch --depth 2, after index" "$spectrace" map --sglang "$version" Scheduler.run_batch --depth 2 --format json
timed "map --field next_draft_input, after index" "$spectrace" map --sglang "$version" --field next_draft_input --format json
timed "map --field next_draft_input, warm" "$spectrace" map --sglang "$version" --field next_draft_input --format json
timed "map --field next_draft_input, warm, --no-result-cache" "$spectrace" map --sglang "$version" --field next_draft_input --format json --no-result-cache
