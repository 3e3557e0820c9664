"""The extension module as the dynamic loader sees it (CMakeLists.txt, Note [Symbols of the
extension]): it exports its init function alone, uses the process's shared libstdc++, and
loads beside torch, JAX and CuPy in either order, each exchanging arrays with uma both ways
(on the GPU too where the peer and uma see one).

The import-order tests start fresh interpreters: the crash they guard against happened at
the second import, before any test code could run in the same process.
"""
import os
import shutil
import subprocess
import sys
import textwrap

import pytest

import uma

CORE = uma._core.__file__


def _tool(name):
    path = shutil.which(name)
    if path is None:
        pytest.skip(f"{name} (binutils) is not installed")
    return path


def test_exports_only_the_init_function():
    out = subprocess.run([_tool("nm"), "-D", "--defined-only", CORE], capture_output=True, text=True,
                         check=True).stdout
    names = [line.split()[-1] for line in out.splitlines() if line.strip()]
    assert names == ["PyInit__core"], f"{CORE} exports {len(names)} symbols: {names[:20]}"


def test_no_gnu_unique_symbols():
    out = subprocess.run([_tool("readelf"), "--dyn-syms", "-W", CORE], capture_output=True, text=True,
                         check=True).stdout
    unique = [line for line in out.splitlines() if " UNIQUE " in line]
    assert unique == [], unique[:10]


def test_needs_the_shared_libstdcxx():
    out = subprocess.run([_tool("readelf"), "-d", CORE], capture_output=True, text=True, check=True).stdout
    needed = [line.split("[")[1].rstrip("]") for line in out.splitlines() if "(NEEDED)" in line]
    assert "libstdc++.so.6" in needed, f"{CORE} needs {needed}: libstdc++ was linked statically"


# Each script imports the peer and uma in the given order, then moves a host array (and, where
# both see a GPU, a cuda array) uma -> peer and peer -> uma, checking the values and that
# the host exchange shares memory (a write through one shows through the other).
_PEERS = {
    "torch": """
        import torch
        def to_peer(a): return torch.from_dlpack(a)
        def from_peer(t): return uma.from_dlpack(t)
        def peer_host(): return torch.arange(6, dtype=torch.float32)
        def peer_cuda(): return torch.arange(6, dtype=torch.float32, device="cuda")
        def peer_has_cuda(): return torch.cuda.is_available()
        def write(t): t[0] = 42.0
        def host_values(t): return np.asarray(t.cpu())
    """,
    "jax": """
        import jax, jax.numpy as jnp
        def to_peer(a): return jnp.from_dlpack(a)
        def from_peer(t): return uma.from_dlpack(t)
        def peer_host(): return jax.device_put(jnp.arange(6, dtype=jnp.float32), jax.devices("cpu")[0])
        def peer_cuda(): return jax.device_put(jnp.arange(6, dtype=jnp.float32), jax.devices("gpu")[0])
        def peer_has_cuda():
            try: return bool(jax.devices("gpu"))
            except RuntimeError: return False
        write = None  # JAX arrays are immutable
        def host_values(t): return np.asarray(jax.device_get(t))
    """,
    "cupy": """
        import cupy
        def to_peer(a): return cupy.from_dlpack(a)
        def from_peer(t): return uma.from_dlpack(t)
        peer_host = None  # CuPy arrays live on the GPU
        def peer_cuda(): return cupy.arange(6, dtype=cupy.float32)
        def peer_has_cuda(): return cupy.cuda.runtime.getDeviceCount() > 0
        def write(t): t[0] = 42.0
        def host_values(t): return cupy.asnumpy(t)
    """,
}

_EXCHANGE = """
    import numpy as np
    expect = np.arange(6, dtype=np.float32)
    checked = []
    if peer_host is not None:
        a = uma.asarray(expect.copy())
        t = to_peer(a)
        assert np.array_equal(host_values(t), expect)
        if write is not None:
            write(t)
            assert np.asarray(a)[0] == 42.0, "uma -> peer copied a host array"
        b = from_peer(peer_host())
        assert np.array_equal(np.asarray(b), expect)
        checked.append("host")
    if uma.cuda.is_available() and peer_has_cuda():
        a = uma.asarray(expect, device="cuda")
        t = to_peer(a)
        assert np.array_equal(host_values(t), expect)
        b = from_peer(peer_cuda())
        assert b.device.type == "cuda", b.device
        assert np.array_equal(np.asarray(b.to_device("cpu")), expect)
        checked.append("cuda")
    assert checked, "nothing exchanged"
    print("exchanged", *checked)
"""


@pytest.mark.parametrize("order", ["uma_first", "peer_first"])
@pytest.mark.parametrize("peer", sorted(_PEERS))
def test_import_order_and_exchange(peer, order):
    pytest.importorskip(peer)
    if peer == "cupy" and not uma.cuda.is_available():
        pytest.skip("CuPy exchanges need a GPU that uma can use")
    imports = ["import uma", textwrap.dedent(_PEERS[peer])]
    if order == "peer_first":
        imports.reverse()
    script = "\n".join(imports) + "\n" + textwrap.dedent(_EXCHANGE)
    env = dict(os.environ, JAX_PLATFORMS=os.environ.get("JAX_PLATFORMS", ""))
    proc = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=300, env=env,
                          cwd=os.path.dirname(os.path.dirname(uma.__file__)))
    assert proc.returncode == 0, (
        f"{order} with {peer}: exit {proc.returncode}\nstdout: {proc.stdout[-2000:]}\nstderr: {proc.stderr[-4000:]}")
    assert "exchanged" in proc.stdout
