#!/usr/bin/env bash
# Contract extraction and the catalog check over an SGLang release (default 0.5.23): cold (an empty
# spectrace cache: index and libcst facts; the release's source already unpacked) and warm, whole
# process, wall time and peak memory.
# Usage: bash bench/contracts_check.sh [VERSION]
set -euo pipefail
version="${1:-0.5.23}"
spectrace="${SPECTRACE:-spectrace}"
src_cache="${SPECTRACE_CACHE_DIR:-$HOME/.cache/spectrace}"
"$spectrace" -q contracts check --sglang "$version" -o /dev/null || true   # make sure the source is unpacked
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
mkdir -p "$work/c" && ln -s "$src_cache/sglang" "$work/c/sglang"
run() { /usr/bin/time -f "%e s wall, %M KiB max RSS" env SPECTRACE_CACHE_DIR="$work/c" \
        "$spectrace" -q contracts check --sglang "$version" -o /dev/null 2>&1 | grep -E "s wall|rror"; }
echo "SGLang $version, $(nproc) cores"
echo -n "cold: "; run
for i in 1 2 3; do echo -n "warm $i: "; run; done
