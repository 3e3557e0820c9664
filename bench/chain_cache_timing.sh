#!/usr/bin/env bash
# bash bench/chain_cache_timing.sh   (on a machine with a CUDA GPU and uma installed)
# Times a fresh process's first fused chain with an empty image cache, then with the image cached.
set -u
D=$(mktemp -d)
cat > $D/chain.py <<'PY'
import time, numpy as np, uma
x = uma.asarray(np.linspace(-4.0, 4.0, 1000), device="cuda"); uma.cuda.synchronize()
p = uma._core.Program(); s = [p.add_input(), p.add_input()]
p.set_outputs([p.add_fused(s, [("multiply", 0, 1), ("tanh", 2, 0), ("subtract", 3, 0)], "float64")])
t = time.perf_counter(); p.run([x, x]); uma.cuda.synchronize(); dt = time.perf_counter() - t
print(f"first chain call {dt*1e3:.1f} ms", uma._core.cuda._chain_kernel_stats())
PY
for k in 1 2 3; do (cd /tmp && UMA_CACHE_DIR=$D/cache python3 $D/chain.py); done
(cd /tmp && UMA_CACHE_DIR= python3 $D/chain.py)
