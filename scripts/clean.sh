#!/usr/bin/env bash
# npm run clean: removes the build outputs -- build/ (native, wasm, fuzz, coverage builds and the
# web demo's trained model), dist/ and coverage/. node_modules/ and the committed sources stay;
# the next `npm run build` configures and builds from scratch. Waits for a build in progress.
set -euo pipefail
cd "$(dirname "$0")/.."
if [ -d build ]; then
  # a build running in another shell holds build/.lock: wait for it rather than pull its folder away
  exec 9>build/.lock
  flock 9
fi
rm -rf dist coverage
# build/ last, its lock file with it
if [ -d build ]; then find build -mindepth 1 -maxdepth 1 ! -name .lock -exec rm -rf {} +; rm -rf build; fi
echo "clean: removed build/, dist/ and coverage/"
