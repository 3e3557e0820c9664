"""A quick probe of the per-call time of small ``cpu`` functions (µs per call, best of 7
timeit repeats), for comparing two builds of uma in one session, run alternately:

    python3 bench/bench_call_probe.py LABEL          # e.g. PYTHONPATH=/tmp/old ... old

Rows: the counter ``function([], [], updates={c: c + 1})``, and the 3-input/2-update function
``function([x, y, z], [], updates={a: a + x*y, b: b + z})`` called with uma 0-d arrays, with
NumPy 0-d arrays, and through the C++ object directly (``f._fast``). It first checks that the
scalar updates go into the cells' own buffers (Note [Updates in place]).
"""
import sys
import timeit

import numpy as np

import uma


def main(label):
    a, b = uma.shared(np.array(0.0), "a"), uma.shared(np.array(0.0), "b")
    x, y, z = uma.sym.scalar("x"), uma.sym.scalar("y"), uma.sym.scalar("z")
    f = uma.function([x, y, z], [], updates={a: a + x * y, b: b + z}, backend="cpu")
    us = [uma.asarray(np.array(v)) for v in (2.0, 3.0, 4.0)]
    ns = [np.array(v) for v in (2.0, 3.0, 4.0)]
    f(*us)

    def addr():
        return a.get_value(borrow=True).__array_interface__["data"][0]

    p0 = addr()
    f(*us)
    p1 = addr()
    print(label, "in place:", p0 == p1)
    c = uma.shared(np.array(0.0), "c")
    g = uma.function([], [], updates={c: c + 1}, backend="cpu")
    n = 100000
    for name, fn in [("counter", g), ("uma 0-d", lambda: f(*us)), ("numpy 0-d", lambda: f(*ns)),
                     ("fast direct", lambda: f._fast(tuple(us)))]:
        print(label, name, round(min(timeit.repeat(fn, number=n, repeat=7)) / n * 1e6, 3))


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else "uma")
