#!/usr/bin/env bash
# npm run coverage (issue 15): line and branch coverage of the C core and of the JS API.
#   C:  the native C tests (ctest) built with gcc --coverage in build/coverage (no sanitizers),
#       measured over csrc/ by gcovr -> coverage/c/index.html
#   JS: the whole JS suite (node --test on the simd tier, --experimental-test-coverage) over the
#       wasm build's dist/*.mjs (the entry made to import them rather than their bundle:
#       scripts/unbundled.mjs), reported as js/*.mjs (dist/ holds copies of js/) by lcov/genhtml
#       -> coverage/js/index.html
# Prints both summaries (and writes them to coverage/summary.txt). The JS suite takes a while;
# the clean-clone test is left out (MXW_SKIP_CLEAN_CLONE=1) and so is fuzzing.
#   bash scripts/coverage.sh [c|js]     # one side only
# Tools: gcovr and lcov (Debian, scripts/setup.sh).
set -euo pipefail
cd "$(dirname "$0")/.."
what=${1:-all}
case "$what" in all | c | js) ;; *) echo "usage: bash scripts/coverage.sh [all|c|js]" >&2; exit 2 ;; esac
for t in gcovr lcov genhtml; do
  command -v $t >/dev/null 2>&1 || { echo "coverage: $t is missing; install it with: npm run setup" >&2; exit 1; }
done
mkdir -p coverage
summary=coverage/summary.txt
: >"$summary.new"
status=0

if [ "$what" != js ]; then
  bash scripts/build.sh coverage >/dev/null
  # counters from an earlier run would add up
  find build/coverage -name '*.gcda' -delete
  ctest --test-dir build/coverage -j2 --output-on-failure >coverage/ctest.log 2>&1 || {
    status=1
    echo "coverage: some C tests failed (coverage/ctest.log); the figures below still count what ran" >&2
  }
  rm -rf coverage/c && mkdir -p coverage/c
  gcovr -r . --object-directory build/coverage --filter 'csrc/' --exclude-unreachable-branches \
    --html-details coverage/c/index.html --txt coverage/c/summary.txt --print-summary >coverage/c/gcovr.log 2>&1 || {
    tail -20 coverage/c/gcovr.log >&2
    exit 1
  }
  {
    echo "C (csrc/, the ctest programs, gcc --coverage):"
    grep -E '^(lines|branches|functions):' coverage/c/gcovr.log | sed 's/^/  /'
  } >>"$summary.new"
fi

if [ "$what" != c ]; then
  # the tiers already configured (only simd is measured), else simd alone
  tiers=$(sed -n 's/^MXW_TIERS:STRING=//p' build/wasm/CMakeCache.txt 2>/dev/null || true)
  MXW_TIERS=${MXW_TIERS:-${tiers:-simd}} bash scripts/build.sh wasm >/dev/null
  rm -rf coverage/js && mkdir -p coverage/js
  # scripts/unbundled.mjs: the entry runs api.mjs and its modules, not their bundle
  MXW_TIER=simd MXW_SKIP_CLEAN_CLONE=1 node --import ./scripts/unbundled.mjs --test --experimental-test-coverage \
    --test-reporter=lcov --test-reporter-destination=coverage/js/node.lcov \
    --test-reporter=dot --test-reporter-destination=coverage/js/tests.log tests/js/ || {
    status=1
    echo "coverage: some JS tests failed (coverage/js/tests.log); the figures below still count what ran" >&2
  }
  # keep the package's modules (dist/*.mjs copied from js/; generated ones have no js/ source) and
  # name them by their source
  node -e '
    const fs = require("fs"), path = require("path"), root = process.cwd();
    const out = [];
    let keep = false;
    for (const line of fs.readFileSync("coverage/js/node.lcov", "utf8").split("\n")) {
      if (line.startsWith("SF:")) {
        const rel = path.relative(path.join(root, "dist"), line.slice(3));
        const src = path.join(root, "js", rel);
        keep = !rel.startsWith("..") && fs.existsSync(src);
        if (keep) out.push("SF:" + src);
        continue;
      }
      if (keep) out.push(line);
    }
    fs.writeFileSync("coverage/js/lcov.info", out.join("\n") + "\n");'
  genhtml -q --branch-coverage -o coverage/js coverage/js/lcov.info >coverage/js/genhtml.log 2>&1 || {
    tail -20 coverage/js/genhtml.log >&2
    exit 1
  }
  {
    echo "JS (js/*.mjs through dist/, node --test --experimental-test-coverage):"
    lcov --summary coverage/js/lcov.info --rc lcov_branch_coverage=1 2>&1 | grep -E '^ +(lines|functions|branches)' |
      sed -E 's/^ +/  /; s/\.+:/:/'
  } >>"$summary.new"
fi

{ echo "coverage, $(date -u +%Y-%m-%d) at $(git rev-parse --short HEAD 2>/dev/null || echo '?'):"; cat "$summary.new"; } >"$summary"
rm -f "$summary.new"
cat "$summary"
for h in coverage/c/index.html coverage/js/index.html; do [ ! -f "$h" ] || echo "HTML: $h"; done
exit $status
