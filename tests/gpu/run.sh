#!/usr/bin/env bash
# The GPU test run, for the GPU machine: builds uma from a clean checkout with the
# CUDA code, runs the C++ tests (ctest) and the Python tests with the GPU present (the CUDA
# tests, then every cuda-parametrized test of the suite), then
# compute-sanitizer memcheck on the C++ CUDA tests.
#
#   bash tests/gpu/run.sh [LOGDIR]
#   PHASES="cpp-build python-install python-test" bash tests/gpu/run.sh   # only these phases
#
# Needs: nvcc (PATH or /usr/local/cuda/bin), cmake, ninja, g++, GoogleTest, OpenBLAS, and a
# python3 with numpy, nanobind, scikit-build-core, pytest, pytest-xdist, hypothesis (torch, cupy, jax optional). No
# network: pip installs with --no-build-isolation --no-deps. Exit status 0 only when every
# phase passed; a summary line per phase at the end (and in LOGDIR/summary.txt).
set -u
cd "$(dirname "$0")/../.."
LOG="${1:-build/gpu-logs}"
mkdir -p "$LOG"
PY="${PYTHON:-python3}"
JOBS="${JOBS:-$(nproc)}"
export PATH="$PATH:/usr/local/cuda/bin"
export XLA_PYTHON_CLIENT_PREALLOCATE=false NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
# Fused chains must get generated kernels here (NVRTC and the toolkit's headers are on this
# machine); the interpreting kernel is tested by its own phase below.
export UMA_REQUIRE_CHAIN_KERNELS=1
status=0
summary=()
phase() {  # name, command...
  local name="$1"; shift
  if [ -n "${PHASES:-}" ] && [[ " $PHASES " != *" $name "* ]]; then return 0; fi
  local t0=$SECONDS
  echo "=== $name"
  if "$@" >"$LOG/$name.log" 2>&1; then summary+=("$name: ok ($((SECONDS - t0)) s)")
  else summary+=("$name: FAILED ($((SECONDS - t0)) s), see $LOG/$name.log"); status=1; fi
  tail -n 5 "$LOG/$name.log"
}

nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv >"$LOG/gpu.txt" 2>&1 || true

# One build directory: pip reuses the objects of uma_core that the C++ build compiled.
phase cpp-build bash -c "cmake -S . -B build/gpu -G Ninja -DCMAKE_BUILD_TYPE=Release -DUMA_CUDA=ON \
  -DUMA_BUILD_TESTS=ON -DUMA_BUILD_PYTHON=ON -DPython_EXECUTABLE=$(command -v "$PY") \
  && cmake --build build/gpu -j $JOBS --target uma_tests"
phase cpp-test build/gpu/uma_tests --gtest_brief=1
phase python-install "$PY" -m pip install --no-build-isolation --no-deps --force-reinstall \
  -Ccmake.define.UMA_CUDA=ON -Ccmake.define.UMA_BUILD_TESTS=ON -Cbuild-dir=build/gpu .
phase python-test bash -c "cd /tmp && $PY -m pytest $PWD/tests/python/test_cuda.py $PWD/tests/python/test_cuda_graphs.py $PWD/tests/python/test_backends_gpu.py $PWD/tests/python/test_fft.py -q -ra -p no:cacheprovider"
# The graph tests again with lean replays off (Note [Lean replays]; on by default).
phase python-no-lean-replay bash -c "cd /tmp && UMA_CUDA_LEAN_REPLAY=0 $PY -m pytest $PWD/tests/python/test_cuda_graphs.py \
  $PWD/tests/python/test_cuda.py -q -ra -p no:cacheprovider"
# The fused chains on the instruction-interpreting kernel (Note [Generated chain kernels]).
phase python-interpreted-chains bash -c "cd /tmp && UMA_CUDA_CHAIN_KERNELS=0 UMA_REQUIRE_CHAIN_KERNELS=0 $PY -m pytest \
  $PWD/tests/python/test_cuda_graphs.py -k 'fused or chain or training' -q -ra -p no:cacheprovider"
# Every test of the suite that runs on the GPU (the cuda parametrizations of every file, and the
# jax-cuda / torch-cuda backends in the backend matrix), spread over the cores.
phase python-gpu-all bash -c "cd /tmp && $PY -m pytest $PWD/tests/python -k cuda -n $JOBS -q -ra -p no:cacheprovider"
# The installed module beside torch, JAX and CuPy: its exported symbols, its libstdc++, and fresh
# interpreters importing uma before and after each peer, exchanging host and cuda arrays.
phase extension bash -c "cd /tmp && $PY -m pytest $PWD/tests/python/test_extension.py -v -ra -p no:cacheprovider"
if command -v compute-sanitizer >/dev/null; then
  # Memory errors and failed CUDA API calls are errors. Not checked: leaks (the staging pool
  # and the allocators' caches live until process exit by design) and the deliberate
  # out-of-memory test (its failing cudaMalloc is the point).
  phase memcheck compute-sanitizer --tool memcheck --error-exitcode 1 --leak-check no \
    build/gpu/uma_tests --gtest_filter='Cuda*:-Cuda.OutOfMemory*' --gtest_brief=1
  # The cuda linker's Python tests (Programs, their CUDA graphs, label checks) under memcheck;
  # not the every-op chain test (about 240 chain kernels compiled and loaded under the sanitizer
  # would take most of this script's time; python-test runs it, and each chain runs the same
  # launch path as the chains of these tests).
  phase memcheck-python bash -c "cd /tmp && compute-sanitizer --tool memcheck --error-exitcode 1 --leak-check no \
    $PY -m pytest $PWD/tests/python/test_cuda_graphs.py $PWD/tests/python/test_cuda.py \
    -k '(graph or linker or program) and not every_fusable_op' -q -p no:cacheprovider"
  phase memcheck-no-lean-replay bash -c "cd /tmp && UMA_CUDA_LEAN_REPLAY=0 compute-sanitizer --tool memcheck \
    --error-exitcode 1 --leak-check no $PY -m pytest $PWD/tests/python/test_cuda_graphs.py -k 'not every_fusable_op' \
    -q -p no:cacheprovider"
else
  summary+=("memcheck: skipped (no compute-sanitizer)")
fi

printf '%s\n' "${summary[@]}" | tee "$LOG/summary.txt"
exit $status
