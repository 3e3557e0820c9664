#!/usr/bin/env bash
# scripts/run_tests.sh — every test of uma, as `make test` runs it (and CI through .ci/run).
#
# Phases (each runs even when an earlier one failed; the summary lists them all):
#   cpp        C++ tests (GoogleTest) built with CMake in build/test, run by ctest; the CUDA
#              code is compiled wherever nvcc is installed (-DUMA_CUDA=ON, GPU or not)
#   install    `cmake --install build/test` into build/install (headers, libuma_core.a,
#              umaConfig.cmake), then examples/cpp configured with find_package(uma) against
#              it, built in build/example and run
#   python     `pip install .` into the venv (reusing build/test's objects), then pytest on
#              tests/python against the INSTALLED package
#   asan-cpp   the C++ tests built with -DUMA_SANITIZE=ON (ASAN + UBSAN,
#              -fno-sanitize-recover=all) in build/asan, run by ctest with leak detection on
#   asan-py    the extension from build/asan next to a copy of python/uma in build/asan/pkg,
#              pytest with the ASAN runtime preloaded (detect_leaks=0: CPython itself
#              "leaks" at exit; the Python tests prove no leaks with uma.memory_stats)
#   tsan       the allocator, adoption and thread tests (tests/cpp/{threads,memory}_test.cpp,
#              target uma_tsan_tests) built with -DUMA_TSAN=ON (ThreadSanitizer) in build/tsan
#   fuzz       scripts/fuzz.sh: every libFuzzer target of fuzz/ for FUZZ_SECONDS (default 30)
#              seconds from its corpus (clang, ASAN + UBSAN, build/fuzz)
#
# Environment: VENV (default .venv), JOBS (default 2), PHASES (default "cpp install python
# asan-cpp asan-py tsan fuzz"), PYTEST_ARGS (extra pytest arguments), FUZZ_SECONDS (per fuzz target,
# default 30). Exits non-zero when any phase fails.
set -uo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
VENV="${VENV:-.venv}"
PY="$ROOT/$VENV/bin/python"
[ -x "$PY" ] || PY="$VENV/bin/python"
JOBS="${JOBS:-2}"
PHASES="${PHASES:-cpp install python asan-cpp asan-py tsan fuzz}"
PYTEST_ARGS="${PYTEST_ARGS:-}"
REPORTS="$ROOT/build/reports"
mkdir -p "$REPORTS"
rm -f "$REPORTS"/*.xml

# The venv's cmake/ninja (installed by setup_env.sh) come first; PYTHONPATH must not
# point pytest at the source tree (make dev users often export PYTHONPATH=python).
export PATH="$(dirname "$PY"):$PATH"
unset PYTHONPATH
export CMAKE_BUILD_PARALLEL_LEVEL="$JOBS"
# The cpp and python phases compile the CUDA code wherever nvcc is installed, GPU or not (CI
# proves it compiles; CMake's AUTO would skip it without a GPU): UMA_CUDA is passed explicitly.
if command -v nvcc >/dev/null 2>&1 || [ -x /usr/local/cuda/bin/nvcc ] || [ -n "${CUDACXX:-}" ]; then
  UMA_CUDA_TEST=ON
else
  UMA_CUDA_TEST=OFF
fi

declare -a SUMMARY=()
FAILED=0
EXTRA_FAILS=0  # failed phases whose report shows no failing test (build error, crash)
T0=$SECONDS

banner() { printf '\n==================== %s ====================\n' "$*"; }
record() {  # name status seconds detail
  SUMMARY+=("$(printf '%-9s %-5s %5ss  %s' "$1" "$2" "$3" "$4")")
  [ "$2" = PASS ] || FAILED=1
}
# Counts from a JUnit XML file, one verdict per test case: "passed failed skipped".
junit_counts() {
  "$PY" - "$1" <<'EOF'
import sys, xml.etree.ElementTree as ET
try:
    root = ET.parse(sys.argv[1]).getroot()
except Exception:
    print("0 0 0"); sys.exit()
p = f = s = 0
for case in root.iter("testcase"):
    tags = {child.tag for child in case}
    status = case.get("status", "")
    if tags & {"failure", "error"} or status == "fail":
        f += 1
    elif "skipped" in tags or status in ("notrun", "disabled"):
        s += 1
    else:
        p += 1
print(p, f, s)
EOF
}
describe() {  # xml -> "N passed, N failed, N skipped"
  read -r p f s < <(junit_counts "$1")
  echo "$p passed, $f failed, $s skipped"
}

cmake_configure() {  # dir, extra args...
  local dir="$1"; shift
  cmake -S . -B "$dir" -G Ninja -DCMAKE_BUILD_TYPE=Release \
    -DPython_EXECUTABLE="$PY" -DUMA_BUILD_TESTS=ON -DUMA_BUILD_PYTHON=ON "$@"
}

run_ctest() {  # dir, junit path
  ctest --test-dir "$1" --output-on-failure -j "$JOBS" --timeout 600 --output-junit "$2"
}

# Pytest on tests/python; PYTHONPATH (if given) selects the package under test.
run_pytest() {  # junit path, expected package dir substring, [PYTHONPATH, [extra pytest args]]
  local xml="$1" expect="$2" pp="${3:-}" extra="${4:-}"
  local where
  where="$(cd /tmp && PYTHONPATH="$pp" "$PY" -c 'import uma, os; print(os.path.dirname(uma.__file__))' 2>&1)" || {
    echo "cannot import uma: $where"; return 1; }
  echo "testing the uma package at: $where"
  case "$where" in *"$expect"*) ;; *) echo "expected the package under $expect"; return 1 ;; esac
  # With pytest-xdist (installed by setup_env.sh), JOBS workers share the tests; a worker
  # that a sanitizer stops is reported as a failure of the test it was running, and the
  # others go on. PYTEST_ARGS="-p no:xdist" turns it off.
  local par=()
  if [ "$JOBS" -gt 1 ] && "$PY" -c 'import xdist' 2>/dev/null && [[ " $PYTEST_ARGS " != *" -p no:xdist "* ]]; then
    par=(-n "$JOBS")
  fi
  # Default (prepend) import mode puts tests/python on sys.path, never python/, so the
  # tests import the package selected above and not the source tree.
  PYTHONPATH="$pp" "$VENV/bin/pytest" tests/python -p no:cacheprovider -q -ra "${par[@]}" \
    --junitxml="$xml" $extra $PYTEST_ARGS
  local rc=$?
  [ $rc -eq 5 ] && echo "pytest collected no tests (exit 5): counted as a failure"
  return $rc
}

phase_cpp() {
  banner "C++ tests (Release, build/test, UMA_CUDA=$UMA_CUDA_TEST)"
  cmake_configure build/test -DUMA_CUDA="$UMA_CUDA_TEST" || return 1
  cmake --build build/test --target uma_tests || return 1
  run_ctest build/test "$REPORTS/cpp.xml"
}

# The C++ package as a user gets it: installed from build/test (the library the cpp phase
# tested), and a separate CMake project that finds it. One JUnit test case: the example's run.
phase_install() {
  banner "C++ package: cmake --install, examples/cpp against it"
  local xml="$REPORTS/install.xml" prefix="$ROOT/build/install" log="$REPORTS/install-example.log"
  [ -f build/test/CMakeCache.txt ] || cmake_configure build/test -DUMA_CUDA="$UMA_CUDA_TEST" || return 1
  cmake --build build/test --target uma_core || return 1
  rm -rf "$prefix" build/example
  cmake --install build/test --prefix "$prefix" >/dev/null || return 1
  for f in include/uma/array.h include/uma/runtime/program.h lib/libuma_core.a \
           lib/cmake/uma/umaConfig.cmake lib/cmake/uma/umaConfigVersion.cmake lib/cmake/uma/umaTargets.cmake; do
    [ -f "$prefix/$f" ] || { echo "cmake --install did not install $f"; return 1; }
  done
  echo "installed into $prefix: $(cd "$prefix" && find . -type f | wc -l) files"
  cmake -S examples/cpp -B build/example -G Ninja -DCMAKE_PREFIX_PATH="$prefix" || return 1
  cmake --build build/example || return 1
  local t0=$SECONDS rc
  build/example/uma_example 2>&1 | tee "$log"
  rc=${PIPESTATUS[0]}
  "$PY" - "$xml" "$rc" "$((SECONDS - t0))" "$log" <<'EOF'
import sys
from xml.sax.saxutils import escape
xml, rc, secs, log = sys.argv[1], int(sys.argv[2]), sys.argv[3], open(sys.argv[4]).read()
fail = "" if rc == 0 else f'<failure message="uma_example exited {rc}">{escape(log)}</failure>'
open(xml, "w").write(
    '<?xml version="1.0"?>\n<testsuite name="install" tests="1" failures="%d">'
    '<testcase classname="install" name="examples_cpp_uma_example" time="%s">%s</testcase></testsuite>\n'
    % (rc != 0, secs, fail))
EOF
  return "$rc"
}

phase_python() {
  banner "Python tests against the installed package"
  # pip builds in build/test (the objects of the C++ phase are reused: same flags), with the
  # build requirements already in the venv; then installs into the venv's site-packages.
  "$PY" -m pip install -q --no-build-isolation --disable-pip-version-check -c constraints.txt \
    -Cbuild-dir=build/test -Ccmake.define.UMA_BUILD_TESTS=ON -Ccmake.define.UMA_CUDA="$UMA_CUDA_TEST" . || return 1
  # The installed extension must be the one just built (not a stale in-tree `make dev` copy).
  local built installed
  built="$(find build/test -maxdepth 1 -name '_core*.so' | head -n1)"
  installed="$(cd /tmp && "$PY" -c 'import importlib.util as u; print(u.find_spec("uma._core").origin)')"
  if ! cmp -s "$built" "$installed"; then
    echo "installed $installed differs from the freshly built $built"; return 1
  fi
  run_pytest "$REPORTS/python.xml" "site-packages"
}

# ASAN + UBSAN build (UMA_SANITIZE adds -fsanitize=address,undefined
# -fno-sanitize-recover=all); -O1 -g1: line-number stack traces, compiles faster than -O2 -g.
asan_configure() {
  cmake_configure build/asan -DUMA_SANITIZE=ON -DCMAKE_BUILD_TYPE=RelWithDebInfo \
    -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O1 -g1" >/dev/null
}

asan_env() {
  export UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1"
}

phase_asan_cpp() {
  banner "C++ tests under ASAN+UBSAN (build/asan)"
  asan_configure || return 1
  cmake --build build/asan --target uma_tests || return 1
  asan_env
  ASAN_OPTIONS="detect_leaks=1:abort_on_error=0:strict_string_checks=1:detect_stack_use_after_return=1" \
    run_ctest build/asan "$REPORTS/asan-cpp.xml"
}

phase_asan_py() {
  banner "Python tests under ASAN+UBSAN (build/asan extension)"
  asan_configure || return 1
  cmake --build build/asan --target _core || return 1
  local pkg="$ROOT/build/asan/pkg"
  rm -rf "$pkg" && mkdir -p "$pkg"
  cp -r python/uma "$pkg/uma" || return 1
  find "$pkg/uma" \( -name '_core*.so' -o -name __pycache__ \) -prune -exec rm -rf {} +
  local so
  so="$(find build/asan -maxdepth 1 -name '_core*.so' | head -n1)"
  [ -n "$so" ] || { echo "no _core*.so in build/asan"; return 1; }
  cp "$so" "$pkg/uma/" || return 1
  # The ASAN runtime must come first; libstdc++ is preloaded too, or ASAN's __cxa_throw
  # interceptor finds no real __cxa_throw (python does not link libstdc++) and the first
  # C++ exception aborts the process. --capture=sys: pytest's default capture swallows file
  # descriptor 2, and with it the report of a sanitizer that stops the process (UBSAN ignores
  # log_path here), so fd 2 goes straight to this log; print() output is still captured.
  # allocator_may_return_null=1: an impossible allocation (tests make NumPy try 80 GB as an
  # oracle) returns NULL, i.e. MemoryError / uma's RuntimeError, as without ASAN, instead of
  # ASAN aborting the worker.
  local preload
  preload="$(g++ -print-file-name=libasan.so) $(g++ -print-file-name=libstdc++.so)"
  LD_PRELOAD="$preload" \
    ASAN_OPTIONS="detect_leaks=0:abort_on_error=0:allocator_may_return_null=1" \
    UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1" \
    run_pytest "$REPORTS/asan-py.xml" "build/asan/pkg" "$pkg" "--capture=sys"
  local rc=$?
  [ $rc -eq 0 ] || echo "asan-py: pytest exited $rc; a sanitizer report, if any, is above"
  return $rc
}

# ThreadSanitizer build of the memory layer's tests only (a few minutes on 2 cores); one
# OpenMP thread (libgomp is not instrumented: its barriers would be reported as races).
phase_tsan() {
  banner "allocator/adoption/thread tests under TSAN (build/tsan)"
  cmake_configure build/tsan -DUMA_TSAN=ON -DUMA_BUILD_PYTHON=OFF -DCMAKE_BUILD_TYPE=RelWithDebInfo \
    -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O1 -g1" >/dev/null || return 1
  cmake --build build/tsan --target uma_tsan_tests || return 1
  OMP_NUM_THREADS=1 TSAN_OPTIONS="halt_on_error=1:second_deadlock_stack=1" \
    build/tsan/uma_tsan_tests --gtest_output="xml:$REPORTS/tsan.xml"
}

phase_fuzz() {
  banner "libFuzzer targets, ${FUZZ_SECONDS:-30}s each (build/fuzz)"
  FUZZ_SECONDS="${FUZZ_SECONDS:-30}" FUZZ_JUNIT="$REPORTS/fuzz.xml" bash scripts/fuzz.sh
}

for ph in $PHASES; do
  t=$SECONDS
  case "$ph" in
    cpp) phase_cpp; rc=$?; xml="$REPORTS/cpp.xml" ;;
    install) phase_install; rc=$?; xml="$REPORTS/install.xml" ;;
    python) phase_python; rc=$?; xml="$REPORTS/python.xml" ;;
    asan-cpp) phase_asan_cpp; rc=$?; xml="$REPORTS/asan-cpp.xml" ;;
    asan-py) phase_asan_py; rc=$?; xml="$REPORTS/asan-py.xml" ;;
    tsan) phase_tsan; rc=$?; xml="$REPORTS/tsan.xml" ;;
    fuzz) phase_fuzz; rc=$?; xml="$REPORTS/fuzz.xml" ;;
    *) echo "unknown phase $ph"; rc=2; xml=/nonexistent ;;
  esac
  if [ -f "$xml" ]; then detail="$(describe "$xml")"; else detail="(no test report: build or set-up failed)"; fi
  if [ $rc -eq 0 ]; then record "$ph" PASS $((SECONDS - t)) "$detail"
  else
    record "$ph" FAIL $((SECONDS - t)) "$detail (exit $rc)"
    case "$detail" in *" 0 failed"*|"(no test report"*) EXTRA_FAILS=$((EXTRA_FAILS + 1)) ;; esac
  fi
done

banner "summary"
printf '%s\n' "${SUMMARY[@]}"
pass=0; fail=$EXTRA_FAILS; skip=0
for x in "$REPORTS"/*.xml; do
  [ -f "$x" ] || continue
  read -r p f s < <(junit_counts "$x")
  pass=$((pass + p)); fail=$((fail + f)); skip=$((skip + s))
done
echo "total time: $((SECONDS - T0))s"
echo "all: $pass passed, $fail failed, $skip skipped"
if [ $FAILED -ne 0 ]; then
  echo "make test: FAILED"
  exit 1
fi
echo "make test: OK"
