#!/usr/bin/env bash
# scripts/test_wheel.sh WHEEL... — install each wheel into a fresh virtual environment on a PATH
# with no compiler or build tool, and run the smoke test (`make wheel-test`; default: every
# wheel under dist/).
#
# Per wheel: a new venv in a temporary folder (made with $PYTHON's real interpreter); every
# command after that runs under `env -i` with PATH = that venv's bin/ alone (no cc, g++, nvcc,
# cmake, ninja, make); `pip install --only-binary=:all:` of the wheel and the demo's packages
# (scikit-learn, matplotlib) at the versions of constraints.txt, so nothing can be compiled;
# scripts/wheel_smoke.py (import, zero-copy NumPy round trip, a compiled function, the bundled
# OpenBLAS, the CUDA flavour's errors without a GPU); then the demo,
# `python -m uma.examples.train --epochs 1 --json`, whose run must succeed with the reference
# backend agreeing. Prints the install time and a verdict per wheel; exits 1 if any failed.
# EXTRA_PIP: extra requirements installed into each venv (see below).
# OFFLINE=1 (a machine with no package index, such as the GPU machine): the venv sees the
# interpreter's own site-packages (NumPy, scikit-learn, matplotlib as installed there) and only
# the wheel is installed into it, without its dependencies.
set -uo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
PYTHON="${PYTHON:-python3}"
if [ $# -gt 0 ]; then wheels=("$@"); else mapfile -t wheels < <(ls "$ROOT"/dist/*/uma-*.whl 2>/dev/null); fi
[ ${#wheels[@]} -gt 0 ] || { echo "[wheel-test] no wheels (make wheel builds them into dist/)"; exit 1; }
real_py="$("$PYTHON" -c 'import os, sys; print(os.path.realpath(sys.executable))')"
status=0
declare -a results=()
for whl in "${wheels[@]}"; do
  whl="$(realpath "$whl")"
  name="$(basename "$whl")"
  version="$(echo "$name" | cut -d- -f2)"
  case "$whl" in */cuda/*) flavour=cuda ;; *) flavour=cpu ;; esac
  work="$(mktemp -d /tmp/uma-wheel-test.XXXXXX)"
  echo "==================== $flavour: $name (in $work)"
  run() { env -i HOME="$HOME" LANG=C.UTF-8 PATH="$work/venv/bin" MPLBACKEND=Agg "$@"; }
  pipi() { (cd "$work" && run python -m pip install -q --disable-pip-version-check --only-binary=:all: \
    -c "$ROOT/constraints.txt" "$@"); }
  ok=1
  if [ "${OFFLINE:-0}" = 1 ]; then
    "$real_py" -m venv "$work/venv" || ok=0
    # the packages of $PYTHON (which may itself be a venv) become visible to the new venv
    "$PYTHON" -c 'import site; print("\n".join(site.getsitepackages()))' \
      > "$("$work/venv/bin/python" -c 'import sysconfig; print(sysconfig.get_path("purelib"))')/_offline_site.pth" || ok=0
    pipi() { (cd "$work" && run python -m pip install -q --disable-pip-version-check --no-index --no-deps --ignore-installed "$@"); }
  else
    "$real_py" -m venv "$work/venv" || ok=0
  fi
  t0=$SECONDS
  [ $ok = 1 ] && pipi "$whl" || ok=0  # uma and its dependencies, NumPy and ml_dtypes
  secs=$((SECONDS - t0))
  echo "[wheel-test] pip install of the wheel (and numpy, ml_dtypes): ${secs}s"
  t0=$SECONDS
  [ $ok = 1 ] && [ "${OFFLINE:-0}" != 1 ] && { pipi scikit-learn matplotlib || ok=0; }  # the demo's data and plot
  # EXTRA_PIP: more requirements for the venv, e.g. "nvidia-cublas==13.0.2.14" for the CUDA
  # wheel's GPU matmul check on a GPU machine (not pinned in constraints.txt: not run here).
  if [ $ok = 1 ] && [ -n "${EXTRA_PIP:-}" ]; then
    # shellcheck disable=SC2086
    pipi $EXTRA_PIP || ok=0
  fi
  echo "[wheel-test] pip install scikit-learn matplotlib (the demo's): $((SECONDS - t0))s"
  [ $ok = 1 ] && (cd "$work" && run python "$ROOT/scripts/wheel_smoke.py" "$flavour" "$version") || ok=0
  if [ $ok = 1 ]; then
    t1=$SECONDS
    (cd "$work" && run python -m uma.examples.train --epochs 1 --json --plot "$work/loss.png") > "$work/demo.log" 2>&1
    rc=$?
    cat "$work/demo.log"
    run "$work/venv/bin/python" - "$work/demo.log" "$rc" <<'PY' || ok=0
import json, sys
log, rc = open(sys.argv[1]).read().strip().splitlines(), int(sys.argv[2])
s = json.loads(log[-1]) if rc == 0 and log else {}
ok = rc == 0 and s.get("predictions_identical") is True and s.get("epochs") == 1 and s.get("adopted_bytes", 0) > 0
print(("ok   " if ok else "FAIL ") + f"demo --epochs 1: exit {rc}, test accuracy {s.get('test_accuracy')}, "
      f"reference agrees: {s.get('predictions_identical')}, adopted bytes {s.get('adopted_bytes')}")
sys.exit(0 if ok else 1)
PY
    echo "[wheel-test] demo: $((SECONDS - t1))s"
  fi
  if [ $ok = 1 ]; then results+=("PASS $flavour $name (install ${secs}s)"); rm -rf "$work"
  else results+=("FAIL $flavour $name (kept $work)"); status=1; fi
done
echo "==================== wheel tests"
printf '%s\n' "${results[@]}"
exit $status
