#!/usr/bin/env bash
# npm run bench: builds if needed, then runs the benchmarks (medians of repeated runs; ratios).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
bash scripts/build.sh wasm >/dev/null
for b in bench/hybridize.mjs bench/gemm.mjs bench/conv.mjs bench/peers.mjs bench/train.mjs; do
  echo "== $b"
  node "$b"
done
