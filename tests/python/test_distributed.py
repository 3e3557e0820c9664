"""uma.distributed and the graph collectives: in one process (a world of size 1) and across 2
processes under ``mpirun -np 2`` (tests/python/_mpi_worker.py; NumPy is the oracle there too).

The multi-process tests need Open MPI's ``mpirun`` and mpi4py (scripts/setup_env.sh installs
both for the test profile); they skip, saying why, where either is missing and under the ASAN
preload of the asan-py phase (they run in the python phase).
"""
import json
import os
import re
import shutil
import subprocess
import sys
import time

import numpy as np
import pytest

import uma
import uma.distributed as dist

HERE = os.path.dirname(os.path.abspath(__file__))


def _mpi_missing():
    if shutil.which("mpirun") is None:
        return "mpirun (Open MPI) is not installed"
    try:
        import mpi4py  # noqa: F401
    except ImportError:
        return "mpi4py is not installed"
    if "asan" in os.environ.get("LD_PRELOAD", ""):
        return "not under the ASAN preload (mpirun would load it too); run in the python phase"
    return None


needs_mpi = pytest.mark.skipif(_mpi_missing() is not None, reason=str(_mpi_missing()))


def mpirun(args, timeout=120, env=None):
    """``mpirun -np 2`` of this interpreter with ``args``; the uma imported here on PYTHONPATH."""
    e = dict(os.environ)
    for k in list(e):  # a launcher's variables, if pytest itself runs under one
        if k.startswith(("OMPI_COMM_WORLD", "PMIX_", "PMI_")):
            del e[k]
    e.update(OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1", OMPI_MCA_rmaps_base_oversubscribe="1")
    pkg_root = os.path.dirname(os.path.dirname(os.path.abspath(uma.__file__)))
    e["PYTHONPATH"] = os.pathsep.join([pkg_root] + ([e["PYTHONPATH"]] if e.get("PYTHONPATH") else []))
    e.update(env or {})
    cmd = ["mpirun", "-np", "2", "--oversubscribe", "--allow-run-as-root", sys.executable] + args
    t0 = time.monotonic()
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, env=e)
    return p, time.monotonic() - t0


# ---- one process: a world of size 1 ----------------------------------------------------------

def test_single_process_is_a_world_of_one():
    if dist.launched_by_mpi():
        pytest.skip("pytest itself runs under an MPI launcher")
    assert dist.init() == (0, 1) and dist.rank() == 0 and dist.world_size() == 1
    assert dist.comm() is None
    x = np.arange(6, dtype=np.float32).reshape(2, 3)
    for op in ["sum", "mean", "max", "min"]:
        got = dist.all_reduce(uma.asarray(x), op)
        np.testing.assert_array_equal(np.asarray(got), x)
    np.testing.assert_array_equal(np.asarray(dist.all_gather(uma.asarray(x))), x[None])
    np.testing.assert_array_equal(np.asarray(dist.reduce_scatter(uma.asarray(x))), x)
    a = uma.asarray(x.copy())
    assert dist.broadcast(a, 0) is a and dist.all_reduce(a, out=a) is a
    dist.barrier()


def test_argument_errors():
    x = uma.asarray(np.zeros(3, np.float32))
    with pytest.raises(ValueError, match="op must be one of"):
        dist.all_reduce(x, "prod")
    with pytest.raises(TypeError, match="uma.Array"):
        dist.all_reduce(np.zeros(3))
    with pytest.raises(ValueError, match="out is float64"):
        dist.all_reduce(x, out=uma.zeros((3,), dtype="float64"))
    with pytest.raises(ValueError, match="root 5 outside"):
        dist.broadcast(x, root=5)
    with pytest.raises(TypeError, match="not defined on int32"):
        dist.all_reduce(uma.zeros((2,), dtype="int32"), "mean")
    with pytest.raises(TypeError, match="not defined on bool"):
        dist.all_reduce(uma.zeros((2,), dtype="bool"), "sum")
    with pytest.raises(ValueError, match="not divisible"):
        dist.reduce_scatter(uma.zeros(()))


@pytest.mark.parametrize("backend", ["cpu", "reference", "numpy"])
def test_graph_ops_in_a_world_of_one(backend):
    x = uma.sym.matrix("x", dtype="float64", shape=(2, 3))
    cost = uma.sym.sum(uma.sym.all_reduce(x, "sum") ** 2) + uma.sym.sum(uma.sym.all_gather(x) * 3)
    f = uma.function([x], [uma.sym.all_gather(x), uma.sym.reduce_scatter(x, "mean"), uma.grad(cost, x)],
                     backend=backend)
    xv = np.arange(6.0).reshape(2, 3)
    g, rs, dx = (np.asarray(v) for v in f(xv))
    np.testing.assert_array_equal(g, xv[None])
    np.testing.assert_array_equal(rs, xv)
    np.testing.assert_allclose(dx, 2 * xv + 3)


def test_graph_collectives_are_not_folded_and_max_has_no_gradient():
    c = uma.sym.all_reduce(uma.sym.asarray(np.ones(3)), "sum")
    f = uma.function([], c, backend="cpu")
    from uma.runtime.linkers.cpu import CpuLinker
    assert CpuLinker.python_ops(f) == ["all_reduce"]  # run at call time, not folded
    np.testing.assert_array_equal(np.asarray(f()), np.ones(3))
    x = uma.sym.vector("x")
    with pytest.raises(NotImplementedError, match="no gradient"):
        uma.grad(uma.sym.sum(uma.sym.all_reduce(x, "max")), x)
    with pytest.raises(ValueError, match="op must be one of"):
        uma.sym.all_reduce(x, "prod")


def test_all_reduce_bucket_splits_back_to_the_shapes():
    a, b = uma.sym.matrix("a", shape=(2, 3)), uma.sym.vector("b")
    ra, rb = uma.sym.all_reduce_bucket([a, (b, (4,))], "sum")
    assert ra.type.shape == (2, 3) and rb.type.shape == (4,)
    f = uma.function([a, b], [ra, rb], backend="cpu")
    av, bv = np.arange(6.0).reshape(2, 3), np.arange(4.0) + 10
    oa, ob = f(av, bv)
    np.testing.assert_array_equal(np.asarray(oa), av)
    np.testing.assert_array_equal(np.asarray(ob), bv)
    with pytest.raises(ValueError, match="not static"):
        uma.sym.all_reduce_bucket([b])
    with pytest.raises(TypeError, match="one dtype"):
        uma.sym.all_reduce_bucket([a, uma.sym.matrix("c", dtype="float32", shape=(1, 1))])


# ---- two processes -----------------------------------------------------------------------------

@needs_mpi
@pytest.mark.parametrize("scenario", ["collectives", "graph"])
def test_two_ranks(scenario):
    p, _ = mpirun([os.path.join(HERE, "_mpi_worker.py"), scenario])
    assert p.returncode == 0, p.stdout + p.stderr
    # the ranks' lines may arrive interleaved through mpirun
    assert sorted(re.findall(r"ok \w+ rank \d", p.stdout)) == \
        [f"ok {scenario} rank 0", f"ok {scenario} rank 1"], p.stdout


@needs_mpi
def test_a_rank_that_raises_aborts_the_job():
    p, secs = mpirun([os.path.join(HERE, "_mpi_worker.py"), "raises"], env={"UMA_DIST_TIMEOUT": "60"})
    assert p.returncode != 0
    assert "rank 1 of 2 raised; aborting the job (MPI_Abort)" in p.stderr, p.stderr
    assert "rank 1 failed on purpose" in p.stderr
    assert secs < 30, secs  # rank 0 was killed, not left waiting (the worker sleeps 120 s)


@needs_mpi
def test_a_hung_collective_times_out():
    p, secs = mpirun([os.path.join(HERE, "_mpi_worker.py"), "hangs"], env={"UMA_DIST_TIMEOUT": "2"})
    assert p.returncode != 0
    assert "rank 0 of 2: the signature check before all_reduce did not complete within 2 s" in p.stderr, p.stderr
    assert secs < 30, secs


@needs_mpi
def test_train_distributed_reaches_95_percent_with_identical_parameters(tmp_path):
    p, _ = mpirun(["-m", "uma.examples.train", "--distributed", "--json",
                   "--plot", str(tmp_path / "loss.png")], timeout=300)
    assert p.returncode == 0, p.stdout + p.stderr
    lines = p.stdout.splitlines()
    assert sum(1 for line in lines if line.startswith("epoch   1 ")) == 1  # rank 0 alone prints
    s = json.loads(lines[-1])
    assert s["world_size"] == 2 and s["params_identical"] is True
    assert s["test_accuracy"] >= 0.95 and s["predictions_identical"]
    assert "parameters bit-identical on all 2 ranks (SHA-256 all-gathered): yes" in p.stdout
