#!/usr/bin/env bash
# scripts/build_wheels.sh [FLAVOUR...] — the wheels of uma (`make wheel`), from pyproject.toml
# (scikit-build-core), repaired to a manylinux tag by auditwheel:
#
#   cpu    dist/cpu/uma-VERSION-cpXY-cpXY-manylinux_2_N_x86_64.whl   (-DUMA_CUDA=OFF)
#   cuda   dist/cuda/uma-VERSION-cpXY-cpXY-manylinux_2_N_x86_64.whl  (-DUMA_CUDA=ON; needs nvcc)
#
# Both ship pocketfft's licence in uma-VERSION.dist-info/licenses/pocketfft/ (checked below) and
# bundle OpenBLAS and what it needs (libgfortran, libquadmath) and libgomp in uma.libs/
# (auditwheel repair copies them from the build machine and rewrites the RPATHs). The CUDA
# wheel links the CUDA runtime statically and needs no CUDA library to import: the runtime
# opens the driver (libcuda.so.1) when a GPU is first asked for, and uma opens cuBLAS
# (libcublas.so.13; the nvidia-cublas wheel is found too) at the first GPU matmul and cuFFT
# (libcufft.so.12; the nvidia-cufft wheel too) at the first GPU transform, and NVRTC
# (libnvrtc.so.13 and CCCL's headers; the nvidia-cuda-nvrtc and nvidia-cuda-cccl wheels too) to
# compile fused chains' kernels, which run on an interpreting kernel without it; what is
# missing is named in uma.cuda.unavailable_reason() and in the RuntimeError. Same distribution
# name and version for both: the folder says the flavour.
#
# Default flavours: cpu, and cuda where nvcc is installed. Environment: VENV (default .venv,
# prepared by `scripts/setup_env.sh wheel`), JOBS (default 2). Build folders: build/wheel-FLAVOUR
# (kept, so a rebuild compiles only what changed; ccache serves a fresh folder).
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
VENV="${VENV:-.venv}"
case "$VENV" in /*) ;; *) VENV="$ROOT/$VENV" ;; esac
PY="$VENV/bin/python"
JOBS="${JOBS:-2}"
export PATH="$VENV/bin:$PATH" CMAKE_BUILD_PARALLEL_LEVEL="$JOBS"
unset PYTHONPATH

have_nvcc() { command -v nvcc >/dev/null 2>&1 || [ -x /usr/local/cuda/bin/nvcc ] || [ -n "${CUDACXX:-}" ]; }
if [ $# -gt 0 ]; then flavours=("$@"); else
  flavours=(cpu)
  if have_nvcc; then flavours+=(cuda); else echo "[wheel] no nvcc: building the cpu wheel only"; fi
fi

for f in "${flavours[@]}"; do
  case "$f" in
    cpu) cuda=OFF ;;
    cuda) cuda=ON; have_nvcc || { echo "[wheel] the cuda wheel needs nvcc (CUDA 13)"; exit 1; } ;;
    *) echo "[wheel] unknown flavour '$f' (cpu or cuda)"; exit 2 ;;
  esac
  raw="build/wheel-$f/dist"
  rm -rf "$raw" "dist/$f"
  echo "[wheel] $f: pip wheel (build/wheel-$f, UMA_CUDA=$cuda)"
  t=$SECONDS
  "$PY" -m pip wheel -q --disable-pip-version-check --no-build-isolation --no-deps -c constraints.txt \
    -w "$raw" -Cbuild-dir="build/wheel-$f" -Ccmake.define.UMA_CUDA="$cuda" -Ccmake.define.UMA_BUILD_TESTS=OFF .
  whl="$(ls "$raw"/uma-*.whl)"
  echo "[wheel] $f: built $(basename "$whl") in $((SECONDS - t))s"
  auditwheel show "$whl"
  auditwheel repair -w "dist/$f" "$whl"
  out="$(ls "dist/$f"/uma-*.whl)"
  # The extension must need no CUDA library (they are opened at run time, or linked statically).
  tmp="$(mktemp -d)"
  "$PY" -m zipfile -e "$out" "$tmp"
  so="$(ls "$tmp"/uma/_core*.so)"
  needed="$(readelf -d "$so" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p' | tr '\n' ' ')"
  # pocketfft's BSD licence (CMakeLists.txt installs it into the dist-info's licenses/) must ship.
  lic="$(ls "$tmp"/uma-*.dist-info/licenses/pocketfft/LICENSE.md 2>/dev/null || true)"
  rm -rf "$tmp"
  [ -n "$lic" ] || { echo "[wheel] $f: the wheel lacks pocketfft's LICENSE.md (dist-info/licenses/pocketfft)"; exit 1; }
  echo "[wheel] $f: _core NEEDED: $needed"
  case " $needed " in *libcuda*|*libcudart*|*libcublas*|*libcufft*)
    echo "[wheel] $f: the extension links a CUDA library: it would not import without CUDA"; exit 1 ;;
  esac
  echo "[wheel] $f: $out ($(du -h "$out" | cut -f1))"
done
