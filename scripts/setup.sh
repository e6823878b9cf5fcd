#!/usr/bin/env bash
# Installs everything mxnet-wasm needs on a Debian 12 machine that has only the base image
# (gcc/clang-14, cmake, Node 20). Idempotent: when everything is present it does nothing but
# a few dpkg/npm checks and returns in well under a second.
#
#   bash scripts/setup.sh            # apt packages + npm devDependencies
#   MXW_SKIP_CHROMIUM=1 ...          # skip the browser (not needed for the Node tests)
set -euo pipefail
cd "$(dirname "$0")/.."

SUDO=""
if [ "$(id -u)" != 0 ]; then SUDO="sudo"; fi

# clang-19 + lld-19: the relaxed-SIMD tiers (emcc 3.1.6's clang-14 cannot emit relaxed SIMD; CMakeLists.txt);
# llvm-19 for the llvm-nm and llvm-ar emcc runs beside them (clang-19 without recommends lacks them)
APT_PKGS=(emscripten wasi-libc libclang-rt-14-dev-wasm32 libcjson-dev libsimde-dev libcmocka-dev dpkg-dev cmake make clang-19 lld-19
  llvm-19)
# lint and coverage (npm run lint / coverage): clang-format and clang-tidy 14, gcovr and lcov (genhtml)
APT_PKGS+=(clang-format-14 clang-tidy-14 gcovr lcov)
# OpenCV's own cv2.resize, the oracle of tests/js/image_resize_interp.test.mjs (Debian's python3)
APT_PKGS+=(python3-opencv)
if [ -z "${MXW_SKIP_CHROMIUM:-}" ]; then APT_PKGS+=(chromium); fi

missing=()
for p in "${APT_PKGS[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
done

# cJSON's C source for the wasm build comes from Debian's source package (see
# cmake/DebianSourceCJSON.cmake), which needs deb-src entries. Derive them from the machine's
# own apt sources so that no mirror is named here.
need_src=0
if ! apt-get indextargets 2>/dev/null | grep -q '^Identifier: Sources'; then need_src=1; fi

if [ ${#missing[@]} -gt 0 ] || [ $need_src = 1 ]; then
  if [ $need_src = 1 ]; then
    if [ -f /etc/apt/sources.list.d/debian.sources ]; then
      sed 's/^Types: deb$/Types: deb-src/' /etc/apt/sources.list.d/debian.sources \
        | $SUDO tee /etc/apt/sources.list.d/mxw-deb-src.sources >/dev/null
    elif [ -f /etc/apt/sources.list ]; then
      grep -E '^deb ' /etc/apt/sources.list | sed 's/^deb /deb-src /' \
        | $SUDO tee /etc/apt/sources.list.d/mxw-deb-src.list >/dev/null
    fi
  fi
  echo "setup: installing ${missing[*]:-(deb-src index only)}"
  $SUDO apt-get update -qq
  if [ ${#missing[@]} -gt 0 ]; then
    $SUDO env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
  fi
fi

# npm devDependencies (oracles for the tests, playwright-core for Chromium). onnxruntime-node's
# postinstall tries to download CUDA libraries from outside the registries; its CPU binaries are
# already inside the package, so install scripts are skipped (--ignore-scripts).
stamp=node_modules/.mxw-installed
if [ ! -f "$stamp" ] || [ package.json -nt "$stamp" ] || { [ -f package-lock.json ] && [ package-lock.json -nt "$stamp" ]; }; then
  echo "setup: installing npm devDependencies"
  if [ -f package-lock.json ]; then npm ci --ignore-scripts --no-audit --no-fund --loglevel=error; else npm install --ignore-scripts --no-audit --no-fund --loglevel=error; fi
  touch "$stamp"
fi
