#!/usr/bin/env bash
# Contract extraction over SGLang 0.5.23 (scheduler + speculative packages and every file naming
# GenerationBatchResult): cold (empty spectrace cache: index and libcst facts) and warm, whole process.
# Usage: bench/contracts_extract.sh [SGLANG_ROOT]   (default: $SPECTRACE_CACHE_DIR/sglang/0.5.23)
set -euo pipefail
ROOT="${1:-${SPECTRACE_CACHE_DIR:-$HOME/.cache/spectrace}/sglang/0.5.23}"
SPECTRACE="${SPECTRACE:-$(command -v spectrace || echo spectrace)}"
COLD_CACHE="$(mktemp -d)"
trap 'rm -rf "$COLD_CACHE"' EXIT
run() { /usr/bin/time -f "%e s wall, %M KiB max RSS" env SPECTRACE_CACHE_DIR="$COLD_CACHE" \
        "$SPECTRACE" contracts extract --sglang "$ROOT" --format json -o /dev/null 2>&1 | grep -E "s wall|rror"; }
echo "cores: $(nproc)"
echo -n "cold: "; run
for i in 1 2 3; do echo -n "warm $i: "; run; done
