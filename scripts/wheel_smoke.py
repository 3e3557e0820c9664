"""scripts/wheel_smoke.py FLAVOUR VERSION — the smoke test of an installed uma wheel, run by
scripts/test_wheel.sh in a fresh virtual environment whose PATH has no compiler.

Checks: no compiler or build tool is reachable; uma imports from site-packages with
``__version__`` == the wheel's version; a NumPy array is adopted without a copy and exported
back to NumPy without one; a compiled function with a shared-variable update converges; a
matmul (OpenBLAS) is right; OpenBLAS is the wheel's bundled copy, not a system one; the CUDA
flavour is built with CUDA and, without a usable GPU, says why and refuses a cuda array with a
RuntimeError naming the reason. Prints one line per check; exit status 1 if any fails.
"""
import importlib.metadata as md
import os
import shutil
import sys

import numpy as np

flavour, version = sys.argv[1], sys.argv[2]
failures = []


def check(ok, what):
    print(("ok   " if ok else "FAIL ") + what)
    if not ok:
        failures.append(what)


tools = ["cc", "c++", "gcc", "g++", "clang", "clang++", "nvcc", "cmake", "ninja", "make"]
check(all(shutil.which(t) is None for t in tools) and not os.environ.get("CC") and not os.environ.get("CXX"),
      "no compiler or build tool on PATH (" + " ".join(tools) + ")")

import uma  # noqa: E402

site = os.path.dirname(os.path.dirname(os.path.realpath(uma.__file__)))
check(site.endswith("site-packages") and site.startswith(sys.prefix), f"uma imported from the venv: {uma.__file__}")
check(uma.__version__ == md.version("uma") == version, f"uma.__version__ {uma.__version__} == the wheel's {version}")

# Zero-copy NumPy round trip.
x = np.arange(12, dtype=np.float32).reshape(3, 4)
before = uma.memory_stats()["adopted_bytes"]
a = uma.asarray(x)
x[0, 0] = 42.0
check(a[0, 0].item() == 42.0 and uma.memory_stats()["adopted_bytes"] - before == x.nbytes,
      "uma.asarray adopts the NumPy buffer (a write shows, adopted_bytes grows by its size)")
back = np.asarray(a)
check(np.shares_memory(back, x) and back.ctypes.data == x.ctypes.data, "np.asarray(uma array) is the same memory")
del a, back

# A compiled function with an update (backend cpu: the C++ call path).
w = uma.shared(np.zeros(3), name="w")
v = uma.sym.vector("v")
cost = uma.sum((w - v) ** 2)
step = uma.function([v], cost, updates={w: w - 0.1 * uma.grad(cost, w)}, backend="cpu")
for _ in range(100):
    step(np.array([1.0, 2.0, 3.0]))
check(np.allclose(w.get_value(), [1.0, 2.0, 3.0], atol=1e-6), f"compiled SGD converges: w = {w.get_value()}")

rng = np.random.default_rng(0)
A, B = rng.standard_normal((64, 48)), rng.standard_normal((48, 32))
check(np.allclose(np.asarray(uma.matmul(uma.asarray(A), uma.asarray(B))), A @ B), "matmul (OpenBLAS) == NumPy's")

# The shared libraries this process loaded: OpenBLAS must be the wheel's copy.
with open("/proc/self/maps") as fh:
    libs = sorted({ln.split()[-1] for ln in fh if ".so" in ln.split()[-1]})
blas = [p for p in libs if "openblas" in os.path.basename(p)]
check(any(p.startswith(os.path.join(site, "uma.libs")) for p in blas) and
      not any(p.startswith(("/usr/", "/lib")) for p in blas),
      f"OpenBLAS loaded from the wheel's uma.libs: {blas}")
cuda_libs = [p for p in libs if os.path.basename(p).startswith(("libcuda", "libcublas"))]

check(uma.cuda.built_with_cuda() == (flavour == "cuda"), f"built_with_cuda() is {uma.cuda.built_with_cuda()} ({flavour} wheel)")
if uma.cuda.is_available():
    print(f"note: a GPU is usable ({uma.cuda.device_count()}); loaded: {cuda_libs}")
    g = uma.asarray(A, device="cuda")
    check(np.allclose(np.asarray(uma.matmul(g, uma.asarray(B, device="cuda")).to_device("cpu")), A @ B),
          "cuda matmul (cuBLAS opened at run time) == NumPy's")
    wc = uma.shared(np.zeros(3), name="wc")
    cost_c = uma.sum((wc - v) ** 2)
    step_c = uma.function([v], cost_c, updates={wc: wc - 0.1 * uma.grad(cost_c, wc)}, backend="cuda")
    for _ in range(100):
        step_c(np.array([1.0, 2.0, 3.0]))
    check(np.allclose(wc.get_value(), [1.0, 2.0, 3.0], atol=1e-6), f"compiled SGD on cuda converges: {wc.get_value()}")
else:
    reason = uma.cuda.unavailable_reason()
    check(bool(reason), f"no usable GPU, and uma.cuda.unavailable_reason() says why: {reason!r}")
    try:
        uma.asarray(x, device="cuda")
        check(False, "a cuda array without a usable GPU raises")
    except RuntimeError as e:
        check(reason in str(e), f"a cuda array raises RuntimeError naming the reason: {e}")
    check(not any("libcublas" in p for p in cuda_libs), "cuBLAS is not loaded by import")

print(f"wheel smoke test ({flavour}): {'FAILED' if failures else 'OK'}")
sys.exit(1 if failures else 0)
