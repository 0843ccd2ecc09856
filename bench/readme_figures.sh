#!/usr/bin/env bash
# The README's figures, on the machine it runs on: the main job (cold: an empty index cache, the
# release's source already unpacked; then warm), the unit tests, the whole suite (warm: the four
# releases already in the cache) and the cache's size after it.
# Usage: bash bench/readme_figures.sh            (SPECTRACE_CACHE_DIR: the cache the tests use)
#        bash bench/readme_figures.sh --first-run (an empty cache: the suite downloads the releases)
set -euo pipefail
cd "$(dirname "$0")/.."
cache="${SPECTRACE_CACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/spectrace}"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
if [ "${1:-}" = "--first-run" ]; then
  cache="$work/first-run-cache"
  mkdir -p "$cache"
fi
export SPECTRACE_CACHE_DIR="$cache"

# wall seconds, and the CPU seconds (user + system, children included) beside them
seconds() { /usr/bin/time -f "%e s (CPU %U + %S s)" -o "$work/t" "$@" >/dev/null 2>"$work/err" || { cat "$work/err"; exit 1; }; cat "$work/t"; }

echo "machine: $(nproc) cores, Python $(python -c 'import platform; print(platform.python_version())'), load average $(cut -d' ' -f1-3 /proc/loadavg)"
echo "spectrace: $(git rev-parse --short HEAD)$(git diff --quiet || echo ' (with local changes)')"
spectrace -q contracts check --sglang 0.5.9 -o /dev/null || true    # the release's source, unpacked once

mkdir -p "$work/cold" && ln -s "$cache/sglang" "$work/cold/sglang"
cold=$(SPECTRACE_CACHE_DIR="$work/cold" seconds spectrace -q map --sglang 0.5.9 Scheduler.run_batch --depth 2 -o "$work/run_batch.svg")
warm=$(SPECTRACE_CACHE_DIR="$work/cold" seconds spectrace -q map --sglang 0.5.9 Scheduler.run_batch --depth 2 -o "$work/run_batch.svg")
echo "map --sglang 0.5.9 Scheduler.run_batch --depth 2 -o run_batch.svg: cold ${cold}, warm ${warm}"
unit=$(seconds python -m pytest -q -n 2 -m "not slow" -p no:cacheprovider)
echo "python -m pytest -q -n 2 -m 'not slow': ${unit}"
suite=$(seconds python -m pytest -q -n 2 -p no:cacheprovider)
echo "python -m pytest -q -n 2: ${suite}"
echo "cache after the tests: $(du -sh "$cache" | cut -f1) in $cache"
