#!/usr/bin/env bash
# `spectrace contracts check` over an SGLang release (default 0.5.23), cold (an empty spectrace
# cache: index, function facts and reports; the release's source already unpacked), warm (the same
# command again: the cached report, contracts/result_cache.py) and warm without the report cache
# (`--no-result-cache`: index and facts cached, the analysis run), whole process, against a floor
# measured in the same run: plain `ast.parse` of every .py file of the same release, read and
# parsed in one process pinned to one core. Prints wall time, CPU time (user + system, all
# processes), peak memory and the ratio of each run's wall time to the floor.
# Usage: bash bench/contracts_check.sh [VERSION] [WARM_RUNS]
set -euo pipefail
version="${1:-0.5.23}"
warm_runs="${2:-3}"
spectrace="${SPECTRACE:-spectrace}"
python="${PYTHON:-python3}"
src_cache="${SPECTRACE_CACHE_DIR:-$HOME/.cache/spectrace}"
"$spectrace" -q contracts check --sglang "$version" -o /dev/null || true   # make sure the source is unpacked
tree="$src_cache/sglang/$version"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
mkdir -p "$work/c" && ln -s "$src_cache/sglang" "$work/c/sglang"

floor() {  # seconds for ast.parse over the release's files, one core, best of 3
    taskset -c 0 "$python" - "$tree" <<'PY'
import ast, sys, time
from pathlib import Path
files = sorted(Path(sys.argv[1], "sglang").rglob("*.py"))
best = None
for _ in range(3):
    t0 = time.perf_counter()
    for f in files:
        try:
            ast.parse(f.read_bytes())
        except SyntaxError:
            pass
    t = time.perf_counter() - t0
    best = t if best is None else min(best, t)
print(f"{best:.3f} {len(files)}")
PY
}
run() {  # wall seconds, peak KiB and CPU seconds of one check (extra options: "$@")
    /usr/bin/time -f "%e %M %U %S" -o "$work/time" env SPECTRACE_CACHE_DIR="$work/c" \
        "$spectrace" -q contracts check --sglang "$version" -o /dev/null "$@" >/dev/null 2>"$work/err" || true
    if grep -q rror "$work/err"; then cat "$work/err" >&2; exit 1; fi
    cat "$work/time"
}
read -r floor_s nfiles < <(floor)
echo "SGLang $version, $(nproc) cores, load average $(cut -d' ' -f1-3 /proc/loadavg)"
echo "floor: ast.parse of $nfiles files on one core: ${floor_s} s"
report() {
    read -r wall kib user sys
    awk -v n="$1" -v w="$wall" -v k="$kib" -v u="$user" -v s="$sys" -v f="$floor_s" \
        'BEGIN { printf "%-10s %6.2f s wall, %6.2f s CPU, %4d MiB peak RSS, %.3f of the floor\n", n, w, u + s, k / 1024, w / f }'
}
run | report cold
for i in $(seq "$warm_runs"); do run | report "warm $i"; done
for i in $(seq "$warm_runs"); do run --no-result-cache | report "analysed $i"; done
echo "load average after: $(cut -d' ' -f1-3 /proc/loadavg)"
