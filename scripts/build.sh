#!/usr/bin/env bash
# Builds the native library + C tests (build/native, gcc, ASan/UBSan) and the wasm module
# (build/wasm -> dist/). Incremental; `bash scripts/build.sh native|wasm` builds one.
set -euo pipefail
cd "$(dirname "$0")/.."
what=${1:-all}
# Builds from several shells (parallel work, test runs) take turns.
mkdir -p build
exec 9>build/.lock
flock 9
gen=()
if command -v ninja >/dev/null 2>&1; then gen=(-G Ninja); fi

if [ "$what" = all ] || [ "$what" = native ]; then
  [ -f build/native/CMakeCache.txt ] || cmake -S . -B build/native "${gen[@]}" -DCMAKE_BUILD_TYPE=Debug >/dev/null
  cmake --build build/native -j2
fi
if [ "$what" = all ] || [ "$what" = wasm ]; then
  # emcmake's default emulator flag (--experimental-wasm-threads) is rejected by Node 20.
  # MXW_TIERS (a ;-list, default all four) limits the tiers built, e.g. MXW_TIERS=simd while
  # iterating; the relaxed tiers need clang-19 (scripts/setup.sh) and are skipped without it.
  tiers=${MXW_TIERS:-simd;threads;relaxed-simd;relaxed-simd-threads}
  if [ ! -f build/wasm/CMakeCache.txt ]; then
    emcmake cmake -S . -B build/wasm "${gen[@]}" -DCMAKE_BUILD_TYPE=Release \
      -DCMAKE_CROSSCOMPILING_EMULATOR="$(command -v node)" -DMXW_DIST_DIR="$PWD/dist" -DMXW_TIERS="$tiers" >/dev/null
  elif ! grep -qxF "MXW_TIERS:STRING=$tiers" build/wasm/CMakeCache.txt; then
    cmake -S . -B build/wasm -DMXW_TIERS="$tiers" >/dev/null
  fi
  cmake --build build/wasm -j2
  # the web demo's digit model, trained by examples/train_mnist.mjs when missing or stale (not fatal)
  [ -n "${MXW_SKIP_DEMO_MODEL:-}" ] || node scripts/train-demo-model.mjs --if-stale \
    || echo "warning: the web demo's model (build/web-demo-model) was not trained" >&2
fi
