#!/usr/bin/env bash
# Fuzzing (tests/fuzz/README.md): builds the libFuzzer targets with clang-14
# (-fsanitize=fuzzer,address,undefined) in build/fuzz and runs each for a set time.
#
#   npm run fuzz                 # every target 60 s (what `npm test` does)
#   npm run fuzz -- 600          # every target 10 minutes (the long run the README reports)
#   npm run fuzz -- 120 ndlist   # some targets only: ndlist, symbol_json, attrs
#   bash scripts/fuzz.sh --check # exit 0 when clang-14 and its libFuzzer runtime are installed
#
# Seeds: the committed corpus (tests/fuzz/corpus/<target>), the crashers fixed so far
# (tests/fuzz/regressions/<target>), files generated from the tests' fixture writer
# (make_seeds -> build/fuzz/seeds.<pid>) and the real MXNet files of $MXW_MODELS (default
# ../shared/models; skipped with a note when absent). What libFuzzer finds new is kept in
# build/fuzz/corpus/<target> for the next run. A finding (crash, sanitizer report, leak, hang
# over 10 s, an allocation of 64 MB or more, or more than 64 MB held at once for one input) is
# written to build/fuzz/findings/<target>/<pid>-... and makes the script exit 1 after all targets ran.
# MXW_FUZZ_KEEP_GOING=1 keeps fuzzing after a finding (libFuzzer's fork mode) to collect more.
# Installs nothing; idempotent (incremental build, the corpus grows).
set -euo pipefail
cd "$(dirname "$0")/.."

CC_FUZZ=clang-14
ALL_TARGETS=(ndlist symbol_json attrs)

runtime_ok() {
  command -v "$CC_FUZZ" >/dev/null 2>&1 || return 1
  local dir
  dir=$("$CC_FUZZ" -print-runtime-dir 2>/dev/null) || return 1
  [ -f "$dir/libclang_rt.fuzzer-$(uname -m).a" ]
}
missing_msg() {
  echo "fuzz: clang-14's libFuzzer runtime is not installed (need clang-14 and libclang_rt.fuzzer from" \
    "Debian's packages): sudo apt-get install clang-14 libclang-rt-14-dev"
}

if [ "${1:-}" = --check ]; then
  if runtime_ok; then exit 0; fi
  missing_msg
  exit 1
fi

secs=${1:-60}
case "$secs" in
  '' | *[!0-9]*) echo "usage: bash scripts/fuzz.sh [SECONDS] [TARGET...]   (targets: ${ALL_TARGETS[*]})" >&2; exit 2 ;;
esac
shift || true
targets=("$@")
[ ${#targets[@]} -gt 0 ] || targets=("${ALL_TARGETS[@]}")
for t in "${targets[@]}"; do
  case " ${ALL_TARGETS[*]} " in *" $t "*) ;; *) echo "fuzz: unknown target $t (${ALL_TARGETS[*]})" >&2; exit 2 ;; esac
done
if ! runtime_ok; then
  missing_msg >&2
  exit 2
fi

# ---- build (build/fuzz, its own configuration; builds take turns on the lock, runs may overlap) --------
mkdir -p build
exec 8>build/.fuzz-lock
flock 8
gen=()
if command -v ninja >/dev/null 2>&1; then gen=(-G Ninja); fi
if [ ! -f build/fuzz/CMakeCache.txt ]; then
  CC=$CC_FUZZ cmake -S . -B build/fuzz "${gen[@]}" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DMXW_FUZZ=ON >/dev/null
fi
cmake --build build/fuzz --target mxw_fuzz -j2 >build/fuzz/build.log 2>&1 || {
  tail -40 build/fuzz/build.log >&2
  echo "fuzz: the build failed (build/fuzz/build.log)" >&2
  exit 1
}

# ---- seeds (this run's own folders, removed at exit) ------------------------------------------------
seeds=build/fuzz/seeds.$$ real=build/fuzz/real.$$
trap 'rm -rf "$seeds" "$real"' EXIT
build/fuzz/make_seeds "$seeds" >/dev/null
flock -u 8
if [ -n "${MXW_MODELS:-}" ]; then models=$(realpath -m -- "$MXW_MODELS"); else models=$(realpath -m -- ../shared/models); fi
mkdir -p "$real/ndlist" "$real/symbol_json"
if [ -d "$models" ]; then
  find "$models" -type f \( -name '*.params' -o -name '*.v0' \) -exec ln -sf {} "$real/ndlist/" \;
  # symbol files: every .json but the small shape/sample files beside the checkpoints
  find "$models" -type f -name '*.json' ! -name '*-shapes.json' ! -name '0*.json' -exec ln -sf {} "$real/symbol_json/" \;
  real_note="real MXNet files from $models"
else
  real_note="real MXNet files not found at $models (MXW_MODELS=${MXW_MODELS:-unset, default ../shared/models}): not used as seeds"
fi

# ---- run -----------------------------------------------------------------------------------------------
declare -A max_len=([ndlist]=131072 [symbol_json]=131072 [attrs]=4096)
findings=0
summary=()
start=$(date -u +%Y-%m-%dT%H:%MZ)
echo "fuzz: ${#targets[@]} target(s), ${secs} s each; seeds: committed corpus, fixed crashers, generated fixtures, $real_note"
for t in "${targets[@]}"; do
  corpus=build/fuzz/corpus/$t found=build/fuzz/findings/$t log=build/fuzz/logs/$t.log
  mkdir -p "$corpus" "$found" build/fuzz/logs
  # this run's findings are named <pid>-<kind>-<hash> (runs may overlap)
  args=(-max_total_time="$secs" -timeout=10 -rss_limit_mb=2048 -malloc_limit_mb=64 -max_len="${max_len[$t]}"
    -print_final_stats=1 -artifact_prefix="$found/$$-" -dict=tests/fuzz/dict/$t.dict)
  if [ -n "${MXW_FUZZ_KEEP_GOING:-}" ]; then
    args+=(-fork=1 -ignore_crashes=1 -ignore_ooms=1 -ignore_timeouts=1)
  fi
  dirs=("$corpus")
  for d in tests/fuzz/corpus/$t tests/fuzz/regressions/$t "$seeds/$t" "$real/$t"; do
    if [ -d "$d" ]; then dirs+=("$d"); fi
  done
  rc=0
  build/fuzz/fuzz_$t "${args[@]}" "${dirs[@]}" >"$log.$$" 2>&1 || rc=$?
  mv -f "$log.$$" "$log"
  execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1)
  [ -n "$execs" ] || execs=$(grep -o '^#[0-9]*' "$log" | tail -1 | tr -d '#')
  new=$(find "$found" -type f -name "$$-*" | wc -l)
  if [ $rc -ne 0 ] || [ $new -gt 0 ]; then
    findings=$((findings + 1))
    echo "fuzz: $t: FINDING after ${execs:-?} executions (exit $rc) -- log: $log"
    grep -E '^(==[0-9]+==ERROR|SUMMARY|FUZZ_CHECK|FUZZ memory|artifact_prefix|.*runtime error)' "$log" | head -12 | sed 's/^/    /'
    summary+=("$t: ${execs:-?} execs, FINDING (see $found)")
  else
    echo "fuzz: $t: ${execs:-?} executions in ${secs} s, no finding (corpus: $(find "$corpus" -type f | wc -l) files)"
    summary+=("$t: ${execs:-?} execs, no finding")
  fi
done
{
  echo "started $start, ${secs} s per target, $(uname -m), $($CC_FUZZ --version | head -1)"
  printf '%s\n' "${summary[@]}"
} >build/fuzz/last_run.txt
if [ $findings -gt 0 ]; then
  echo "fuzz: $findings target(s) with findings. Reproduce one with build/fuzz/fuzz_<target> <file>; keep it as a" \
    "regression in tests/fuzz/regressions/<target>/ (tests/fuzz/README.md)."
  exit 1
fi
