"""The interop matrix against the real libraries (tests/interop/run_matrix.py runs the same
cases outside pytest and prints the table).

uma <-> NumPy, PyTorch, JAX, MLX and ml_dtypes (bfloat16), both directions, every dtype each
peer shares with uma, layouts contiguous / transposed / negative-stride / sliced / size-0 /
0-d / read-only. The engine proves sharing by writing through one side and reading the other
(pointer equality for immutable peers) and checks every value against the NumPy source.
Here we assert what uma owes: no wrong cell anywhere; imports share whenever the peer's
export allows, read-only exactly when the producer says so (or hands a legacy capsule);
exports to NumPy share; and every fault that is not uma's is proven to be the peer's by
reproducing it with NumPy or a memoryview of the same memory.
"""
import os
import subprocess
import sys

import numpy as np
import pytest

import uma

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "interop"))
import run_matrix as M  # noqa: E402

PEER_MODULES = {"numpy": "numpy", "ml_dtypes": "ml_dtypes", "torch": "torch", "jax": "jax", "mlx": "mlx.core"}


def get_peer(name):
    pytest.importorskip(PEER_MODULES[name], reason=f"{name} is not installed: its matrix rows are skipped")
    peer = [p for p in M.ALL_PEERS if p.name == name][0]
    assert peer.available()
    return peer


def calls(direction):
    out = []
    for p in M.ALL_PEERS:
        n = len(M.UMA_IMPORTS) if direction == "import" else {"numpy": 3, "ml_dtypes": 3, "torch": 3, "jax": 3,
                                                                "mlx": 2}[p.name]
        out += [pytest.param(p.name, i, id=f"{p.name}-{i}") for i in range(n)]
    return out


def run_rows(peer, call, fn, runner):
    return {layout: M.run_row(peer, call, fn, runner, layout) for layout in M.LAYOUTS}


def cells(rows):
    for layout, row in rows.items():
        for dtype, case in row.items():
            yield layout, dtype, case


def capsule_readonly(x):
    """Whether a DLPack import of x must be read-only: a legacy capsule, or READ_ONLY set."""
    from _dlpack_producer import read_capsule
    try:
        cap = x.__dlpack__(max_version=(1, 1))
    except TypeError:
        cap = x.__dlpack__()
    info = read_capsule(cap)
    return info["name"] == "dltensor" or bool(info.get("flags", 0) & 1)


def peer_export_refuses(x):
    for kw in ({"max_version": (1, 1)}, {}):
        try:
            x.__dlpack__(**kw)
            return False
        except TypeError:
            continue
        except BufferError:
            return True
    return True


# --------------------------------------------------------------------------- peer -> uma


@pytest.mark.parametrize("peer_name,i", calls("import"))
def test_peer_to_uma(peer_name, i):
    peer = get_peer(peer_name)
    call, fn = M.UMA_IMPORTS[i]
    rows = run_rows(peer, call, fn, M.peer_to_uma)
    problems = []
    for layout, dtype, case in cells(rows):
        code = case["code"]
        if code == "-":
            continue
        src = M.source_values(dtype)
        x = peer.make(src, layout)
        if code == "R":
            # only when the peer itself cannot export it (then uma passes the refusal on cleanly)
            if call == "uma.from_dlpack" and peer_export_refuses(x):
                continue
            problems.append((layout, dtype, "refused: " + case.get("note", "")))
            continue
        if code not in "Ss0":
            problems.append((layout, dtype, f"{code} {case.get('note', '')}"))
            continue
        # read-only exactly when the producer says so
        if isinstance(x, np.ndarray) and call == "uma.asarray":
            want_ro = not x.flags.writeable  # NumPy goes through the buffer protocol
        else:
            want_ro = capsule_readonly(x)
        if case["writable"] == want_ro:
            problems.append((layout, dtype, f"writable={case['writable']} but the producer says read-only={want_ro}"))
        if code in "Ss" and peer.mutable and case["writable"] and case.get("proof") != "writes both ways":
            problems.append((layout, dtype, f"sharing not proven by writes: {case.get('proof')}"))
    assert not problems, "\n".join(map(str, problems))


@pytest.mark.parametrize("peer_name", ["numpy", "torch", "jax", "mlx"])
def test_peer_to_uma_copy_true_copies_writable(peer_name):
    peer = get_peer(peer_name)
    for dtype in ["int8", "float32", "complex64"]:
        for layout in ["contiguous", "transposed", "0-d"]:
            src = M.source_values(dtype)
            x = peer.make(src, layout)
            for fn in (uma.asarray, uma.from_dlpack):
                u = fn(x, copy=True)
                assert u.writable and (u.size == 0 or u._data_ptr != peer.ptr(x))
                np.testing.assert_array_equal(np.asarray(u), M.np_layout(src, layout))


# --------------------------------------------------------------------------- uma -> peer


@pytest.mark.parametrize("peer_name,i", calls("export"))
def test_uma_to_peer(peer_name, i):
    peer = get_peer(peer_name)
    call, fn = peer.imports[i]
    rows = run_rows(peer, call, fn, M.uma_to_peer)
    wrong = [(layout, dtype, case.get("note")) for layout, dtype, case in cells(rows) if case["code"] == "W"]
    assert not wrong, "\n".join(map(str, wrong))
    # Every cell is explained: shared, copied, converted by the peer, refused cleanly, or a
    # peer fault proven with NumPy/memoryview; aborts are only the known torch one.
    for layout, dtype, case in cells(rows):
        assert case["code"] in "SsC0XRPA-", case
        if case["code"] == "A":
            assert (peer.name, layout) == ("torch", "negative"), case
    if peer.name in ("numpy", "ml_dtypes") and call in ("np.asarray", "np.from_dlpack"):
        # NumPy takes every uma layout without copying (bfloat16 has no DLPack code in NumPy)
        for layout, dtype, case in cells(rows):
            if case["code"] == "-" or (dtype == "bfloat16" and call == "np.from_dlpack"):
                continue
            want = {"read-only": "s", "size-0": "0"}.get(layout, "S")
            assert case["code"] == want, (layout, dtype, case)
    if call == "torch.from_dlpack":
        for layout in ("contiguous", "transposed", "sliced", "0-d"):
            assert {c["code"] for c in rows[layout].values()} == {"S"}, (layout, rows[layout])
    if call in ("np.array", "torch.tensor"):
        assert {c["code"] for _, _, c in cells(rows)} <= {"C", "0", "-", "A"}


def test_torch_negative_stride_abort_is_torch_fault():
    """torch aborts the process on any DLPack tensor with negative strides; it does so for
    NumPy's export as well, so the fault is torch's. uma's export of the same view is correct
    (NumPy imports it zero-copy with the right values)."""
    get_peer("torch")
    code = ("import numpy as np, torch\n"
            "torch.from_dlpack(np.arange(6.0)[::-1])\n")
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    aborted = r.returncode != 0 and "Traceback" not in r.stderr
    u = uma.array(np.arange(6.0))[::-1]
    np.testing.assert_array_equal(np.from_dlpack(u), np.arange(6.0)[::-1])
    if not aborted:
        pytest.skip("this torch no longer aborts on negative strides: the matrix shows what it does now")


def test_torch_asarray_reads_any_buffer_as_raw_bytes():
    """torch.asarray takes any buffer-protocol object as raw bytes of torch's default dtype,
    ignoring the buffer's format: a float64 memoryview comes back as float32 garbage. A uma
    array is such an object; its buffer export itself is right (memoryview and NumPy read it)."""
    torch = get_peer("torch")._t()
    src = np.arange(3.0)
    t_mv = torch.asarray(memoryview(src))
    assert t_mv.dtype == torch.float32 and t_mv.shape == (6,)  # the peer's fault, with no uma involved
    u = uma.asarray(src)
    mv = memoryview(u)
    assert mv.format == "d" and mv.shape == (3,)
    np.testing.assert_array_equal(np.asarray(u), src)
    # the safe ways in: DLPack (shares) and torch.tensor (copies)
    np.testing.assert_array_equal(torch.from_dlpack(u).numpy(), src)
    np.testing.assert_array_equal(torch.tensor(u).numpy(), src)


def test_matrix_script_runs_and_prints_the_table(tmp_path):
    out = tmp_path / "m.json"
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(sys.path))
    r = subprocess.run([sys.executable, os.path.join(os.path.dirname(M.__file__), "run_matrix.py"), "--peers",
                        "numpy", "--layouts", "contiguous,negative", "--json", str(out)], capture_output=True,
                       text=True, env=env, timeout=120)
    assert r.returncode == 0, r.stderr
    assert "numpy->uma" in r.stdout and "uma->numpy" in r.stdout and "0 wrong cells" in r.stdout
    import json
    rows = json.loads(out.read_text())
    assert len(rows) == 2 * (2 + 3)  # 2 layouts x (2 import calls + 3 export calls)
