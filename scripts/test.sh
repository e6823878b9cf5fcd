#!/usr/bin/env bash
# The README's test command (npm test): installs what is missing, builds, then runs every C
# test (ctest, native with sanitizers) and every JS test (node --test), and ends with one line
# saying how many real-file tests were skipped.
#
# Real MXNet files (../shared/models/README.md) are read in place from $MXW_MODELS (a relative
# value is taken from the project root), default ../shared/models beside the project root. When
# that folder is absent, the tests that need it are reported as skipped with the reason (ctest:
# test_real_* exit 77 = SKIP_RETURN_CODE; node --test: { skip: reason }); everything else runs.
# tests/js/clean_clone.test.mjs checks exactly that: it clones HEAD into an empty temporary
# folder and runs `CI=true npm test` there (about a minute; MXW_SKIP_CLEAN_CLONE=1 skips it).
# Last, the fuzz targets run 60 s each (scripts/fuzz.sh; MXW_SKIP_FUZZ=1 skips them).
set -euo pipefail
cd "$(dirname "$0")/.."

# Free disk first: with the disk full, builds fail late and Chromium cannot start (its tests then
# wait until their timeouts). The builds, the clean clone and the model-zoo test's temporary
# folders take about 4 GiB; MXW_MIN_FREE_GIB changes the bound.
min_gib=${MXW_MIN_FREE_GIB:-4}
for dir in . "${TMPDIR:-/tmp}"; do
  free_kib=$(df -Pk -- "$dir" | awk 'NR == 2 { print $4 }')
  if [ "$free_kib" -lt $((min_gib * 1024 * 1024)) ]; then
    echo "test: only $((free_kib / 1024)) MiB free on the disk of $(realpath -- "$dir"); the tests need about" \
      "$min_gib GiB (MXW_MIN_FREE_GIB). Leftover /tmp/mxw-* folders of interrupted runs can go." >&2
    exit 1
  fi
done

bash scripts/setup.sh
bash scripts/build.sh

if [ -n "${MXW_MODELS:-}" ]; then
  export MXW_MODELS="$(realpath -m -- "$MXW_MODELS")"
  models=$MXW_MODELS setting="MXW_MODELS=$MXW_MODELS"
else
  models=$(realpath -m -- ../shared/models) setting="MXW_MODELS unset, default ../shared/models"
fi

logs=$(mktemp -d)
trap 'rm -rf "$logs"' EXIT
status=0
ctest --test-dir build/native --output-on-failure 2>&1 | tee "$logs/ctest" || status=1
# The whole JS suite on the simd tier (the one every host runs), then the kernel, layer and model
# tests on each other tier built here (issue 10; tests/js/tiers.test.mjs compares the tiers).
MXW_TIER=simd node --test --test-reporter=spec tests/js/ 2>&1 | tee "$logs/node" || status=1
tier_tests=(tests/js/conv.test.mjs tests/js/grad_conv.test.mjs tests/js/pooling.test.mjs tests/js/norm.test.mjs
  tests/js/softmax.test.mjs tests/js/reduce.test.mjs tests/js/elemwise_unary.test.mjs tests/js/elemwise_binary.test.mjs
  tests/js/linalg.test.mjs tests/js/nn_layers.test.mjs tests/js/models.test.mjs tests/js/hybrid_backward.test.mjs)
for tier in threads relaxed-simd relaxed-simd-threads; do
  echo
  if [ ! -f "dist/$tier/mxcore.wasm" ]; then echo "tier $tier: not built here, its tests skipped"; continue; fi
  flags=()
  case $tier in relaxed*) flags=(--experimental-wasm-relaxed-simd) ;; esac
  echo "tier $tier: ${#tier_tests[@]} test files"
  MXW_TIER=$tier node "${flags[@]}" --test --test-reporter=dot "${tier_tests[@]}" || status=1
done

# ---- fuzzing (helper 'fuzz'; scripts/fuzz.sh, tests/fuzz/README.md) ----------------------------------
# Each libFuzzer target runs MXW_FUZZ_SECONDS (default 60) s; a finding fails the run. Skipped, with
# the reason, when clang-14's libFuzzer runtime is not installed or MXW_SKIP_FUZZ is set.
echo
if [ -n "${MXW_SKIP_FUZZ:-}" ]; then
  echo "fuzz: skipped (MXW_SKIP_FUZZ is set)"
elif ! fuzz_missing=$(bash scripts/fuzz.sh --check); then
  echo "fuzz: skipped -- ${fuzz_missing#fuzz: }"
else
  bash scripts/fuzz.sh "${MXW_FUZZ_SECONDS:-60}" || status=1
fi
# ---- end of fuzzing -------------------------------------------------------------------------------------

# The counts come from what the runners reported, not from whether the folder exists.
c_programs=$(grep -c '^[[:space:]]*[0-9]* - test_real_.* (Skipped)$' "$logs/ctest" || true)
c_cases=$(sed -n 's/^SKIPPED \([0-9]*\) real-file tests: .*/\1/p' build/native/Testing/Temporary/LastTest.log 2>/dev/null |
  awk '{ n += $1 } END { print n + 0 }')
js=$(grep -c '^﹣ .* # real MXNet files not found at ' "$logs/node" || true)
total=$((c_cases + js))
echo
if [ -d "$models" ]; then where="real MXNet files found at $models ($setting)"
else where="real MXNet files not found at $models ($setting)"; fi
echo "real-file tests skipped: $total (C: $c_cases in $c_programs ctest programs; JS: $js) -- $where"
exit $status
