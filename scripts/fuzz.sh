#!/usr/bin/env bash
# scripts/fuzz.sh — builds the libFuzzer targets of fuzz/ (clang, -DUMA_FUZZ=ON, in build/fuzz)
# and runs each for FUZZ_SECONDS seconds, as `make fuzz` and the fuzz phase of `make test` do.
#
# Each target starts from its seed corpus fuzz/corpus/<target>/ (kept in the repo, read-only
# here) plus the inputs it kept in earlier runs on this machine (build/fuzz/corpus/<target>/,
# never committed). A crash, sanitizer report, timeout or leak fails the run; the input that
# caused it is saved as build/fuzz/artifacts/<target>/crash-* (reproduce with
# `build/fuzz/<target> <file>`; then turn it into a test in tests/cpp/fuzz_regressions_test.cpp).
#
# Environment: FUZZ_SECONDS (default 30, per target), FUZZ_TARGETS (default: all of fuzz/fuzz_*.cpp),
# JOBS (compile jobs, default 2), CXX_FUZZ (clang++ to use, default clang++-19 or clang++),
# FUZZ_JUNIT (write a JUnit report there). Exits non-zero when the build or any target fails.
set -uo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
SECONDS_PER_TARGET="${FUZZ_SECONDS:-30}"
JOBS="${JOBS:-2}"
BUILD="$ROOT/build/fuzz"
VENV="${VENV:-.venv}"
[ -d "$ROOT/$VENV/bin" ] && export PATH="$ROOT/$VENV/bin:$PATH"  # its cmake/ninja, if set up
CXX_FUZZ="${CXX_FUZZ:-$(command -v clang++-19 || command -v clang++ || true)}"
[ -n "$CXX_FUZZ" ] || { echo "fuzz: no clang++ (Debian: apt-get install clang-19 libclang-rt-19-dev libomp-19-dev)"; exit 1; }

TARGETS="${FUZZ_TARGETS:-$(cd fuzz && ls fuzz_*.cpp | sed 's/\.cpp$//' | tr '\n' ' ')}"

echo "fuzz: building $TARGETS with $CXX_FUZZ in build/fuzz"
cmake -S . -B "$BUILD" -G Ninja -DCMAKE_CXX_COMPILER="$CXX_FUZZ" -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O1 -g1" -DUMA_FUZZ=ON -DUMA_BUILD_TESTS=OFF -DUMA_BUILD_PYTHON=OFF \
  >/dev/null || exit 1
# shellcheck disable=SC2086
cmake --build "$BUILD" -j "$JOBS" --target $TARGETS || exit 1

# One OpenMP thread; the sanitizers stop at the first report. Leak detection stays on.
export OMP_NUM_THREADS=1
export ASAN_OPTIONS="detect_leaks=1:abort_on_error=1:strict_string_checks=1:detect_stack_use_after_return=1:allocator_may_return_null=1"
export UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1"
sym="$(dirname "$(readlink -f "$CXX_FUZZ")")/llvm-symbolizer"  # stack traces with file:line
[ -x "$sym" ] && export ASAN_SYMBOLIZER_PATH="$sym" UBSAN_SYMBOLIZER_PATH="$sym"

declare -a RESULTS=()
FAILED=0
for t in $TARGETS; do
  seeds="$ROOT/fuzz/corpus/$t"
  work="$BUILD/corpus/$t"
  art="$BUILD/artifacts/$t"
  mkdir -p "$work" "$art"
  log="$BUILD/$t.log"
  echo "fuzz: $t for ${SECONDS_PER_TARGET}s (seeds: fuzz/corpus/$t, kept inputs: build/fuzz/corpus/$t)"
  # New inputs go to $work (the first corpus dir); the seeds are only read.
  "$BUILD/$t" "$work" "$seeds" -max_total_time="$SECONDS_PER_TARGET" -timeout=10 -rss_limit_mb=2048 \
    -max_len=4096 -print_final_stats=1 -artifact_prefix="$art/" >"$log" 2>&1
  rc=$?
  execs="$(grep -o 'stat::number_of_executed_units: *[0-9]*' "$log" | grep -o '[0-9]*$' | tail -n1)"
  cov="$(grep -oE 'cov: [0-9]+' "$log" | tail -n1 | grep -oE '[0-9]+')"
  if [ $rc -eq 0 ]; then
    RESULTS+=("$(printf '%-18s PASS %9s execs  cov %s' "$t" "${execs:-?}" "${cov:-?}")")
  else
    FAILED=1
    RESULTS+=("$(printf '%-18s FAIL (exit %s, see %s)' "$t" "$rc" "${log#"$ROOT"/}")")
    echo "---- $t failed; the end of its log:"
    tail -n 60 "$log"
    ls "$art"/ 2>/dev/null | sed 's/^/  artifact: /'
  fi
done

echo "---- fuzz summary (${SECONDS_PER_TARGET}s per target)"
printf '%s\n' "${RESULTS[@]}"

if [ -n "${FUZZ_JUNIT:-}" ]; then
  {
    echo '<?xml version="1.0" encoding="UTF-8"?>'
    echo "<testsuite name=\"fuzz\" tests=\"$(echo "$TARGETS" | wc -w)\">"
    for line in "${RESULTS[@]}"; do
      name="${line%% *}"
      if [[ "$line" == *" PASS "* ]]; then echo "  <testcase classname=\"fuzz\" name=\"$name\"/>"
      else echo "  <testcase classname=\"fuzz\" name=\"$name\"><failure message=\"crash\"/></testcase>"; fi
    done
    echo '</testsuite>'
  } >"$FUZZ_JUNIT"
fi
exit $FAILED
