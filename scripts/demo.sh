#!/usr/bin/env bash
# The README's demo command (npm run demo): installs what is missing, builds, runs the examples.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
bash scripts/build.sh wasm >/dev/null
node examples/demo.mjs
