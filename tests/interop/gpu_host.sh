#!/usr/bin/env bash
# tests/interop/gpu_host.sh — runs on the GPU machine (Ubuntu 24.04, Python 3.12 with NumPy 2,
# PyTorch, CuPy, JAX; no network): builds uma from this checkout, runs the CPU-array interop
# matrix and the interop tests against that machine's peers, checks that device arrays
# (torch.cuda, CuPy) are refused cleanly by a CPU-only build with their deleters called, and
# runs the import / copy / file benchmarks on its 16-core host. Results go to $OUT (or ./out).
set -uo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
OUT="${OUT:-$ROOT/out}"
mkdir -p "$OUT"
cd "$ROOT"
export PYTHONUNBUFFERED=1
status=0
step() { printf '\n===== %s =====\n' "$*"; }

step "build (pip install --no-build-isolation)"
python3 -m pip install --no-build-isolation --no-deps -q . 2>&1 | tail -5 || exit 1
cd /tmp
python3 -c "import uma, numpy, sys; print('uma', uma.__version__, 'numpy', numpy.__version__, 'python', sys.version.split()[0])" || exit 1

# The CPU-array matrix: JAX there defaults to the GPU, so pin it to the CPU for these steps.
step "interop matrix (CPU arrays)"
JAX_PLATFORMS=cpu python3 "$ROOT/tests/interop/run_matrix.py" --json "$OUT/matrix.json" 2>&1 | tee "$OUT/matrix.txt" | tail -n 80 || status=1

step "interop tests (pytest)"
JAX_PLATFORMS=cpu python3 -m pytest -q -p no:cacheprovider --rootdir "$ROOT" \
  "$ROOT/tests/python/test_interop_matrix.py" "$ROOT/tests/python/test_dlpack.py" \
  "$ROOT/tests/python/test_interop.py" "$ROOT/tests/python/test_bad_input.py" 2>&1 | tee "$OUT/pytest.txt" | tail -n 15
[ "${PIPESTATUS[0]}" -eq 0 ] || status=1

step "device arrays are refused cleanly by a CPU-only build"
python3 - <<'PY' 2>&1 | tee "$OUT/device_refusal.txt" || status=1
import gc, sys, uma
ok = True
def check(name, make):
    global ok
    try:
        x = make()
    except Exception as e:  # peer not usable here
        print(f"{name}: skipped ({type(e).__name__}: {e})"); return
    before = uma.memory_stats()["adopted_bytes"]
    for fn in (uma.asarray, uma.from_dlpack):
        try:
            fn(x)
            print(f"{name} {fn.__name__}: WRONG, accepted a device array"); ok = False
        except RuntimeError as e:
            print(f"{name} {fn.__name__}: refused: {e}")
    gc.collect()
    if uma.memory_stats()["adopted_bytes"] != before:
        print(f"{name}: WRONG, adopted bytes leaked"); ok = False
check("torch.cuda", lambda: __import__("torch").arange(8.0, device="cuda"))
check("cupy", lambda: __import__("cupy").arange(8.0))
check("jax (gpu)", lambda: __import__("jax").device_put(__import__("jax").numpy.arange(8.0), __import__("jax").devices("gpu")[0]))
sys.exit(0 if ok else 1)
PY

step "benchmarks (host: $(nproc) cores)"
JAX_PLATFORMS=cpu python3 "$ROOT/bench/bench_interop.py" --json "$OUT/bench_interop.json" 2>&1 | tee "$OUT/bench_interop.txt" | tail -n 40
python3 "$ROOT/bench/bench_files.py" 2>&1 | tee "$OUT/bench_files.txt" | tail -n 12
exit $status
