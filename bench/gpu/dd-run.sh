#!/usr/bin/env bash
# Device-side entry (runs on the GPU machine, from the repository root).
# Copied from shared/gpu/gpu-run.sh for the dynamic-disable verification: after unpacking the
# bundle it applies the patch series $DD_SERIES (a patches/dynamic-disable/<version> dir) to
# /tmp/site with patch -p1, and runs bench/gpu/probe_dd.py with bench/gpu/pyhook.
#
#   DD_SERIES=patches/dynamic-disable/0.5.12 bash bench/gpu/dd-run.sh .gpu/b0512 custom
#
# BUNDLE_DIR holds site.tar.xz from build-bundle.sh (carried, e.g. .gpu/b0513).
# PLAN: bringup (default) | bench | adaptive | custom (phases from $PHASES).
# A phase is "NAME|SECONDS|probe.py args"; phases are separated by ';'.
# Output: key lines on stdout; full logs and results.jsonl under $OUT.
set -uo pipefail
BUNDLE=${1:?usage: gpu-run.sh BUNDLE_DIR [PLAN]}
PLAN=${2:-bringup}
HERE=$(cd "$(dirname "$0")" && pwd)
RECIPE=${RECIPE:-$(pwd)/.gpu/recipe}
OUT=${OUT:-/tmp/probe-out}
mkdir -p "$OUT"
DEADLINE=$(( $(date +%s) + ${TOTAL_S:-570} ))   # keep the whole call inside the 600 s limit
export PYTHONUNBUFFERED=1 NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
# spec v2 overlap is SGLang's default for EAGLE/EAGLE3 (0.5.13: SGLANG_ENABLE_SPEC_V2
# defaults to true; 0.5.17 removed the variable and warns if it is set)
export PROBE_HOOK=1 PROBE_OUT=$OUT
PY=${PY:-python3}

t0=$(date +%s)
rm -rf /tmp/site; mkdir -p /tmp/site   # a warm machine may hold an earlier (patched) copy
tar -xJf "$BUNDLE/site.tar.xz" -C /tmp/site || { echo "[run] unpack failed"; exit 2; }
echo "[run] unpacked $BUNDLE/site.tar.xz in $(( $(date +%s) - t0 ))s"
if [ -n "${DD_SERIES:-}" ]; then
  for p in $(grep -v '^#' "$DD_SERIES/series"); do
    patch -p1 --forward --batch -d /tmp/site -i "$(pwd)/$DD_SERIES/$p" > /dev/null || { echo "[run] patch $p FAILED"; exit 3; }
    echo "[run] applied $p"
  done
fi
# JIT caches (sglang.jit_kernel via tvm-ffi + nvcc, and Triton): restored from the
# bundle folder when an earlier run saved them there, saved to $OUT at the end.
export TVM_FFI_CACHE_DIR=/tmp/jitcache/tvm-ffi TRITON_CACHE_DIR=/tmp/jitcache/triton \
       FLASHINFER_WORKSPACE_BASE=/tmp/jitcache/fi
mkdir -p /tmp/jitcache
if [ -f "$BUNDLE/jitcache.tar.xz" ]; then
  tar -xJf "$BUNDLE/jitcache.tar.xz" -C /tmp/jitcache && echo "[run] restored JIT caches: $(du -sh /tmp/jitcache | cut -f1)"
fi
PP=/tmp/site:$HERE/pyhook
# stub packages (shared/gpu/stubs/*) only where neither the image nor the bundle has the real one
rm -rf /tmp/stubs-active; mkdir -p /tmp/stubs-active
# and that the bundle asks for ($BUNDLE/STUBS, written by build-bundle.sh)
for n in $(cat "$BUNDLE/STUBS" 2>/dev/null || ls "$RECIPE/stubs"); do
  [ -d "$RECIPE/stubs/$n" ] || continue
  if ! PYTHONPATH=/tmp/site $PY -c "import $n" 2>/dev/null; then ln -s "$RECIPE/stubs/$n" "/tmp/stubs-active/$n"; echo "[run] stub: $n"; fi
done
PP=$PP:/tmp/stubs-active
export PYTHONPATH=$PP${PYTHONPATH:+:$PYTHONPATH}
if ! ldconfig -p 2>/dev/null | grep -q 'libnuma\.so\.1 '; then
  export LD_LIBRARY_PATH=/tmp/site/_libs${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
  echo "[run] libnuma.so.1 not in the image: using the carried copy"
fi
{
  nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader
  $PY - <<'EOF'
import time; t = time.time()
import torch, triton, transformers, tokenizers, sglang, sgl_kernel
print("python", __import__("sys").version.split()[0], "torch", torch.__version__, "triton", triton.__version__,
      "transformers", transformers.__version__, "tokenizers", tokenizers.__version__,
      "sglang", sglang.__version__, "sgl_kernel", getattr(sgl_kernel, "__version__", "?"),
      "cuda", torch.cuda.is_available(), torch.cuda.get_device_name(0), f"import {time.time()-t:.1f}s")
EOF
} 2>&1 | tee "$OUT/env.txt" | grep -v -i warn

case "$PLAN" in
  bringup)
    PHASES=${PHASES:-"eagle3-small-nograph|220|--model small --spec eagle3 --cuda-graph 0 --conc 1,8 --out-len 64;\
eagle3-8b-graph|200|--model 8b --spec eagle3 --cuda-graph 1 --conc 1,32 --out-len 128;\
base-8b-graph|140|--model 8b --spec none --cuda-graph 1 --conc 1,32 --out-len 128"} ;;
  bench)
    PHASES=${PHASES:-"eagle3-8b-graph|240|--model 8b --spec eagle3 --cuda-graph 1 --conc 1,32 --out-len 128;\
base-8b-graph|180|--model 8b --spec none --cuda-graph 1 --conc 1,32 --out-len 128"} ;;
  adaptive)  # 0.5.14+; the default tiers with initial steps 3 crash with the triton backend (see README)
    PHASES=${PHASES:-"adaptive-s7|150|--model 8b --spec eagle3 --adaptive 1 --steps 7 --draft-tokens 8 --cuda-graph 1 --conc 1,8,32 --out-len 128;\
adaptive-cfg013|140|--model 8b --spec eagle3 --adaptive 1 --adaptive-config {\"1\":{\"candidate_steps\":[1,3]},\"8\":{\"candidate_steps\":[0,1,3]},\"32\":{\"candidate_steps\":[0,1]},\"64\":{\"candidate_steps\":[0]}} --cuda-graph 1 --conc 1,8,32 --out-len 128"} ;;
  custom) : "${PHASES:?set PHASES}" ;;
  *) echo "unknown PLAN $PLAN"; exit 2 ;;
esac

# If the first phase fails, the rest are replaced by $FALLBACK (a plain, non-speculative
# engine on the small model), which tells whether SGLang itself starts on this image.
FALLBACK=${FALLBACK-"base-small-nograph|120|--model small --spec none --cuda-graph 0 --conc 1,8 --out-len 64"}
IFS=';' read -r -a LIST <<< "$PHASES"
i=0
while [ "$i" -lt "${#LIST[@]}" ]; do
  ph=${LIST[$i]}; i=$((i + 1))
  IFS='|' read -r name secs args <<< "$ph"
  name=$(echo "$name" | tr -d ' ')
  # a phase named alt-* runs only when the phase before it failed (a fallback configuration)
  if [[ "$name" == alt-* ]] && [ "${prev_ok:-1}" = 1 ]; then echo "[run] SKIP $name: the phase before it passed"; continue; fi
  left=$(( DEADLINE - $(date +%s) - 10 ))
  if [ "$left" -lt 60 ]; then echo "[run] SKIP $name: only ${left}s left"; continue; fi
  [ "$secs" -gt "$left" ] && secs=$left
  log=$OUT/log-$name.txt
  echo "[run] PHASE $name (limit ${secs}s): probe.py $args"
  ts=$(date +%s)
  # own process group, so that a hung engine and its scheduler children can be ended by id
  setsid $PY "$HERE/probe_dd.py" --name "$name" $args > "$log" 2>&1 &
  pid=$!
  ( sleep "$secs"; echo "[run] $name: time limit, ending process group $pid" >> "$log";
    kill -TERM -- -"$pid" 2>/dev/null; sleep 8; kill -KILL -- -"$pid" 2>/dev/null ) &
  watcher=$!
  wait "$pid"; rc=$?
  kill "$watcher" 2>/dev/null; wait "$watcher" 2>/dev/null
  kill -KILL -- -"$pid" 2>/dev/null   # leftovers of this phase's group only
  echo "[run] PHASE $name rc=$rc in $(( $(date +%s) - ts ))s"
  grep -E '^\[probe\]|^\[run\]|spec v2|Overlap|EAGLEWorkerV2|accept len|spec-dynamic-disable|Error|error:' "$log" | grep -v 'Engine kwargs' | awk '/accept len/ { if (n++ >= 3) next } /speculation (ON|OFF) at/ { if (m++ >= 12) next } { print substr($0, 1, 600) }'
  prev_ok=1
  if [ "$rc" != 0 ] || ! grep -q '^\[probe\] RESULT' "$log"; then
    prev_ok=0
    echo "[run] ---- last lines of $name ----"; grep -v -i 'warn' "$log" | tail -n 40 | cut -c1-400
    if [ "$i" = 1 ] && [ "${#LIST[@]}" -gt 1 ]; then
      if [ "${DD_NO_FALLBACK:-0}" = 1 ]; then echo "[run] first phase failed: going on with the others"
      else
        if [ -n "$FALLBACK" ]; then LIST=("$FALLBACK"); else LIST=(); fi
        i=0; echo "[run] first phase failed: running only the fallback '${FALLBACK%%|*}'"
      fi
    fi
  fi
  sleep 3
done
if [ -n "$(ls -A /tmp/jitcache 2>/dev/null)" ]; then
  tar -C /tmp/jitcache -cf - . | xz -T0 -3 > "$OUT/jitcache.tar.xz"
  sz=$(stat -c %s "$OUT/jitcache.tar.xz")
  if [ "$sz" -gt 15000000 ]; then rm -f "$OUT/jitcache.tar.xz"; echo "[run] JIT cache too large to return ($sz B)";
  else echo "[run] saved JIT caches to \$OUT/jitcache.tar.xz ($sz B; copy it into the bundle folder to reuse)"; fi
fi
echo "[run] total $(( $(date +%s) - t0 ))s"
