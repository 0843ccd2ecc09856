#!/usr/bin/env bash
# Device side of the runtime-shims proof on SGLang 0.5.12 (docs/results/shims-0.5.12.md).
# Run from the checkout's root on the GPU machine, with the bundle carried in .gpu/:
#   bash docs/results/shims-0.5.12-gpu.sh .gpu/b0512 proof   # EAGLE-3 + baseline with shims; overhead
#   bash docs/results/shims-0.5.12-gpu.sh .gpu/b0512 fault   # the naive disable, warn and raise
#   bash docs/results/shims-0.5.12-gpu.sh .gpu/b0512 tp2     # --tp 2 (two-GPU kind), ranks merged
#   bash docs/results/shims-0.5.12-gpu.sh .gpu/b0512 table   # issue 5's table with the shims on
#   bash docs/results/shims-0.5.12-gpu.sh .gpu/b0512 table-agree   # the same, drafts always accepted
#   bash docs/results/shims-0.5.12-gpu.sh .gpu/b0512 metrics   # the sglang:spec_disabled* gauges' values
#   bash docs/results/shims-0.5.12-gpu.sh .gpu/b0512 table-pk  # the KV-only prefill under the shims
#   REPS=3 SEQ_REPS=4 BUDGET_S=380 bash docs/results/shims-0.5.12-gpu.sh .gpu/b0512 table-c1   # C=1: two patched engines, each after a baseline
# The SGLang set-up is the one of the GPU recipe (.gpu/recipe/gpu-run.sh, its first 45 lines).
set -uo pipefail
BUNDLE=${1:?bundle dir}
PLAN=${2:-proof}
OUT=${OUT:-/tmp/shims-out}
BUDGET_S=${BUDGET_S:-300}
mkdir -p "$OUT"
t0=$(date +%s)
export PYTHONUNBUFFERED=1 NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
SITE=/tmp/site-shims-$(basename "$BUNDLE")  # not /tmp/site: a warm machine may hold another bundle there
rm -rf "$SITE" && mkdir -p "$SITE" && tar -xJf "$BUNDLE/site.tar.xz" -C "$SITE" || { echo "unpack failed"; exit 2; }
export TVM_FFI_CACHE_DIR=/tmp/jitcache/tvm-ffi TRITON_CACHE_DIR=/tmp/jitcache/triton FLASHINFER_WORKSPACE_BASE=/tmp/jitcache/fi
mkdir -p /tmp/jitcache
[ -f "$BUNDLE/jitcache.tar.xz" ] && tar -xJf "$BUNDLE/jitcache.tar.xz" -C /tmp/jitcache && echo "[shims] JIT caches restored"
rm -rf /tmp/stubs-active && mkdir -p /tmp/stubs-active
for n in $(cat "$BUNDLE/STUBS" 2>/dev/null); do
  [ -d ".gpu/recipe/stubs/$n" ] || continue
  PYTHONPATH=$SITE python3 -c "import $n" 2>/dev/null || ln -s "$PWD/.gpu/recipe/stubs/$n" "/tmp/stubs-active/$n"
done
ldconfig -p 2>/dev/null | grep -q 'libnuma\.so\.1 ' || export LD_LIBRARY_PATH=$SITE/_libs${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
# spectrace from this checkout, laid out as installed (spectrace.contracts is contracts/)
rm -rf /tmp/spt && mkdir -p /tmp/spt/spectrace && cp -r spectrace/. /tmp/spt/spectrace/
for d in contracts tracer patches; do cp -r "$d" "/tmp/spt/spectrace/$d"; done
export PYTHONPATH=/tmp/spt:$SITE:/tmp/stubs-active
export PYTHONSAFEPATH=1  # the checkout's spectrace/ (without contracts/) must not shadow /tmp/spt
python3 -c "import sglang, torch, spectrace.contracts.runtime as r; print('[shims] sglang', sglang.__version__, 'torch', torch.__version__, 'gpus', torch.cuda.device_count(), 'monitoring', hasattr(__import__('sys'), 'monitoring'))"
echo "[shims] set-up $(( $(date +%s) - t0 ))s"
left=$(( BUDGET_S - ($(date +%s) - t0) ))
CAT=contracts/catalog:docs/results/shims-catalog-0.5.12.toml  # project catalog first; ours adds 0.5.12 output-processor reads
[ -z "$(ls contracts/catalog/*.toml 2>/dev/null)" ] && CAT=docs/results/shims-catalog-0.5.12.toml
echo "[shims] catalog $CAT"
apply_series() {  # the dynamic-disable series, patch -p1 into the directory holding sglang/
  for p in $(grep -v '^#' patches/dynamic-disable/0.5.12/series); do
    patch -p1 --forward --batch -d "$1" -i "$PWD/patches/dynamic-disable/0.5.12/$p" >/dev/null || { echo "[shims] patch $p FAILED"; exit 3; }
  done
  echo "[shims] series applied to $1"
}
case "$PLAN" in
  proof)
    timeout $(( left - 15 )) python3 -m spectrace bench --dummy-model 8b --configs docs/results/shims-0.5.12-bench.toml \
      --catalog "$CAT" --seq-reps 4 --timeout 200 --reference eagle3 -o "$OUT/bench" 2>&1 | tee "$OUT/run.log" | grep -v -i warn ;;
  fault)
    # no warm-up: its 16-request batch would already be "disabled"; C=1 runs healthy steps first
    timeout $(( left - 15 )) python3 -m spectrace bench --dummy-model 8b --configs docs/results/shims-0.5.12-fault.toml \
      --catalog "$CAT" --seq-reps 2 --no-warmup --timeout 100 --no-plot -o "$OUT/bench" 2>&1 | tee "$OUT/run.log" | grep -v -i warn ;;
  final)
    # the dynamic-disable series applied to a copy of the bundle's sglang, put first on PYTHONPATH
    rm -rf /tmp/site-patched && mkdir -p /tmp/site-patched && cp -r "$SITE/sglang" /tmp/site-patched/
    apply_series /tmp/site-patched
    timeout $(( left - 15 )) python3 -m spectrace bench --dummy-model 8b --configs docs/results/final-0.5.12.toml \
      --catalog "$CAT" --seq-reps 2 --no-warmup --timeout 150 --no-plot -o "$OUT/bench" 2>&1 | tee "$OUT/run.log" | grep -v -i warn ;;
  final2)
    # the series applied in place to this run's own unpacked site (a second sglang copy on
    # PYTHONPATH ahead of the site made flashinfer's optional imports resolve differently)
    apply_series "$SITE"
    timeout $(( left - 10 )) python3 -m spectrace bench --dummy-model 8b --configs docs/results/final2-0.5.12.toml \
      --catalog "$CAT" --seq-reps 2 --no-warmup --timeout 150 --no-plot -o "$OUT/bench" 2>&1 | tee "$OUT/run.log" | grep -v -i warn ;;
  table|table-agree|table-pk|table-c1|metrics)
    # issue 5's table through spectrace bench with the shims in every run (series applied in place);
    # metrics: one patched server with --enable-metrics, its gauges read after each run
    apply_series "$SITE"
    BETTER=(--better-of baseline,always-on --reference baseline); [ "$PLAN" = metrics ] && BETTER=()
    [ "$PLAN" = table-pk ] && BETTER=(--better-of baseline --reference baseline)  # it has no always-on
    [ "$PLAN" = table-c1 ] && BETTER=(--better-of baseline,baseline2 --mean-of baseline,baseline2 --reference baseline)
    timeout $(( left - 10 )) python3 -m spectrace bench --dummy-model 8b --configs "docs/results/${PLAN}-0.5.12.toml" \
      --catalog "$CAT" --seq-reps "${SEQ_REPS:-3}" --reps "${REPS:-1}" "${BETTER[@]}" --timeout 170 -o "$OUT/bench" 2>&1 | tee "$OUT/run.log" | grep -v -i warn
    cat "$OUT/bench/bench.md" 2>/dev/null ;;
  ab)
    # overhead: one engine, shims switched between runs (off / checks only / checks + sys.monitoring + value check)
    timeout $(( left - 15 )) python3 -m spectrace bench --dummy-model 8b --catalog "$CAT" --shims warn \
      --shims-ab 'off,on+nomonitoring+novalue,on' --ab-reps 2 --concurrency 1,32 --seq-reps 3 --timeout 200 \
      --base-args '--max-running-requests 128 --cuda-graph-max-bs 128' --no-save-outputs \
      --config eagle3-ab='--speculative-algorithm EAGLE3 --speculative-draft-model-path {draft} --speculative-eagle-topk 1 --speculative-num-steps 3 --speculative-num-draft-tokens 4' \
      -o "$OUT/bench" 2>&1 | tee "$OUT/run.log" | grep -v -i warn
    cat "$OUT/bench/bench.md" 2>/dev/null ;;
  tp2)
    timeout $(( left - 15 )) python3 -m spectrace bench --dummy-model 8b --catalog "$CAT" --shims warn \
      --base-args '--tp-size 2 --max-running-requests 64 --cuda-graph-max-bs 64' --concurrency 1,16,64 --timeout 250 \
      --config eagle3-tp2='--speculative-algorithm EAGLE3 --speculative-draft-model-path {draft} --speculative-eagle-topk 1 --speculative-num-steps 3 --speculative-num-draft-tokens 4' \
      -o "$OUT/bench" 2>&1 | tee "$OUT/run.log" | grep -v -i warn ;;
esac
for f in "$OUT"/bench/log-*.txt; do
  [ -f "$f" ] || continue
  echo "==== $(basename "$f"): spectrace / fault / error lines"
  grep -E '^\[spectrace\]|^\[fault\]|ContractViolation|Error|error:|Traceback' "$f" | grep -v -i 'warning: ' | head -n 25 | cut -c1-700
done
for f in "$OUT"/bench/shims-*.jsonl; do
  [ -f "$f" ] || continue
  echo "==== spectrace report $(basename "$f")"
  python3 -m spectrace report "$f" | cut -c1-900
done
rm -rf "$OUT/bench/models"
tar -C "$OUT" -czf "$OUT/bench.tar.gz" bench && rm -rf "$OUT/bench"
if [ ! -f "$BUNDLE/jitcache.tar.xz" ] && [ -n "$(ls -A /tmp/jitcache 2>/dev/null)" ]; then
  tar -C /tmp/jitcache -cf - . | xz -T0 -3 > "$OUT/jitcache.tar.xz"
  [ "$(stat -c %s "$OUT/jitcache.tar.xz")" -gt 15000000 ] && rm -f "$OUT/jitcache.tar.xz"
fi
echo "[shims] total $(( $(date +%s) - t0 ))s"
