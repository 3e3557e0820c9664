#!/usr/bin/env bash
# uma_bench_call (bench/bench_call.cpp) built without and with the CUDA code, run alternately in
# one session, so that both see the same machine state. (Issue 4: on the GPU machine's host the
# CUDA build measured 341 ns per counter call and the UMA_CUDA=OFF build 204 ns, in two separate
# sessions; both builds execute the same instructions per call (callgrind: equal counts), make
# no CUDA call and load no CUDA driver on this path. Measured since: docs/benchmarks.md.)
#
#   bash bench/bench_call_builds.sh [ROUNDS]      # default 3; the CUDA build needs nvcc
#
# Build trees: build/bench-cpu and build/bench-cuda. Prints each round's two tables.
set -eu
cd "$(dirname "$0")/.."
export PATH="$PATH:/usr/local/cuda/bin"
common=(-G Ninja -DCMAKE_BUILD_TYPE=Release -DUMA_BUILD_TESTS=OFF -DUMA_BUILD_PYTHON=OFF -DUMA_BUILD_BENCH=ON)
cmake -S . -B build/bench-cpu "${common[@]}" -DUMA_CUDA=OFF >/dev/null
cmake -S . -B build/bench-cuda "${common[@]}" -DUMA_CUDA=ON >/dev/null
cmake --build build/bench-cpu --target uma_bench_call
cmake --build build/bench-cuda --target uma_bench_call
for i in $(seq "${1:-3}"); do
  echo "=== round $i, UMA_CUDA=OFF"
  build/bench-cpu/uma_bench_call --quick
  echo "=== round $i, UMA_CUDA=ON"
  build/bench-cuda/uma_bench_call --quick
done
