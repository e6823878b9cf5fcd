#!/usr/bin/env bash
# The README's test command (npm test): installs what is missing, builds, then runs every C
# test (ctest, native with sanitizers) and every JS test (node --test).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
bash scripts/build.sh
ctest --test-dir build/native --output-on-failure
node --test --test-reporter=spec tests/js/
