#!/usr/bin/env bash
# The GPU benchmarks of docs/benchmarks.md, for the GPU machine, after `tests/gpu/run.sh`
# installed uma (or any install of uma built with UMA_CUDA=ON):
#
#   bash bench/run_gpu_benchmarks.sh [OUTDIR]        # default build/gpu-bench
#
# Writes OUTDIR/bench_cuda_ops.{json,txt} (1 GiB add/sum, matmul, MLP steps vs torch and
# CuPy), OUTDIR/bench_cuda_transfer.{json,txt} (host<->GPU 1 MiB..4 GiB vs torch, CuPy, JAX)
# OUTDIR/bench_call.{json,txt} (call overhead on the GPU machine's host),
# OUTDIR/bench_conversions.{json,txt} (switches of residency, cuda / jax-cuda / torch-cuda
# included) and OUTDIR/bench_gpu_step.{json,txt} (the GPU training step and the scalar call
# against torch and JAX). Then, where
# matplotlib is installed: python3 bench/plot_benchmarks.py --measurements OUTDIR.
# REPEAT (default 3) sets the transfer benchmark's repeats. Exit status: the first failure's.
set -u
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
OUT="$(mkdir -p "${1:-$ROOT/build/gpu-bench}" && cd "${1:-$ROOT/build/gpu-bench}" && pwd)"
PY="${PYTHON:-python3}"
export XLA_PYTHON_CLIENT_PREALLOCATE=false
cd /tmp  # the installed uma, not the source tree's python/
status=0
run() {  # name, args...
  local name="$1"; shift
  echo "=== $name"
  if ! "$PY" "$ROOT/bench/$name.py" "$@" >"$OUT/$name.txt" 2>&1; then
    echo "$name FAILED (see $OUT/$name.txt)"; [ $status -eq 0 ] && status=1
  fi
  tail -n 25 "$OUT/$name.txt"
}
run bench_cuda_ops --json "$OUT/bench_cuda_ops.json"
run bench_cuda_transfer --repeat "${REPEAT:-3}" --json "$OUT/bench_cuda_transfer.json"
run bench_call --json "$OUT/bench_call.json"
run bench_conversions --sizes 1024,16777216 --json "$OUT/bench_conversions.json"
run bench_gpu_step --repeat 5 --json "$OUT/bench_gpu_step.json"
exit $status
