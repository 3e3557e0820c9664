"""Real clients of the Array API standard on uma arrays: scikit-learn with
``array_api_dispatch=True`` (estimators and metrics whose documentation lists Array API
support) and SciPy's Array-API-aware functions (``SCIPY_ARRAY_API=1``), each giving NumPy's
results on the same data within floating-point tolerance (NumPy is the oracle: the same
estimator fitted on the NumPy arrays).

SciPy and scikit-learn read ``SCIPY_ARRAY_API`` when they are first imported, so each case
runs in a child interpreter with it set. Each case runs on uma cpu arrays and, where a GPU is
usable, on uma cuda arrays (the same NumPy oracle; the clients' advanced indexing, sorting and
linalg run on the device's kernels)."""
import json
import subprocess
import sys
import textwrap

import pytest

import uma
from conftest import child_env

pytest.importorskip("sklearn")
pytest.importorskip("scipy")

PRELUDE = textwrap.dedent("""\
    import json, warnings
    import numpy as np
    import uma
    from sklearn import config_context
    warnings.simplefilter("ignore", UserWarning)  # sklearn's note that dispatch changes the solver
    rng = np.random.default_rng(0)
    X = rng.standard_normal((150, 6)) * np.array([1.0, 2.0, 0.5, 3.0, 1.0, 0.1]) + 1.0
    y_class = (X[:, 0] + X[:, 1] > 2).astype(np.int64) + (X[:, 2] > 1)
    y_reg = X @ rng.standard_normal(6) + 0.1 * rng.standard_normal(150)
    def ua(v):
        return uma.asarray(v, device=DEVICE)

    Xu, yu_class, yu_reg = ua(X), ua(y_class), ua(y_reg)

    def host(v):
        assert isinstance(v, uma.Array) or np.isscalar(v) or isinstance(v, float), type(v)
        return np.asarray(v)

    def report(**values):
        print(json.dumps({k: np.asarray(v, dtype=float).tolist() for k, v in values.items()}))
""")


GPU = uma.cuda.is_available()
DEVICES = ["cpu", pytest.param("cuda", marks=pytest.mark.skipif(not GPU, reason="no usable CUDA GPU"))]


def _run(code, device="cpu"):
    prelude = f"DEVICE = {device!r}\n" + PRELUDE
    r = subprocess.run([sys.executable, "-c", prelude + textwrap.dedent(code)],
                       env=child_env(SCIPY_ARRAY_API="1"), capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, r.stderr[-4000:]
    return json.loads(r.stdout.strip().splitlines()[-1])


def _close(got, want, rtol=1e-9, atol=1e-11):
    import numpy as np
    np.testing.assert_allclose(np.asarray(got), np.asarray(want), rtol=rtol, atol=atol)


@pytest.mark.parametrize("name", ["StandardScaler", "MinMaxScaler", "MaxAbsScaler"])
@pytest.mark.parametrize("device", DEVICES)
def test_scalers(name, device):
    out = _run(f"""
        from sklearn import preprocessing
        with config_context(array_api_dispatch=True):
            m = preprocessing.{name}().fit(Xu)
            got = m.transform(Xu)
            back = m.inverse_transform(got)
        assert isinstance(got, uma.Array) and isinstance(back, uma.Array)
        assert str(got.device).startswith(DEVICE)
        want = preprocessing.{name}().fit(X).transform(X)
        report(got=host(got), want=want, back=host(back), x=X)
    """, device)
    _close(out["got"], out["want"])
    _close(out["back"], out["x"])  # inverse_transform(transform(X)) == X


@pytest.mark.parametrize("device", DEVICES)
def test_pca(device):
    out = _run("""
        from sklearn.decomposition import PCA
        with config_context(array_api_dispatch=True):
            m = PCA(n_components=3, svd_solver="full").fit(Xu)
            got = m.transform(Xu)
        assert isinstance(got, uma.Array)
        ref = PCA(n_components=3, svd_solver="full").fit(X)
        report(got=host(got), want=ref.transform(X), var=host(m.explained_variance_),
               var_want=ref.explained_variance_, comp=host(m.components_), comp_want=ref.components_)
    """, device)
    _close(out["var"], out["var_want"])
    _close(out["comp"], out["comp_want"], rtol=1e-8, atol=1e-10)  # svd_flip fixes the signs
    _close(out["got"], out["want"], rtol=1e-8, atol=1e-10)


@pytest.mark.parametrize("device", DEVICES)
def test_ridge(device):
    out = _run("""
        from sklearn.linear_model import Ridge
        with config_context(array_api_dispatch=True):
            m = Ridge(alpha=0.5, solver="svd").fit(Xu, yu_reg)
            got = m.predict(Xu)
        assert isinstance(got, uma.Array)
        ref = Ridge(alpha=0.5, solver="svd").fit(X, y_reg)
        report(got=host(got), want=ref.predict(X), coef=host(m.coef_), coef_want=ref.coef_,
               icpt=host(m.intercept_), icpt_want=ref.intercept_)
    """, device)
    _close(out["coef"], out["coef_want"])
    _close(out["icpt"], out["icpt_want"])
    _close(out["got"], out["want"])


@pytest.mark.parametrize("device", DEVICES)
def test_linear_discriminant_analysis(device):
    out = _run("""
        from sklearn.discriminant_analysis import LinearDiscriminantAnalysis as LDA
        with config_context(array_api_dispatch=True):
            m = LDA().fit(Xu, yu_class)
            pred = m.predict(Xu)
            proba = m.predict_proba(Xu)
            t = m.transform(Xu)
        ref = LDA().fit(X, y_class)
        report(pred=host(pred), pred_want=ref.predict(X), proba=host(proba), proba_want=ref.predict_proba(X),
               t=np.abs(host(t)), t_want=np.abs(ref.transform(X)))
    """, device)
    assert out["pred"] == out["pred_want"]
    _close(out["proba"], out["proba_want"], rtol=1e-7, atol=1e-10)
    _close(out["t"], out["t_want"], rtol=1e-7, atol=1e-10)


@pytest.mark.parametrize("device", DEVICES)
def test_metrics(device):
    out = _run("""
        from sklearn import metrics
        pred = (X[:, 0] > 1).astype(np.int64)
        guess = y_reg + rng.standard_normal(150)
        with config_context(array_api_dispatch=True):
            got = [metrics.accuracy_score(yu_class, ua(pred)),
                   metrics.zero_one_loss(yu_class, ua(pred)),
                   metrics.r2_score(yu_reg, ua(guess)),
                   metrics.mean_squared_error(yu_reg, ua(guess)),
                   metrics.mean_absolute_error(yu_reg, ua(guess))]
        want = [metrics.accuracy_score(y_class, pred), metrics.zero_one_loss(y_class, pred),
                metrics.r2_score(y_reg, guess), metrics.mean_squared_error(y_reg, guess),
                metrics.mean_absolute_error(y_reg, guess)]
        report(got=[float(host(v)) for v in got], want=want)
    """, device)
    _close(out["got"], out["want"], rtol=1e-12, atol=0)


@pytest.mark.parametrize("device", DEVICES)
def test_scipy_special_and_stats(device):
    out = _run("""
        import scipy.special as sc, scipy.stats as st
        a = np.abs(X[:, :3]) + 0.1
        au = ua(a)
        got = {"logsumexp": sc.logsumexp(Xu, axis=0), "softmax": sc.softmax(Xu, axis=1),
               "log_softmax": sc.log_softmax(Xu, axis=1), "xlogy": sc.xlogy(au, au),
               "entr": sc.entr(au), "expit": sc.expit(Xu), "logit": sc.logit(au / (1 + au)),
               "zscore": st.zscore(Xu, axis=0), "skew": st.skew(Xu, axis=0), "moment": st.moment(Xu, 3, axis=0),
               "gmean": st.gmean(au, axis=0)}
        want = {"logsumexp": sc.logsumexp(X, axis=0), "softmax": sc.softmax(X, axis=1),
                "log_softmax": sc.log_softmax(X, axis=1), "xlogy": sc.xlogy(a, a), "entr": sc.entr(a),
                "expit": sc.expit(X), "logit": sc.logit(a / (1 + a)), "zscore": st.zscore(X, axis=0),
                "skew": st.skew(X, axis=0), "moment": st.moment(X, 3, axis=0), "gmean": st.gmean(a, axis=0)}
        kinds = {k: type(v).__name__ for k, v in got.items()}
        assert all(isinstance(v, uma.Array) for v in got.values()), kinds
        report(**{k + "_got": host(v) for k, v in got.items()}, **{k + "_want": v for k, v in want.items()})
    """, device)
    for k in [k[:-4] for k in out if k.endswith("_got")]:
        _close(out[k + "_got"], out[k + "_want"], rtol=1e-10, atol=1e-12)
