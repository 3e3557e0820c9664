#!/usr/bin/env bash
# scripts/array_api_suite.sh [PYTEST ARGS...] — run the official Python Array API conformance
# suite (data-apis/array-api-tests, at the commit pinned below) against uma, and print the
# counts. Not part of `make test` (minutes, not seconds); uma's own fast tests of the namespace
# are tests/python/test_array_api_namespace.py.
#
#   1. the suite is cloned into build/array-api-tests/src (once) and checked out at $AAT_COMMIT,
#      its spec submodule (data-apis/array-api) at the commit the suite's tree records;
#   2. its PyPI requirements that the test profile lacks (ndindex, pytest-json-report and
#      pytest-metadata) are installed with pip --target into build/array-api-tests/deps at
#      the versions of constraints.txt (the venv is left alone; hypothesis, pytest and
#      pytest-xdist come from it: `make test`'s profile);
#   3. pytest runs the suite with ARRAY_API_TESTS_MODULE=uma, --max-examples=$MAX_EXAMPLES
#      (default 10), --hypothesis-seed=$SEED (default 0: the same examples every run) on
#      $JOBS workers (default 2), writing a JSON report to build/array-api-tests/report.json.
#
# uma is imported from the source tree (python/, as `make dev` builds it) when an extension is
# built there, else from the installed package; the header line names the file.
# Environment: PYTHON (default .venv/bin/python), AAT_GIT / AAT_SPEC_GIT (where to clone the
# suite and the spec from: URLs or local git directories), MAX_EXAMPLES, SEED, JOBS.
# Extra arguments go to pytest, e.g. `scripts/array_api_suite.sh -k flip` or a file path
# `array_api_tests/test_manipulation_functions.py`.
# The tests uma is known to fail are listed, each group with its reason, in
# scripts/array_api_xfails.txt (xfails: a listed test that passes shows as XPASS).
# Exit status: pytest's (0: every test passes or is a listed xfail).
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
AAT_COMMIT=55fcc60179efa2680ddd6cd926ddf17b83530e2b  # array-api-tests main, 2026 (spec 2025.12)
AAT_GIT="${AAT_GIT:-https://github.com/data-apis/array-api-tests}"
AAT_SPEC_GIT="${AAT_SPEC_GIT:-https://github.com/data-apis/array-api}"
PYTHON="${PYTHON:-$ROOT/.venv/bin/python}"
WORK="$ROOT/build/array-api-tests"
SRC="$WORK/src"
DEPS="$WORK/deps"

log() { printf '[array-api] %s\n' "$*"; }

# ---- 1. the suite at the pinned commit ---------------------------------------------------------
if [ ! -d "$SRC/.git" ]; then
  log "cloning $AAT_GIT into $SRC"
  mkdir -p "$WORK"
  git clone -q --no-checkout "$AAT_GIT" "$SRC"
fi
git -C "$SRC" cat-file -e "$AAT_COMMIT^{commit}" 2>/dev/null || git -C "$SRC" fetch -q origin "$AAT_COMMIT"
git -C "$SRC" -c advice.detachedHead=false checkout -q --force "$AAT_COMMIT"  # also restores edited files
SPEC_COMMIT="$(git -C "$SRC" ls-tree HEAD array-api | awk '{print $3}')"
if [ "$(git -C "$SRC/array-api" rev-parse HEAD 2>/dev/null || true)" != "$SPEC_COMMIT" ]; then
  log "cloning the spec $AAT_SPEC_GIT at $SPEC_COMMIT"
  rm -rf "$SRC/array-api"
  git clone -q --no-checkout "$AAT_SPEC_GIT" "$SRC/array-api"
  git -C "$SRC/array-api" -c advice.detachedHead=false checkout -q --force "$SPEC_COMMIT"
fi

# ---- 2. the suite's own requirements, pinned, outside the venv -------------------------------
if ! PYTHONPATH="$DEPS" "$PYTHON" -c 'import ndindex, pytest_jsonreport, pytest_metadata' 2>/dev/null; then
  log "installing ndindex, pytest-json-report, pytest-metadata into $DEPS"
  "$PYTHON" -m pip install -q --disable-pip-version-check --no-deps -c "$ROOT/constraints.txt" \
    --target "$DEPS" ndindex pytest-json-report pytest-metadata
fi

# ---- 3. run it --------------------------------------------------------------------------------
UMA_PATH=""
if compgen -G "$ROOT/python/uma/_core*.so" >/dev/null; then UMA_PATH="$ROOT/python:"; fi
export ARRAY_API_TESTS_MODULE=uma
export PYTHONPATH="${UMA_PATH}${DEPS}${PYTHONPATH:+:$PYTHONPATH}"
log "uma from $("$PYTHON" -c 'import uma; print(uma.__file__)'); suite $AAT_COMMIT, spec $SPEC_COMMIT"
cd "$SRC"
set +e
"$PYTHON" -m pytest -q -p no:cacheprovider --max-examples="${MAX_EXAMPLES:-10}" \
  --hypothesis-seed="${SEED:-0}" -n "${JOBS:-2}" --json-report --json-report-file="$WORK/report.json" \
  --rootdir="$SRC" --xfails-file="$ROOT/scripts/array_api_xfails.txt" \
  "${@:-array_api_tests/}"
rc=$?
set -e
log "JSON report: $WORK/report.json"
exit $rc
