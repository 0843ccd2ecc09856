#!/usr/bin/env bash
# One `spectrace bench` sweep on a GPU machine without network, from the checkout's root:
#
#   bash bench/gpu/run.sh [--patch[=SERIES]] [--with=NAME] BUNDLE_DIR CONFIG.toml [spectrace bench options...]
#   bash bench/gpu/run.sh [--patch[=SERIES]] [--with=NAME] --pytest BUNDLE_DIR [pytest options...]
#
# --pytest: the GPU test suite (pytest -m gpu tests/gpu) instead of a sweep; results in $OUT/pytest/.
# BUNDLE_DIR: site.tar.xz (+ STUBS, jitcache.tar.xz) from the GPU recipe's build-bundle.sh.
# --patch: apply a patch series (default dynamic-disable) to the unpacked SGLang first; --with=NAME:
# then a series that applies over it (e.g. draft-steps).
# Results: $OUT/<config name>/ (bench.md, bench.json, bench.png, log-*.txt), $OUT/run.log.
# Environment: OUT (/tmp/bench-out), TOTAL_S (570: the whole run, set-up included),
# WHEELS (.gpu/whl), STUBS_DIR (.gpu/recipe/stubs), PY (python3), PACK=1 (tar the results folder),
# RESUME (an earlier part of the same sweep, its results folder or the tarball PACK=1 returned:
# the engines it finished are kept),
# KEEP_TRACES=1 (keep the traces of `spectrace bench --profile`; by default only their summaries),
# SCRATCH (/tmp: where SGLang, spectrace and the JIT caches are unpacked; one per sweep when two
# sweeps share a machine, each on its own GPU through CUDA_VISIBLE_DEVICES).
set -uo pipefail
SERIES=
WITH=()
PYTEST=0
while [ $# -gt 0 ]; do
  case "$1" in
    --patch) SERIES=dynamic-disable; shift ;;
    --patch=*) SERIES=${1#--patch=}; shift ;;
    --with=*) WITH+=(--with "${1#--with=}"); shift ;;
    --pytest) PYTEST=1; shift ;;
    *) break ;;
  esac
done
USAGE="usage: run.sh [--patch[=SERIES]] [--with=NAME] BUNDLE_DIR CONFIG.toml [bench options...] | run.sh [--patch] [--with=NAME] --pytest BUNDLE_DIR [pytest options...]"
BUNDLE=${1:?$USAGE}
shift
if [ "$PYTEST" = 1 ]; then
  CONFIG=
  NAME=pytest
else
  CONFIG=${1:?$USAGE}
  shift
  NAME=$(basename "$CONFIG" .toml)
fi
OUT=${OUT:-/tmp/bench-out}
WHEELS=${WHEELS:-.gpu/whl}
STUBS_DIR=${STUBS_DIR:-.gpu/recipe/stubs}
PY=${PY:-python3}
SCRATCH=${SCRATCH:-/tmp}
SITE=$SCRATCH/site
SPT=$SCRATCH/spt
STUBS_ACTIVE=$SCRATCH/stubs-active
JITCACHE=$SCRATCH/jitcache
START=$(date +%s)
DEADLINE=$(( START + ${TOTAL_S:-570} ))
mkdir -p "$OUT"
exec > >(tee -a "$OUT/run.log") 2>&1
say() { echo "[run] $*"; }
die() { say "$*"; exit 2; }
[ -f "$BUNDLE/site.tar.xz" ] || die "no $BUNDLE/site.tar.xz: build it with the GPU recipe's build-bundle.sh"
[ "$PYTEST" = 1 ] || [ -f "$CONFIG" ] || die "no configuration file $CONFIG"

# NVLink multicast off: the GPU recipe's settings for these machines
export PYTHONUNBUFFERED=1 NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1

# SGLang: a fresh copy every time (a warm machine may hold a patched one)
rm -rf "$SITE" && mkdir -p "$SITE" && tar -xJf "$BUNDLE/site.tar.xz" -C "$SITE" || die "unpacking $BUNDLE/site.tar.xz failed"
say "SGLang bundle $BUNDLE unpacked in $(( $(date +%s) - START ))s"

# JIT-compiled kernels (tvm-ffi + nvcc, Triton, flashinfer): a first engine compiles for about a minute
export TVM_FFI_CACHE_DIR=$JITCACHE/tvm-ffi TRITON_CACHE_DIR=$JITCACHE/triton FLASHINFER_WORKSPACE_BASE=$JITCACHE/fi
mkdir -p "$JITCACHE"
if [ -f "$BUNDLE/jitcache.tar.xz" ]; then
  tar -xJf "$BUNDLE/jitcache.tar.xz" -C "$JITCACHE" && say "JIT caches restored"
fi
JIT_BEFORE=$(find "$JITCACHE" -type f | wc -l)

# stubs for packages SGLang imports but this path never calls, only where neither the image
# nor the bundle has the real one
rm -rf "$STUBS_ACTIVE" && mkdir -p "$STUBS_ACTIVE"
for n in $(cat "$BUNDLE/STUBS" 2>/dev/null); do
  if PYTHONPATH=$SITE $PY -c "import $n" 2>/dev/null; then continue; fi
  [ -d "$STUBS_DIR/$n" ] || die "the bundle needs the stub $n: copy the GPU recipe's stubs/ to $STUBS_DIR"
  ln -s "$(cd "$STUBS_DIR/$n" && pwd)" "$STUBS_ACTIVE/$n" && say "stub: $n"
done
# sgl_kernel needs libnuma.so.1; the bundle carries one for images without it
ldconfig -p 2>/dev/null | grep -q 'libnuma\.so\.1 ' || export LD_LIBRARY_PATH=$SITE/_libs${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}

# spectrace from this checkout, offline: the checkout and its dependencies' wheels, built with
# the image's setuptools
rm -rf "$SPT"
WHLS=$(ls "$WHEELS"/*.whl 2>/dev/null)
$PY -m pip install -q --no-index --no-deps --no-build-isolation --target "$SPT" $WHLS . \
  || die "installing spectrace from the checkout (and the wheels in $WHEELS) failed"
[ -f "$SPT"/spectrace/boot/sitecustomize.py ] || die "the install lacks spectrace/boot (package data)"
export PYTHONPATH=$SPT:$SITE:$STUBS_ACTIVE
export PYTHONSAFEPATH=1  # the checkout's spectrace/ must not shadow the installed one
$PY -m spectrace bench --help >/dev/null || die "spectrace does not start: a dependency missing from $WHEELS?"
$PY -c "import sglang, torch; print('[run] sglang', sglang.__version__, 'torch', torch.__version__, 'gpus', torch.cuda.device_count())" \
  || die "SGLang does not import from the bundle"

if [ -n "$SERIES" ]; then
  $PY -m spectrace patch apply --sglang "$SITE" --series "$SERIES" "${WITH[@]}" || die "applying the series $SERIES ${WITH[*]} failed"
fi

left=$(( DEADLINE - $(date +%s) - 15 ))
[ "$left" -gt 60 ] || die "only ${left}s left after the set-up (TOTAL_S)"
if [ "$PYTEST" = 1 ]; then
  # pytest from the image, else from wheels put in $WHEELS (pytest, pluggy, iniconfig, pygments)
  $PY -c "import pytest" 2>/dev/null || die "no pytest: put its wheels (pytest, pluggy, iniconfig, pygments) in $WHEELS"
  say "set-up $(( $(date +%s) - START ))s; GPU tests within ${left}s"
  mkdir -p "$OUT/$NAME"
  SPECTRACE_GPU_SGLANG=$SITE SPECTRACE_GPU_OUT=$OUT/$NAME timeout "$left" $PY -m pytest -q -rs -m gpu tests/gpu "$@"
  rc=$?
else
  if [ -n "${RESUME:-}" ]; then
    mkdir -p "$OUT/$NAME"
    if [ -f "$RESUME" ]; then
      # the tarball PACK=1 returned (smaller to carry than its folder): NAME/ inside
      tar -xzf "$RESUME" -C "$OUT" "$NAME" || die "RESUME=$RESUME holds no folder $NAME"
    else
      [ -d "$RESUME" ] || die "RESUME=$RESUME is neither a folder nor a tarball"
      cp -r "$RESUME"/. "$OUT/$NAME"/ || die "copying $RESUME to $OUT/$NAME failed"
    fi
    set -- "$@" --resume
  fi
  say "set-up $(( $(date +%s) - START ))s; bench $CONFIG within ${left}s"
  # `timeout` stops the sweep with SIGTERM: bench.md then holds the finished configurations
  timeout "$left" $PY -m spectrace bench --configs "$CONFIG" -o "$OUT/$NAME" "$@"
  rc=$?
  [ "$rc" = 124 ] && say "the time budget ran out: $OUT/$NAME/bench.md lists the configurations not run"
fi

rm -rf "$OUT/$NAME/models" "$OUT/$NAME"/*/models
# --profile's traces stay only with KEEP_TRACES=1 (a sweep's would be large): bench.md has their summaries
[ "${KEEP_TRACES:-0}" = 1 ] || find "$OUT/$NAME" -path '*/profiles/*' -name '*.trace.json*' -delete 2>/dev/null
# Kernels compiled during the run (Triton specialises some per power-of-two batch size, so a
# shrinking batch meets new ones, each compiled inside a step on its first use): return the cache.
JIT_NEW=$(( $(find "$JITCACHE" -type f | wc -l) - JIT_BEFORE ))
if [ "$JIT_NEW" -gt 0 ]; then
  tar -C "$JITCACHE" -cf - . | xz -T0 -3 > "$OUT/jitcache.tar.xz"
  say "$JIT_NEW new JIT cache files, all saved to $OUT/jitcache.tar.xz: copy it into $BUNDLE to skip the compiles next time"
fi
if [ "${PACK:-0}" = 1 ]; then
  cp "$OUT/$NAME/bench.md" "$OUT/$NAME.md" 2>/dev/null
  tar -C "$OUT" -czf "$OUT/$NAME.tar.gz" "$NAME" && rm -rf "${OUT:?}/$NAME"
fi
say "$([ "$PYTEST" = 1 ] && echo pytest || echo bench) exit status $rc; total $(( $(date +%s) - START ))s"
exit "$rc"
