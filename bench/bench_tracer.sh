#!/usr/bin/env bash
# Times spectrace's own index and map on an SGLang version (default 0.5.23), whole process,
# cold (empty index cache, the wheel already unpacked) and warm, with peak memory.
# Usage: bash bench/bench_tracer.sh [VERSION]
set -euo pipefail
version="${1:-0.5.23}"
spectrace="${SPECTRACE:-spectrace}"
src_cache="${SPECTRACE_CACHE_DIR:-$HOME/.cache/spectrace}"
"$spectrace" index --sglang "$version" >/dev/null 2>&1 || true   # make sure the wheel is unpacked
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cold_cache() { rm -rf "$work/c"; mkdir -p "$work/c"; ln -s "$src_cache/sglang" "$work/c/sglang"; }
timed() {  # label, command...
  local label=$1; shift
  /usr/bin/time -f "%e %M" -o "$work/t" "$@" >/dev/null 2>"$work/err" || { cat "$work/err"; exit 1; }
  read -r secs kb <"$work/t"
  printf '| %s | %s s | %d MiB |\n' "$label" "$secs" $((kb / 1024))
}
echo "SGLang $version, $(nproc) cores, $(python3 --version 2>&1)"
echo "| run | wall | peak RSS |"
echo "|---|---|---|"
export SPECTRACE_CACHE_DIR="$work/c"
cold_cache
timed "map Scheduler.run_batch --depth 2, cold" "$spectrace" map --sglang "$version" Scheduler.run_batch --depth 2 --format json
timed "map Scheduler.run_batch --depth 2, warm" "$spectrace" map --sglang "$version" Scheduler.run_batch --depth 2 --format json
cold_cache
timed "index (every module), cold" "$spectrace" index --sglang "$version"
timed "index (every module), warm" "$spectrace" index --sglang "$version"
timed "map --field next_draft_input, warm" "$spectrace" map --sglang "$version" --field next_draft_input --format json
