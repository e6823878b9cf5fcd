#!/usr/bin/env bash
# Builds the native library + C tests (build/native, gcc, ASan/UBSan) and the wasm module
# (build/wasm -> dist/). Incremental; `bash scripts/build.sh native|wasm` builds one;
# `configure-native` only configures build/native (compile_commands.json for clang-tidy);
# `coverage` builds the native tests with gcc --coverage, no sanitizers, in build/coverage
# (scripts/coverage.sh).
# `npm run build` runs scripts/setup.sh first (installs what is missing); run directly, this script
# stops with a message naming that command when a tool or library is missing.
#
# A configure that failed or was interrupted is redone on the next run: a build folder counts as
# configured only when its generator's file (build.ninja / Makefile) and the stamp written after a
# successful configure (.mxw-configured, holding the configure's arguments) are both there; a
# cache left without a generator file is discarded, and other arguments configure again.
#   MXW_BUILD_TARGETS="test_core ..."   build only these targets (default: all)
set -euo pipefail
cd "$(dirname "$0")/.."
what=${1:-all}
case "$what" in
  all | native | wasm | configure-native | coverage) ;;
  *) echo "usage: bash scripts/build.sh [all|native|wasm|configure-native|coverage]" >&2; exit 2 ;;
esac

# ---- prerequisites: stop at once, naming the command that installs them ----------------------------
missing=()
need() { command -v "$1" >/dev/null 2>&1 || missing+=("$2"); }
need_file() { [ -e "$1" ] || missing+=("$2"); }
need cmake cmake
need node node
if [ "$what" != wasm ]; then
  need cc gcc
  need_file /usr/include/cjson/cJSON.h libcjson-dev
  need_file /usr/include/cmocka.h libcmocka-dev
  need_file /usr/include/simde/wasm/simd128.h libsimde-dev
fi
if [ "$what" = all ] || [ "$what" = wasm ]; then
  need emcmake emscripten
  need_file node_modules/.mxw-installed "the npm devDependencies"
fi
if [ ${#missing[@]} -gt 0 ]; then
  echo "build: missing ${missing[*]}; install them with: npm run setup   (bash scripts/setup.sh)" >&2
  exit 1
fi

# Builds from several shells (parallel work, test runs) take turns.
mkdir -p build
exec 9>build/.lock
flock 9
gen=(-G "Unix Makefiles") genfile=Makefile
if command -v ninja >/dev/null 2>&1; then gen=(-G Ninja) genfile=build.ninja; fi

# configure DIR CMAKE... ARGS: configures DIR unless it holds a complete configure with this
# generator. With no stamp (a configure that did not finish) it configures again; a cache with no
# generator file or another generator's is removed first, so nothing stale is kept.
configure() {
  local dir=$1
  shift
  local stamp=$dir/.mxw-configured
  local want="$* ${gen[*]}"
  if [ -f "$dir/CMakeCache.txt" ] && [ -f "$dir/$genfile" ] && [ -f "$stamp" ] &&
    grep -qxF "CMAKE_GENERATOR:INTERNAL=${gen[1]}" "$dir/CMakeCache.txt" && [ "$(cat "$stamp")" = "$want" ]; then
    return 0
  fi
  if [ -f "$dir/CMakeCache.txt" ]; then
    if [ -f "$dir/$genfile" ] && grep -qxF "CMAKE_GENERATOR:INTERNAL=${gen[1]}" "$dir/CMakeCache.txt"; then
      if [ -f "$stamp" ]; then
        echo "build: $dir: configured with other arguments: configuring again" >&2
      else
        echo "build: $dir: the last configure did not finish: configuring again" >&2
      fi
    else
      echo "build: $dir holds a CMake cache but no $genfile (a configure failed or was interrupted," \
        "or another generator): removing the cache and configuring again" >&2
      rm -rf "$dir/CMakeCache.txt" "$dir/CMakeFiles"
    fi
  fi
  rm -f "$stamp"
  "$@" -B "$dir" "${gen[@]}" >"$dir.configure.log" 2>&1 || {
    tail -30 "$dir.configure.log" >&2
    echo "build: configuring $dir failed (log: $dir.configure.log); the next run configures again" >&2
    exit 1
  }
  printf '%s' "$want" >"$stamp"
}
targets=()
for t in ${MXW_BUILD_TARGETS:-}; do targets+=(--target "$t"); done

if [ "$what" = all ] || [ "$what" = native ] || [ "$what" = configure-native ]; then
  # compile_commands.json feeds clang-tidy (scripts/lint.sh)
  configure build/native cmake -S . -DCMAKE_BUILD_TYPE=Debug -DCMAKE_EXPORT_COMPILE_COMMANDS=ON
  if ! grep -qxF 'CMAKE_EXPORT_COMPILE_COMMANDS:BOOL=ON' build/native/CMakeCache.txt; then
    cmake -S . -B build/native -DCMAKE_EXPORT_COMPILE_COMMANDS=ON >/dev/null
  fi
  [ "$what" = configure-native ] || cmake --build build/native -j2 "${targets[@]}"
fi
if [ "$what" = coverage ]; then
  # a build type of its own ("Coverage"): CMakeLists.txt adds ASan/UBSan to Debug only; atomic
  # counters, as the kernels run on a thread pool
  configure build/coverage cmake -S . -DCMAKE_BUILD_TYPE=Coverage -DCMAKE_C_FLAGS="-O0 -g --coverage -fprofile-update=atomic" \
    -DCMAKE_EXE_LINKER_FLAGS=--coverage
  cmake --build build/coverage -j2 "${targets[@]}"
fi
if [ "$what" = all ] || [ "$what" = wasm ]; then
  # emcmake's default emulator flag (--experimental-wasm-threads) is rejected by Node 20.
  # MXW_TIERS (a ;-list, default all four) limits the tiers built, e.g. MXW_TIERS=simd while
  # iterating; the relaxed tiers need clang-19 (scripts/setup.sh) and are skipped without it.
  tiers=${MXW_TIERS:-simd;threads;relaxed-simd;relaxed-simd-threads}
  configure build/wasm emcmake cmake -S . -DCMAKE_BUILD_TYPE=Release \
    -DCMAKE_CROSSCOMPILING_EMULATOR="$(command -v node)" -DMXW_DIST_DIR="$PWD/dist" -DMXW_TIERS="$tiers"
  if ! grep -qxF "MXW_TIERS:STRING=$tiers" build/wasm/CMakeCache.txt; then
    cmake -S . -B build/wasm -DMXW_TIERS="$tiers" >/dev/null
  fi
  cmake --build build/wasm -j2 "${targets[@]}"
  # the web demo's digit model, trained by examples/train_mnist.mjs when missing or stale (not fatal)
  [ -n "${MXW_SKIP_DEMO_MODEL:-}" ] || node scripts/train-demo-model.mjs --if-stale \
    || echo "warning: the web demo's model (build/web-demo-model) was not trained" >&2
fi
