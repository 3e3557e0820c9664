"""scikit-learn on uma arrays (``array_api_dispatch=True``) against the same estimators on NumPy
arrays, in the same run.

    SCIPY_ARRAY_API=1 .venv/bin/python bench/bench_sklearn.py [--rows N] [--cols D] [--repeat R]
                                                              [--device cpu|cuda] [--json PATH]

For each estimator of scikit-learn's Array API support list that uma runs (StandardScaler, PCA
with the full SVD, Ridge with the SVD solver, LinearDiscriminantAnalysis) the fit and the
transform / predict on the same float64 data (default 20000 x 100; a classification target of
4 classes for LDA), timed by bench_overview.measure (median and best of ``repeat``, ms per
call). Rows: NumPy arrays (scikit-learn's own path), NumPy arrays with ``array_api_dispatch=True``
(the Array API code path, through array-api-compat's NumPy namespace: the same code the uma
rows run), uma arrays on ``--device`` (cpu, or cuda on a GPU machine, where CuPy and torch rows
are added when installed; every GPU row waits for its device at the end of each timed call, so
the times include the queued kernels). The ratio column is NumPy's
median over the row's (> 1: faster than NumPy). Each result is checked against NumPy's before
it is timed.

SciPy and scikit-learn read ``SCIPY_ARRAY_API`` when first imported: the script sets it itself
when it is missing, before importing them.
"""
from __future__ import annotations

import argparse
import json
import os
import platform
import sys

os.environ.setdefault("SCIPY_ARRAY_API", "1")

import numpy as np  # noqa: E402

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from bench_overview import measure  # noqa: E402


def _estimators():
    from sklearn.decomposition import PCA
    from sklearn.discriminant_analysis import LinearDiscriminantAnalysis
    from sklearn.linear_model import Ridge
    from sklearn.preprocessing import StandardScaler
    return {
        "StandardScaler": (StandardScaler, {}, None, "transform"),
        "PCA(10, full)": (PCA, {"n_components": 10, "svd_solver": "full"}, None, "transform"),
        "Ridge(svd)": (Ridge, {"alpha": 1.0, "solver": "svd"}, "reg", "predict"),
        "LDA": (LinearDiscriminantAnalysis, {}, "class", "predict"),
    }


def _nothing():
    pass


def _peers(device):
    """(name, convert(ndarray) -> array, to_numpy(array) -> ndarray, wait for the device) for each
    array library."""
    import uma
    # scikit-learn's own NumPy path, then its Array API path on NumPy arrays (the code uma's rows run)
    peers = [("numpy", lambda a: a, np.asarray, _nothing), ("numpy (api)", lambda a: a, np.asarray, _nothing)]
    dev = None if device == "cpu" else device
    peers.append((f"uma {device}", lambda a: uma.asarray(a, device=dev),
                  lambda a: np.asarray(a.to_device("cpu") if dev else a),
                  uma.cuda.synchronize if dev else _nothing))
    if device != "cpu":
        try:
            import cupy
            peers.append(("cupy", cupy.asarray, cupy.asnumpy, cupy.cuda.Device().synchronize))
        except Exception:  # noqa: BLE001 - not on this machine
            pass
        try:
            import torch
            peers.append(("torch cuda", lambda a: torch.asarray(a, device="cuda"), lambda a: a.cpu().numpy(),
                          torch.cuda.synchronize))
        except Exception:  # noqa: BLE001
            pass
    return peers


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--rows", type=int, default=20000)
    p.add_argument("--cols", type=int, default=100)
    p.add_argument("--repeat", type=int, default=5)
    p.add_argument("--device", default="cpu")
    p.add_argument("--json", default=None)
    a = p.parse_args(argv)

    from sklearn import config_context
    import uma

    rng = np.random.default_rng(0)
    X = rng.standard_normal((a.rows, a.cols)) * rng.uniform(0.5, 3.0, a.cols) + 1.0
    targets = {"reg": X @ rng.standard_normal(a.cols) + rng.standard_normal(a.rows),
               "class": (np.digitize(X[:, 0] + X[:, 1], [-1.0, 2.0, 4.0])).astype(np.int64)}
    print(f"scikit-learn on uma arrays vs NumPy: {a.rows} x {a.cols} float64, device {a.device}, "
          f"{platform.processor() or platform.machine()}, {os.cpu_count()} CPUs, uma threads {uma.get_num_threads()}")
    print(f"{'estimator':<16} {'peer':<12} {'fit ms':>10} {'best':>9} {'x numpy':>8} {'apply ms':>10} "
          f"{'best':>9} {'x numpy':>8}")
    results = []
    for name, (cls, kw, target, method) in _estimators().items():
        ref = None
        base = None
        for peer, conv, back, wait in _peers(a.device):
            Xp = conv(X)
            yp = conv(targets[target]) if target else None
            args = (Xp,) if yp is None else (Xp, yp)
            ctx = config_context(array_api_dispatch=peer != "numpy")  # "numpy (api)": dispatch on NumPy arrays
            with ctx:
                model = cls(**kw).fit(*args)
                out = back(getattr(model, method)(Xp))
                if ref is None:
                    ref = out
                else:  # the same results as NumPy's before timing (PCA: sign-fixed by svd_flip)
                    np.testing.assert_allclose(out, ref, rtol=1e-6, atol=1e-8, err_msg=f"{name} {peer}")
                fit = measure(lambda: (cls(**kw).fit(*args), wait()), repeat=a.repeat)
                apply = measure(lambda: (getattr(model, method)(Xp), wait()), repeat=a.repeat)
            fit_ms, fit_best, apply_ms, apply_best = fit[0] / 1e3, fit[1] / 1e3, apply[0] / 1e3, apply[1] / 1e3
            if base is None:
                base = (fit_ms, apply_ms)
            print(f"{name:<16} {peer:<12} {fit_ms:10.2f} {fit_best:9.2f} {base[0] / fit_ms:7.2f}x "
                  f"{apply_ms:10.2f} {apply_best:9.2f} {base[1] / apply_ms:7.2f}x", flush=True)
            results.append({"estimator": name, "peer": peer, "fit_ms": fit_ms, "fit_best_ms": fit_best,
                            "apply_ms": apply_ms, "apply_best_ms": apply_best})
    if a.json:
        with open(a.json, "w") as f:
            json.dump({"rows": a.rows, "cols": a.cols, "device": a.device, "results": results}, f, indent=1)


if __name__ == "__main__":
    main()
