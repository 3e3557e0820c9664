"""The cuda linker's Programs: their CUDA graphs (Note [Program graphs] in runtime/program.h),
their fused chains (Note [Fused chains on cuda]) and the TF32 opt-in. Graphs: a
signature's first call runs op by op, the second records the run as a CUDA graph and later
calls replay a free recording. Every test compares against the same calls on the eager cuda
linker (node by node with the eager ops, no Program), which the replays must equal bit for
bit. Without a usable GPU (CI) these tests skip with the reason; the no-GPU contract (the
switch exists, nothing records) runs everywhere.
"""
import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import uma
from conftest import mlp_step
from uma.runtime.linkers.cuda import CudaLinker
from uma.runtime.linkers.cuda.linker import SWITCH_DEFAULTS

GPU = uma.cuda.is_available()
GRAPHS = CudaLinker(graphs=True, fuse=True)  # explicit: the defaults and the environment may differ
needs_gpu = pytest.mark.skipif(not GPU, reason=f"no usable CUDA GPU: {uma.cuda.unavailable_reason()}")


class EagerCuda(CudaLinker):
    """The oracle: the cuda linker evaluating node by node with the eager ops."""

    def compile(self, fgraph):
        return self.compile_eager(fgraph)


def mlp(backend):
    return mlp_step(backend, activation="tanh")


def batch(n, n_in=20, n_out=5, seed=1):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, n_in)).astype(np.float32)
    return uma.asarray(X, device="cuda"), uma.asarray(rng.integers(0, n_out, n), device="cuda")


def same_bits(a, b, what):
    a = np.asarray(a.to_device("cpu") if isinstance(a, uma.Array) else a)
    b = np.asarray(b.to_device("cpu") if isinstance(b, uma.Array) else b)
    assert a.dtype == b.dtype and a.shape == b.shape, what
    np.testing.assert_array_equal(np.ascontiguousarray(a).view(np.uint8), np.ascontiguousarray(b).view(np.uint8),
                                  err_msg=what)


def twin(a):
    """A copy of the cuda array ``a`` in memory of its own."""
    return uma.asarray(host(a), device="cuda")


def host(a):
    """``a`` as a NumPy array (a device array copied to the host)."""
    return np.asarray(a.to_device("cpu") if isinstance(a, uma.Array) else a)


def stats(fn):
    return CudaLinker.graph_stats(fn)


def test_graphs_switch_and_stats_without_recording():
    """The switch is the Program's; a host program never records."""
    p = uma._core.Program()
    assert not p.graphs
    p.graphs = True
    a = p.add_input()
    p.set_outputs([p.add_op("add", [a, a], None)])
    assert p.graphs  # set_outputs keeps the switch (it drops recordings only)
    out = p.run([uma.asarray(np.arange(3.0))])
    np.testing.assert_array_equal(np.asarray(out[0]), [0.0, 2.0, 4.0])
    assert p.graph_stats() == {"recorded": 0, "replayed": 0, "early_checked": 0, "failed": 0, "copied_bytes": 0,
                               "fixed_steps": 0, "dropped": 0, "kept_bytes": 0, "last_failure": ""}
    assert not p.lean_replay
    p.lean_replay = True
    assert p.lean_replay and p.graphs
    np.testing.assert_array_equal(np.asarray(p.run([uma.asarray(np.arange(2.0))])[0]), [0.0, 2.0])


def test_fixed_steps_are_those_of_the_signature_alone():
    """Note [Fixed steps]: a step is fixed when every input is a constant, a fixed step's value
    or read only for its shape; an output is never skipped. The mean's gradient in a training
    step is fixed."""
    p = uma._core.Program()
    x = p.add_input()
    ones = p.add_op("ones_like", [x], None)
    n = p.add_op("sum", [ones], None)
    inv = p.add_op("divide", [p.add_constant(uma.asarray(np.float64(1.0))), n], None)
    shaped = p.add_op("broadcast_like", [inv, x], None)
    y = p.add_op("multiply", [x, shaped], None)  # reads x's values: not fixed
    z = p.add_op("negative", [y], None)
    p.set_outputs([z, n])
    assert p.fixed_steps() == ["ones_like", "divide", "broadcast_like"]  # sum is an output
    assert list(uma._core._shape_inputs("broadcast_like")) == [1]
    assert list(uma._core._shape_inputs("multiply")) == []
    v = np.arange(1.0, 5.0)
    got = p.run([uma.asarray(v)])
    np.testing.assert_array_equal(np.asarray(got[0]), -(v * (1.0 / 4.0)))
    params, step = mlp("cpu")
    assert step._thunk.program.fixed_steps() == ["ones_like", "sum_fused", "broadcast_like"]


@needs_gpu
def test_fixed_values_the_caller_could_write_are_computed_by_every_replay():
    """A result that is a view of a fixed step's value (here a reshape of ones_like) would hand
    the recording's own buffer to the caller: such a recording computes its fixed steps in the
    graph, so writing into a returned array changes no later result. The mean's scale (fixed,
    skipped) gives the eager ops' bits."""
    sym = uma.sym
    x = sym.vector("x", dtype="float32")
    outs = [x / sym.sum(sym.ones_like(x)), sym.reshape(sym.ones_like(x), (-1,))]
    f = uma.function([x], outs, backend=GRAPHS)
    e = uma.function([x], outs, backend=EagerCuda())
    v = uma.asarray(np.arange(6, dtype=np.float32), device="cuda")
    for k in range(6):
        got = f(v)
        for a, b in zip(got, e(v)):
            same_bits(a, b, f"call {k}")
        got[1][0] = 7  # the caller's array
        assert host(got[1])[0] == 7
        del got, a, b  # nothing holds a result: every call after the second replays one recording
    s = stats(f)
    assert (s["recorded"], s["replayed"], s["fixed_steps"]) == (1, 5, 0), s


@needs_gpu
def test_training_step_records_twice_then_replays_bit_for_bit():
    """A training step: call 1 op by op, call 2 records, call 3 records the second graph (the
    shared variables hold call 2's results), then the two alternate; no host traffic."""
    X, Y = batch(32)
    params, step = mlp(GRAPHS)
    eparams, estep = mlp(EagerCuda())
    assert step._thunk.program.graphs
    losses, before, after = [], [], []
    for k in range(7):
        before.append(uma.memory_stats("cuda")["host_to_device_bytes"])
        losses.append(step(X, Y))
        after.append(uma.memory_stats("cuda")["host_to_device_bytes"])
        same_bits(losses.pop(), estep(X, Y), f"loss {k}")
    s = stats(step)
    assert (s["recorded"], s["replayed"], s["failed"]) == (2, 6, 0), s
    assert s["kept_bytes"] > 0
    # the mean's gradient (Note [Fixed steps]), computed once per recording
    fixed = step._thunk.program.fixed_steps()
    assert fixed[:2] == ["ones_like", "sum_fused"] and s["fixed_steps"] == 2 * len(fixed), (fixed, s)
    for p, q in zip(params, eparams):
        same_bits(p.get_value(), q.get_value(), p.name)
    assert before[1:] == after[1:]  # the recorded and replayed calls copied nothing from the host


@needs_gpu
def test_replay_allocates_nothing():
    X, Y = batch(32)
    params, step = mlp(GRAPHS)
    for _ in range(4):
        step(X, Y)
    uma.cuda.synchronize()
    active = uma.memory_stats("cuda")["active_bytes"]
    for _ in range(4):
        loss = step(X, Y)
    del loss
    uma.cuda.synchronize()
    assert uma.memory_stats("cuda")["active_bytes"] == active


@needs_gpu
def test_new_shapes_record_again():
    params, step = mlp(GRAPHS)
    eparams, estep = mlp(EagerCuda())
    for k, n in enumerate([32, 32, 16, 32, 16, 16, 8, 32]):
        X, Y = batch(n, seed=k)
        same_bits(step(X, Y), estep(X, Y), f"call {k} (batch {n})")
    s = stats(step)
    assert s["failed"] == 0 and s["recorded"] >= 3, s  # batch 32 twice, batch 16 at least once
    for p, q in zip(params, eparams):
        same_bits(p.get_value(), q.get_value(), p.name)


@needs_gpu
def test_set_value_between_calls_is_seen():
    X, Y = batch(32)
    params, step = mlp(GRAPHS)
    eparams, estep = mlp(EagerCuda())
    rng = np.random.default_rng(9)
    for k in range(8):
        if k in (3, 4, 6):
            W = rng.standard_normal(params[0].get_value().shape).astype(np.float32)
            params[0].set_value(W)
            eparams[0].set_value(W)
        same_bits(step(X, Y), estep(X, Y), f"loss {k}")
    assert stats(step)["replayed"] >= 5
    for p, q in zip(params, eparams):
        same_bits(p.get_value(), q.get_value(), p.name)


@needs_gpu
@pytest.mark.parametrize("early", [False, True])
def test_failing_replay_changes_nothing(early):
    """A bad label inside a replayed step raises the op's ValueError before any update is
    written; the next calls go on as if it never happened. With early label checks (Note
    [Lean replays]) a replay whose labels are an argument waits for their checks alone:
    every replay counts as checked early but the failing one, which raises through the
    deferred check after the launch."""
    X, Y = batch(32)
    params, step = mlp(CudaLinker(graphs=True, fuse=True, lean_replay=early))
    eparams, estep = mlp(EagerCuda())
    assert step._thunk.program.lean_replay is early
    for k in range(4):
        same_bits(step(X, Y), estep(X, Y), f"loss {k}")
    s = stats(step)
    assert (s["recorded"], s["replayed"], s["early_checked"], s["failed"]) == (2, 3, 3 if early else 0, 0), s
    held = [p.get_value() for p in params]
    bad = np.asarray(Y.to_device("cpu")).copy()
    bad[7], bad[9] = 5, -1
    with pytest.raises(ValueError, match="label 5 at position 7 is out of range"):
        step(X, uma.asarray(bad, device="cuda"))
    after = stats(step)
    assert after["replayed"] == s["replayed"] + 1 and after["early_checked"] == s["early_checked"], after
    for p, h in zip(params, held):
        same_bits(p.get_value(), h, p.name)
    for k in range(3):
        same_bits(step(X, Y), estep(X, Y), f"loss after the error {k}")
    for p, q in zip(params, eparams):
        same_bits(p.get_value(), q.get_value(), p.name)
    assert stats(step)["early_checked"] == s["early_checked"] + (3 if early else 0)


@needs_gpu
def test_early_label_checks_read_each_calls_labels():
    """Note [Lean replays]: an early check runs on a stream of its own after the replay's
    argument copies, so it reads that call's labels: with good and bad label arrays taking
    turns (each call copies its labels over the last one's), exactly the bad calls raise, every
    good call is checked early, and the parameters are the eager step's."""
    X, Y = batch(32)
    params, step = mlp(CudaLinker(graphs=True, fuse=True, lean_replay=True))
    eparams, estep = mlp(EagerCuda())
    for k in range(3):
        same_bits(step(X, Y), estep(X, Y), f"loss {k}")
    bad = np.asarray(Y.to_device("cpu")).copy()
    bad[3] = 7
    B = uma.asarray(bad, device="cuda")
    s = stats(step)
    for k in range(6):
        with pytest.raises(ValueError, match="label 7 at position 3 is out of range"):
            step(X, B)
        same_bits(step(X, Y), estep(X, Y), f"loss after bad call {k}")
    after = stats(step)
    assert after["early_checked"] == s["early_checked"] + 6, (s, after)
    assert after["replayed"] == s["replayed"] + 12, (s, after)
    for p, q in zip(params, eparams):
        same_bits(p.get_value(), q.get_value(), p.name)


@needs_gpu
def test_lean_replay_copies_every_argument_layout():
    """Note [Lean replays]: a replay copies its arguments with one kernel where their pointers
    are 16-byte aligned (per 32 arguments; 16-byte units, then the last bytes one by one), and
    one cudaMemcpyAsync each otherwise: 12-byte and 16-byte arguments, a misaligned one (a view
    one element in) and 40 arguments at once (two kernels) give the eager ops' results bit for
    bit on every call."""
    sym = uma.sym
    xs = [sym.vector(f"x{k}", dtype="float32") for k in range(40)]
    small, tiny = sym.vector("small", dtype="float32"), sym.vector("tiny", dtype="int8")
    total = uma.sum(uma.stack([uma.sum(x) for x in xs])) + uma.sum(small) * 3 + uma.sum(uma.astype(tiny, "float32"))
    inputs = [*xs, small, tiny]
    lean, eager = (uma.function(inputs, total, backend=b)
                   for b in (CudaLinker(graphs=True, fuse=True, lean_replay=True), EagerCuda()))
    rng = np.random.default_rng(3)
    for call in range(5):
        whole = uma.asarray(rng.standard_normal(65).astype(np.float32), device="cuda")
        args = [uma.asarray(rng.standard_normal(64).astype(np.float32), device="cuda") for _ in range(39)]
        args.append(whole[1:])  # one element in: not 16-byte aligned
        args.append(uma.asarray(rng.standard_normal(3).astype(np.float32), device="cuda"))  # 12 bytes
        args.append(uma.asarray(rng.integers(-9, 9, 16).astype(np.int8), device="cuda"))  # 16 bytes
        same_bits(lean(*args), eager(*args), f"call {call}")
    s = stats(lean)
    assert s["replayed"] >= 3 and s["failed"] == 0, s


@needs_gpu
def test_lean_replay_leaves_labels_computed_in_the_step_to_the_deferred_check():
    """Labels the step computes (here int32 labels cast to int64) are checked after the launch,
    as without early checks: no replay counts as checked early, and a bad label raises."""
    sym = uma.sym
    x, y = sym.matrix("x", dtype="float32"), sym.vector("y", dtype="int32")

    def build(backend):  # each function updates its own copy of w
        w = uma.shared(np.random.default_rng(0).standard_normal((20, 5)).astype(np.float32), "w")
        cost = uma.mean(uma.softmax_cross_entropy(x @ w, uma.astype(y, "int64")))
        return uma.function([x, y], cost, updates={w: w - 0.1 * uma.grad(cost, w)}, backend=backend)
    fns = [build(b) for b in (CudaLinker(graphs=True, fuse=True, lean_replay=True), EagerCuda())]
    X, Y = batch(32)
    Y32 = uma.asarray(np.asarray(Y.to_device("cpu")).astype(np.int32), device="cuda")
    for k in range(5):
        same_bits(fns[0](X, Y32), fns[1](X, Y32), f"loss {k}")
    s = stats(fns[0])
    assert s["replayed"] >= 3 and s["early_checked"] == 0, s
    bad = np.asarray(Y32.to_device("cpu")).copy()
    bad[0] = 5
    with pytest.raises(ValueError, match="label 5 at position 0 is out of range"):
        fns[0](X, uma.asarray(bad, device="cuda"))


@needs_gpu
def test_two_functions_sharing_variables_interleave():
    sym = uma.sym

    def build(backend):
        params, step = mlp(backend)
        W1, b1 = params[0], params[1]
        decay = uma.function([], [], updates={W1: W1 * np.float32(0.5), b1: b1 + np.float32(1.0)}, backend=backend)
        x = sym.matrix("x", dtype="float32", shape=(None, 20))
        probe = uma.function([x], sym.sum(sym.tanh(x @ W1 + b1)), backend=backend)
        return params, step, decay, probe

    X, Y = batch(32)
    params, step, decay, probe = build(GRAPHS)
    eparams, estep, edecay, eprobe = build(EagerCuda())
    order = "ssdsspdsdsssppds"
    for k, c in enumerate(order):
        if c == "s":
            same_bits(step(X, Y), estep(X, Y), f"step {k}")
        elif c == "d":
            decay()
            edecay()
        else:
            same_bits(probe(X), eprobe(X), f"probe {k}")
    assert stats(step)["replayed"] > 0 and stats(decay)["replayed"] > 0
    for p, q in zip(params, eparams):
        same_bits(p.get_value(), q.get_value(), p.name)


@needs_gpu
def test_outputs_the_caller_keeps_are_never_overwritten():
    """Results handed out stay the caller's: while the caller holds them, their recording is
    busy, and the call runs on another recording or op by op."""
    sym = uma.sym
    x = sym.matrix("x", dtype="float32")
    f = uma.function([x], [sym.exp(x) * 2, x.sum(axis=0)], backend=GRAPHS)
    e = uma.function([x], [sym.exp(x) * 2, x.sum(axis=0)], backend=EagerCuda())
    rng = np.random.default_rng(4)
    xs = [uma.asarray(rng.standard_normal((6, 5)).astype(np.float32), device="cuda") for _ in range(6)]
    kept = [f(v) for v in xs]
    for k, (v, got) in enumerate(zip(xs, kept)):
        for a, b in zip(got, e(v)):
            same_bits(a, b, f"call {k}")
    s = stats(f)
    assert s["recorded"] == 2 and s["replayed"] == 2, s  # calls 2 and 3; the rest op by op


@needs_gpu
@pytest.mark.parametrize("lean", [False, True])
def test_carried_updates_are_not_copied(lean):
    """Note [Carried values]: the second recording reads the updated variables where the first
    left them and writes its updates into the first's buffers, so from the third call on a
    replay copies only the batch and the labels, with the eager ops' results bit for bit. (Two
    batches alternate, so neither is at the last call's address: Note [Steady arguments].)"""
    batches = [batch(32, seed=1), batch(32, seed=2)]
    params, step = mlp(CudaLinker(graphs=True, fuse=True, lean_replay=lean))
    eparams, estep = mlp(EagerCuda())
    copied = []
    for k in range(8):
        X, Y = batches[k % 2]
        same_bits(step(X, Y), estep(X, Y), f"loss {k}")
        copied.append(stats(step)["copied_bytes"])
    args = host(X).nbytes + host(Y).nbytes
    weights = sum(host(p.get_value()).nbytes for p in params)
    per_call = np.diff([0] + copied).tolist()
    # call 1 op by op; call 2 records A and copies every argument into A's buffers
    assert per_call[:2] == [0, args + weights], copied
    assert per_call[2:] == [args] * 6, copied
    s = stats(step)
    assert (s["recorded"], s["replayed"], s["failed"]) == (2, 7, 0), s
    for p, q in zip(params, eparams):
        same_bits(p.get_value(), q.get_value(), p.name)


@needs_gpu
def test_steady_arguments_are_read_in_place():
    """Note [Steady arguments]: a batch and labels passed at the same address call after call
    are read where they are, so from the third call a training step copies nothing. Once the
    caller lets the batch go and passes another, the new one is copied into the old one's
    memory; no recording is dropped, and every result is the eager ops' bit for bit. (The
    oracle gets copies of the batches, so that only the caller and the recordings hold them.)"""
    X, Y = batch(32)
    params, step = mlp(GRAPHS)
    eparams, estep = mlp(EagerCuda())
    copied = []
    X_oracle = twin(X)
    for k in range(6):
        same_bits(step(X, Y), estep(X_oracle, Y), f"loss {k}")
        copied.append(stats(step)["copied_bytes"])
    weights = sum(host(p.get_value()).nbytes for p in params)
    per_call = np.diff([0] + copied).tolist()
    assert per_call == [0, weights, 0, 0, 0, 0], copied  # call 2 copies the weights into A's buffers
    Xnew = batch(32, seed=7)[0]
    Xnew_oracle = twin(Xnew)
    del X  # the recordings hold the only references to its memory
    for k in range(4):
        same_bits(step(Xnew, Y), estep(Xnew_oracle, Y), f"loss with the new batch {k}")
        copied.append(stats(step)["copied_bytes"])
    assert np.diff(copied[5:]).tolist() == [host(Xnew).nbytes] * 4, copied
    s = stats(step)
    assert (s["recorded"], s["replayed"], s["dropped"], s["failed"]) == (2, 9, 0, 0), s
    for p, q in zip(params, eparams):
        same_bits(p.get_value(), q.get_value(), p.name)


@needs_gpu
def test_recordings_waiting_for_a_held_argument_are_dropped_once():
    """Note [Steady arguments]: while the caller keeps the batch the recordings read in place and
    passes another, they cannot copy into it: both are dropped once, the signature records
    again with buffers of its own, and replays go on (never op by op for good); the kept batch
    is unchanged."""
    X, Y = batch(32)
    Z = batch(32, seed=8)[0]
    kept = host(X).copy()
    params, step = mlp(GRAPHS)
    eparams, estep = mlp(EagerCuda())
    for k in range(4):
        same_bits(step(X, Y), estep(X, Y), f"loss {k}")
    for k in range(6):
        A = Z if k % 3 else X  # mostly the new batch, sometimes the kept one
        same_bits(step(A, Y), estep(A, Y), f"loss after the switch {k}")
    s = stats(step)
    assert (s["recorded"], s["replayed"], s["dropped"], s["failed"]) == (4, 9, 2, 0), s
    same_bits(X, kept, "the kept batch")
    for p, q in zip(params, eparams):
        same_bits(p.get_value(), q.get_value(), p.name)


@needs_gpu
@pytest.mark.parametrize("dtype, carried", [("float64", True), ("float32", False)])
def test_a_placement_that_a_temporary_takes_drops_the_carry(dtype, carried):
    """Note [Carried values]: one_hot casts its labels to int64 before it allocates its result.
    With float32 and depth 2 that temporary has the result's byte count and takes the
    placement, so the second recording is made again without the carry: the variable is then
    copied on every replay. Either way every value is NumPy's."""
    sym = uma.sym
    n = 64
    y = sym.vector("y", dtype="int64")
    h = uma.shared(np.zeros((n, 2), dtype), "h")
    f = uma.function([y], sym.sum(h), updates={h: sym.one_hot(y, 2, dtype=dtype)}, backend=GRAPHS)
    rng = np.random.default_rng(5)
    copied, previous = [], np.zeros((n, 2), dtype)
    for k in range(7):
        labels = rng.integers(0, 2, n)
        total = f(uma.asarray(labels, device="cuda"))
        assert host(total) == previous.sum(), f"call {k}"
        previous = np.eye(2, dtype=dtype)[labels]
        same_bits(h.get_value(), previous, f"h after call {k}")
        copied.append(stats(f)["copied_bytes"])
    per_call = np.diff([0] + copied).tolist()
    label_bytes, h_bytes = n * 8, previous.nbytes
    assert per_call[2:] == [label_bytes + (0 if carried else h_bytes)] * 5, copied
    s = stats(f)
    assert (s["recorded"], s["failed"]) == (2, 0), s


@needs_gpu
def test_carried_results_the_caller_keeps_are_never_overwritten():
    """A chain x = f(x) whose caller keeps some results: a kept result (read by the other
    recording, or the buffer the other recording's result goes to) is never written again;
    every result, kept or not, is the NumPy value, and the calls that cannot use a recording
    run op by op."""
    sym = uma.sym
    x = sym.vector("x", dtype="float32")
    f = uma.function([x], x * np.float32(0.5) + np.float32(1), backend=GRAPHS)
    v = uma.asarray(np.arange(1000, dtype=np.float32), device="cuda")
    expect = np.arange(1000, dtype=np.float32)
    kept = []
    for k in range(24):
        v = f(v)
        expect = expect * np.float32(0.5) + np.float32(1)
        same_bits(v, expect, f"call {k}")
        if k % 5 in (1, 2):
            kept.append((v, expect.copy()))
        if k % 7 == 6:
            kept.pop(0)
    for k, (a, e) in enumerate(kept):
        same_bits(a, e, f"kept result {k}")
    s = stats(f)
    # Calls 2 and 3 record (the second reads call 2's result in place) and calls 15-18 replay.
    # The others run op by op: the caller keeps a result of each recording, or (calls 8-14)
    # the first recording's results are free but its buffer is the second's kept result,
    # which the argument copy would overwrite.
    assert (s["recorded"], s["replayed"], s["failed"]) == (2, 6, 0), s


@needs_gpu
def test_an_output_that_is_an_input_is_the_callers_array():
    sym = uma.sym
    x = sym.vector("x", dtype="float32")
    f = uma.function([x], [x * 3, x], backend=GRAPHS)
    for k in range(4):
        v = uma.asarray(np.arange(4, dtype=np.float32) + k, device="cuda")
        a, b = f(v)
        np.testing.assert_array_equal(np.asarray(a.to_device("cpu")), (np.arange(4) + k) * 3)
        np.testing.assert_array_equal(np.asarray(b.to_device("cpu")), np.arange(4) + k)
    assert stats(f)["replayed"] >= 2


@needs_gpu
def test_a_step_that_reads_device_data_back_runs_op_by_op():
    """take checks its indices on the device and reads the result back: not recordable, so
    its signature runs op by op (the failure is counted and named), with the same results."""
    sym = uma.sym
    x = sym.matrix("x", dtype="float32")
    i = sym.vector("i", dtype="int64")
    f = uma.function([x, i], sym.take(x, i, axis=0) * 2, backend=GRAPHS)
    e = uma.function([x, i], sym.take(x, i, axis=0) * 2, backend=EagerCuda())
    X = uma.asarray(np.arange(12, dtype=np.float32).reshape(4, 3), device="cuda")
    I = uma.asarray(np.array([3, 0, -1]), device="cuda")
    for k in range(4):
        same_bits(f(X, I), e(X, I), f"call {k}")
    s = stats(f)
    assert s["failed"] == 1 and s["recorded"] == 0 and s["last_failure"], s
    with pytest.raises(IndexError, match="out of bounds"):
        f(X, uma.asarray(np.array([4]), device="cuda"))


@needs_gpu
def test_graphs_off():
    X, Y = batch(32)
    params, step = mlp(CudaLinker(graphs=False))
    for _ in range(4):
        step(X, Y)
    assert not step._thunk.program.graphs
    assert stats(step) is None  # documented: None when graphs are off
    assert step._thunk.program.graph_stats()["recorded"] == 0


@needs_gpu
def test_host_arguments_take_the_graph_path():
    rng = np.random.default_rng(1)
    X = rng.standard_normal((32, 20)).astype(np.float32)
    Y = rng.integers(0, 5, 32)
    params, step = mlp(GRAPHS)
    eparams, estep = mlp(EagerCuda())
    for k in range(5):
        same_bits(step(X, Y), estep(X, Y), f"loss {k}")
    assert stats(step)["replayed"] == 4


def test_matmul_precision_setting():
    """uma.cuda.set_matmul_precision: 'highest' (default) or 'tf32'; anything else is a
    ValueError naming the value. The setting exists in every build."""
    assert uma.cuda.matmul_precision() == "highest"
    try:
        uma.cuda.set_matmul_precision("tf32")
        assert uma.cuda.matmul_precision() == "tf32"
        with pytest.raises(ValueError, match="expected 'highest' or 'tf32', got 'fast'"):
            uma.cuda.set_matmul_precision("fast")
        with pytest.raises(ValueError, match=r"got 'tf32\\x00x'"):
            uma.cuda.set_matmul_precision("tf32\x00x")
        for bad in (None, 1, b"tf32"):
            with pytest.raises(TypeError, match=f"expected 'highest' or 'tf32', got {bad!r}"):
                uma.cuda.set_matmul_precision(bad)
        assert uma.cuda.matmul_precision() == "tf32"
        # host products stay exact
        rng = np.random.default_rng(0)
        a, b = rng.standard_normal((40, 30)).astype(np.float32), rng.standard_normal((30, 20)).astype(np.float32)
        np.testing.assert_array_equal(np.asarray(uma.matmul(uma.asarray(a), uma.asarray(b))),
                                      np.asarray(uma.matmul(uma.asarray(a), uma.asarray(b))))
    finally:
        uma.cuda.set_matmul_precision("highest")


@needs_gpu
def test_tf32_products_and_graphs_per_precision():
    """TF32 products are within TF32's error of the exact ones and differ from them; a cuda
    function records separate graphs per precision, each equal to the eager product of its
    precision."""
    rng = np.random.default_rng(0)
    A = rng.standard_normal((256, 512)).astype(np.float32)
    B = rng.standard_normal((512, 128)).astype(np.float32)
    exact = A.astype(np.float64) @ B.astype(np.float64)
    a, b = uma.asarray(A, device="cuda"), uma.asarray(B, device="cuda")
    sym = uma.sym
    x, w = sym.matrix("x", dtype="float32"), sym.matrix("w", dtype="float32")
    f = uma.function([x, w], x @ w, backend=GRAPHS)
    try:
        got = {}
        for prec in ("highest", "tf32", "highest", "tf32"):
            uma.cuda.set_matmul_precision(prec)
            eager = np.asarray(uma.matmul(a, b).to_device("cpu"))
            for _ in range(3):
                same_bits(f(a, b), eager, prec)
            got[prec] = eager
        err = {p: np.max(np.abs(v - exact)) / np.max(np.abs(exact)) for p, v in got.items()}
        assert err["highest"] < 1e-5 and 1e-5 < err["tf32"] < 1e-2, err
    finally:
        uma.cuda.set_matmul_precision("highest")
    # one recording per precision (each call's result is dropped before the next, so the
    # first recording stays free); the later rounds replay it
    s = stats(f)
    assert (s["recorded"], s["replayed"], s["failed"]) == (2, 10, 0), s


# ---- fused chains on cuda (Note [Fused chains on cuda] in src/kernels/cuda/fused.cu) -------

FUSED_CHAINS = [  # (inputs' shapes, code): registers 0..n-1 are the inputs
    ([(64, 33), (33,)], [("multiply", 0, 1), ("add", 2, 0), ("tanh", 3, 0)]),
    ([(5, 7), (5, 7), ()], [("less_equal", 2, 0), ("where", 3, 1, 2), ("multiply", 4, 0)]),
    ([(3, 1, 9), (4, 1), (9,)], [("subtract", 0, 1), ("multiply", 3, 3), ("add", 4, 2), ("maximum", 5, 0)]),
    ([(1000,), (1000,)], [("multiply", 0, 1), ("add", 2, 1), ("multiply", 3, 0), ("subtract", 4, 2)]),
    # a value per row (read once per pack) beside a bias row (read 16 bytes at a time)
    ([(40, 12), (40, 1), (12,)], [("subtract", 0, 1), ("multiply", 3, 2), ("tanh", 4, 0)]),
    # an operand repeated both along rows and across the leading axis (divided, then wrapped)
    ([(6, 5, 8), (5, 1), (6, 1, 1)], [("add", 0, 1), ("multiply", 3, 2), ("maximum", 4, 0)]),
    # periods and row lengths that are not multiples of a pack (element by element)
    ([(7, 3), (3,), (7, 1)], [("add", 0, 1), ("subtract", 3, 2)]),
    # more elements than one pass of the grid covers, with a bias row
    ([(1100, 1030), (1030,)], [("multiply", 0, 1), ("add", 2, 1)]),
]


def _chain_inputs(shapes, dtype, rng):
    if dtype.startswith("int"):
        return [rng.integers(-50, 50, size=s).astype(dtype) for s in shapes]
    return [rng.standard_normal(s).astype(dtype) for s in shapes]


_UNARY = {"tanh"}  # the unary ops of FUSED_CHAINS


def _unfused(code, values):
    """The chain op by op with uma's eager ops on the device (the oracle)."""
    regs = list(values)
    for name, a, b, *c in code:
        if name == "where":
            regs.append(uma.where(regs[a], regs[b], regs[c[0]]))
        elif name in _UNARY:
            regs.append(getattr(uma, name)(regs[a]))
        else:
            regs.append(getattr(uma, name)(regs[a], regs[b]))
    return regs[-1]


@needs_gpu
@pytest.mark.parametrize("dtype", ["float32", "float64", "int32", "int64"])
@pytest.mark.parametrize("case", range(len(FUSED_CHAINS)))
def test_fused_chain_on_cuda_is_bit_for_bit_the_ops(case, dtype):
    shapes, code = FUSED_CHAINS[case]
    if dtype.startswith("int") and any(op == "tanh" for op, *_ in code):
        pytest.skip("tanh does not keep an integer dtype (the chain is not fusable)")
    rng = np.random.default_rng(case)
    values = [uma.asarray(v, device="cuda") for v in _chain_inputs(shapes, dtype, rng)]
    p = uma._core.Program()
    slots = [p.add_input() for _ in shapes]
    p.set_outputs([p.add_fused(slots, code, dtype)])
    got = p.run(values)[0]
    assert str(got.device) == "cuda:0"
    same_bits(got, _unfused(code, values), f"chain {case} {dtype}")


@needs_gpu
@pytest.mark.parametrize("dtype", ["float32", "float64", "int64"])
def test_fused_chain_on_cuda_reads_views(dtype):
    """Operands that are views: one element into a buffer (not 16-byte aligned), a transpose (the
    strided kernel), a row and a column taken from a larger buffer. Bit for bit the eager ops."""
    rng = np.random.default_rng(11)
    base = uma.asarray(_chain_inputs([(4200,)], dtype, rng)[0], device="cuda")
    square = uma.asarray(_chain_inputs([(64, 64)], dtype, rng)[0], device="cuda")
    cases = [
        [base[1:4097].reshape((64, 64)), base[5:69]],               # unaligned matrix, bias row
        [square, base[1:4097].reshape((64, 64)), base[3:67].reshape((64, 1))],
        [square.T, base[:64]],                                       # transposed: strided
    ]
    code = [("multiply", 0, 1), ("add", 2, 0), ("subtract", 3, 1)]
    for k, values in enumerate(cases):
        p = uma._core.Program()
        slots = [p.add_input() for _ in values]
        p.set_outputs([p.add_fused(slots, code, dtype)])
        same_bits(p.run(values)[0], _unfused(code, values), f"views case {k} {dtype}")


# An epilogue over the product (register 0) and four operands: a bias row (N,), a column
# (M, 1), a 0-d scalar and a full (M, N) matrix; its NumPy value.
_EPILOGUE = [("add", 0, 1), ("tanh", 5, 0), ("multiply", 6, 2), ("subtract", 7, 3), ("greater", 8, 4),
             ("where", 9, 8, 4)]


def _epilogue_numpy(product, bias, column, scalar, full):
    r = np.tanh(product + bias) * column - scalar
    return np.where(r > full, r, full)


@needs_gpu
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_product_epilogues_on_cuda_are_one_kernel_bit_for_bit_the_ops(dtype):
    """Note [Epilogue kernels]: a small product whose chain is its epilogue runs as one kernel
    generated for the chain (where NVRTC is there; required in the GPU run), bit for bit uma's
    product then the ops one by one, on tile edges (M, N not multiples of 16), a transposed
    operand and K of one slab; NumPy agrees to rounding. A full operand that is a transpose is
    not a blocked read, and 120000 outputs are too many for the tiled kernel: those products and
    their chains run as two kernels, with the same bits."""
    rng = np.random.default_rng(9)
    before = uma._core.cuda._chain_kernel_stats()["epilogues"]
    for k, (m, kk, n, transposed_a, transposed_full) in enumerate(
            [(37, 20, 11, False, False), (128, 64, 64, True, False), (5, 256, 3, False, False),
             (40, 8, 24, False, True), (300, 10, 400, False, False)]):
        a_host = rng.standard_normal((kk, m) if transposed_a else (m, kk)).astype(dtype)
        host_values = [a_host, rng.standard_normal((kk, n)).astype(dtype), rng.standard_normal(n).astype(dtype),
                       rng.standard_normal((m, 1)).astype(dtype), np.array(0.25, dtype),
                       rng.standard_normal((n, m) if transposed_full else (m, n)).astype(dtype) * 0.5]
        values = [uma.asarray(v, device="cuda") for v in host_values]
        if transposed_a:
            values[0], host_values[0] = values[0].T, host_values[0].T
        if transposed_full:
            values[5], host_values[5] = values[5].T, host_values[5].T
        p = uma._core.Program()
        slots = [p.add_input() for _ in values]
        p.set_outputs([p.add_fused(slots, _EPILOGUE, dtype, matmul=True)])
        got = p.run(values)[0]
        assert got.shape == (m, n) and str(got.device) == "cuda:0"
        same_bits(got, _unfused(_EPILOGUE, [uma.matmul(values[0], values[1])] + values[2:]), f"case {k} {dtype}")
        want = _epilogue_numpy(host_values[0] @ host_values[1], *host_values[2:])
        np.testing.assert_allclose(host(got), want, rtol=1e-4 if dtype == "float32" else 1e-12, atol=1e-5,
                                   err_msg=f"case {k} {dtype}")
    made = uma._core.cuda._chain_kernel_stats()["epilogues"] - before
    assert made in (0, 1), made  # one kernel for the chain in this dtype, compiled once per process
    if os.environ.get("UMA_REQUIRE_CHAIN_KERNELS") == "1":
        assert made == 1, made


# A weight's SGD update after its gradient's product: w + s * (a @ b) (registers: 0 the
# product, 1 w, 2 s), in both operand orders.
_SCALED_UPDATES = [[("multiply", 2, 0), ("add", 1, 3)], [("multiply", 0, 2), ("add", 3, 1)]]


@needs_gpu
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_scaled_updates_are_one_cublaslt_product(dtype):
    """Note [Scaled updates]: a product that goes to cuBLAS (K > 256 or more than 2^16 outputs)
    whose chain is w + s * P runs as one cuBLASLt product with alpha read from s's device memory:
    NumPy agrees to rounding, every call gives the first (op-by-op) call's bits, recorded and
    replayed where the inputs are C-contiguous, and a new value written into s is seen. A
    chain of another form (w - s * P) and a transposed w (not cuBLAS's layout for C) run the
    product, then the chain, bit for bit."""
    rng = np.random.default_rng(13)
    run = lambda values: uma._core._program_run(p, values)  # noqa: E731  (run_into: graphs)
    tol = dict(rtol=1e-5, atol=1e-5) if dtype == "float32" else dict(rtol=1e-12, atol=1e-12)
    for k, (m, kk, n, transposed_a) in enumerate([(64, 1024, 256, True), (256, 1024, 10, True), (300, 10, 400, False),
                                                  (37, 513, 29, False)]):
        a_host = rng.standard_normal((kk, m) if transposed_a else (m, kk)).astype(dtype)
        host_values = [a_host, rng.standard_normal((kk, n)).astype(dtype), rng.standard_normal((m, n)).astype(dtype),
                       np.array(-0.05, dtype)]
        values = [uma.asarray(v, device="cuda") for v in host_values]
        if transposed_a:  # the gradient of a weight: x.T @ d
            values[0], host_values[0] = values[0].T, host_values[0].T
        for code in _SCALED_UPDATES:
            p = uma._core.Program()
            p.graphs = True
            slots = [p.add_input() for _ in values]
            p.set_outputs([p.add_fused(slots, code, dtype, matmul=True)])
            before = uma._core.cuda._chain_kernel_stats()["scaled_updates"]
            first = host(run(values)[0])
            assert uma._core.cuda._chain_kernel_stats()["scaled_updates"] == before + 1, (k, code)
            want = host_values[2].astype(np.float64) - 0.05 * (host_values[0].astype(np.float64) @ host_values[1])
            np.testing.assert_allclose(first, want, **tol, err_msg=f"case {k} {dtype}")
            for call in range(3):  # recorded, then replayed
                same_bits(run(values)[0], first, f"case {k} {dtype} call {call}")
            if not transposed_a:  # a recording's inputs are C-contiguous (Note [Program graphs])
                assert p.graph_stats()["replayed"] >= 1, p.graph_stats()
            values[3][...] = uma.asarray(np.array(-0.5, dtype), device="cuda")  # the learning rate, in place
            want = host_values[2].astype(np.float64) - 0.5 * (host_values[0].astype(np.float64) @ host_values[1])
            np.testing.assert_allclose(host(run(values)[0]), want, **tol, err_msg=f"case {k} {dtype} new s")
            values[3][...] = uma.asarray(host_values[3], device="cuda")
    # Not the form, or not cuBLAS's layout: the product, then the chain (the same bits as the ops).
    a, b = (uma.asarray(rng.standard_normal(s).astype(dtype), device="cuda") for s in ((64, 512), (512, 48)))
    w, wt = uma.asarray(rng.standard_normal((64, 48)).astype(dtype), device="cuda"), \
        uma.asarray(rng.standard_normal((48, 64)).astype(dtype), device="cuda").T
    lr = uma.asarray(np.array(0.05, dtype), device="cuda")
    for code, values in (([("multiply", 2, 0), ("subtract", 1, 3)], [a, b, w, lr]), (_SCALED_UPDATES[0], [a, b, wt, lr])):
        p = uma._core.Program()
        slots = [p.add_input() for _ in values]
        p.set_outputs([p.add_fused(slots, code, dtype, matmul=True)])
        before = uma._core.cuda._chain_kernel_stats()["scaled_updates"]
        same_bits(p.run(values)[0], _unfused(code, [uma.matmul(a, b)] + values[2:]), f"{code} {dtype}")
        assert uma._core.cuda._chain_kernel_stats()["scaled_updates"] == before


@needs_gpu
def test_training_step_with_cublas_products_takes_scaled_updates():
    """A step whose weight gradients are cuBLAS products (a 512-row batch: K = 512) writes each
    weight's update as cuBLASLt's alpha and beta (Note [Scaled updates]): recorded and replayed
    calls give the bits of the same step run op by op, and the parameters stay within the
    accuracy rule of the reference backend's."""
    rng = np.random.default_rng(4)
    X = rng.standard_normal((512, 64)).astype(np.float32)
    Y = rng.integers(0, 10, 512)
    Xd, Yd = uma.asarray(X, device="cuda"), uma.asarray(Y, device="cuda")
    kw = dict(activation="tanh", n_in=64, n_hidden=128, n_out=10)
    params, step = mlp_step(GRAPHS, **kw)
    oparams, ostep = mlp_step(CudaLinker(graphs=False, fuse=True), **kw)
    rparams, rstep = mlp_step("reference", **kw)
    before = uma._core.cuda._chain_kernel_stats()["scaled_updates"]
    for k in range(5):
        same_bits(step(Xd, Yd), ostep(Xd, Yd), f"loss {k}")
        rstep(X, Y)
    # two weights per call, in both functions (replays launch the recorded product: not counted)
    assert uma._core.cuda._chain_kernel_stats()["scaled_updates"] - before >= 2 * 5 + 2 * 2
    assert stats(step)["replayed"] >= 2, stats(step)
    for p, q, r in zip(params, oparams, rparams):
        same_bits(p.get_value(), q.get_value(), p.name)
        np.testing.assert_allclose(host(p.get_value()), np.asarray(r.get_value()), rtol=1e-4, atol=1e-5,
                                   err_msg=p.name)


# An SGD-like epilogue over a reduction (register 0) and three operands: a row of the result's
# shape (bias), a 0-d scalar (learning rate) and a full operand: maximum(b - lr * r, full).
_REDUCE_EPILOGUE = [("multiply", 2, 0), ("subtract", 1, 4), ("maximum", 5, 3)]


@needs_gpu
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_reduction_epilogues_on_cuda_are_one_kernel_bit_for_bit_the_ops(dtype):
    """Note [Reduction epilogues]: a column sum or mean whose chain is its epilogue runs as one
    kernel (where NVRTC is there; required in the GPU run), its last block finishing the sum
    (Note [Last block finishes]), bit for bit uma's reduction then the ops, in every call of a
    recorded and replayed Program: one split (60 rows), 16 to 32 splits (1024 to 4099 rows, 3 to
    300 columns), a mean over two leading axes, keepdims. A sum over the last axis (not
    columns), more than 32 splits (100003 rows) and a strided full operand run the reduction,
    then the chain, with the same bits. NumPy agrees to rounding."""
    rng = np.random.default_rng(12)
    before = uma._core.cuda._chain_kernel_stats()["reduce_epilogues"]
    cases = [((60, 64), "sum", (0,), False), ((1024, 300), "sum", (0,), False), ((4099, 64), "mean", (0,), False),
             ((8, 512, 33), "mean", (0, 1), False), ((1024, 40), "sum", (0,), True), ((40, 1024), "sum", (1,), False),
             ((100003, 10), "sum", (0,), False), ((2048, 24, 3), "sum", (0,), "strided")]
    for k, (shape, name, axes, keepdims) in enumerate(cases):
        out_shape = tuple(1 if d in axes else n for d, n in enumerate(shape) if keepdims is True or d not in axes)
        full_host = rng.standard_normal(out_shape[::-1] if keepdims == "strided" else out_shape).astype(dtype)
        host_values = [rng.standard_normal(shape).astype(dtype), rng.standard_normal(out_shape[-1:]).astype(dtype),
                       np.array(0.5, dtype), full_host * 0.1]
        values = [uma.asarray(v, device="cuda") for v in host_values]
        if keepdims == "strided":
            values[3], host_values[3] = values[3].T, host_values[3].T
        p = uma._core.Program()
        slots = [p.add_input() for _ in values]
        attrs = {"axis": axes, "keepdims": keepdims is True}
        p.set_outputs([p.add_fused(slots, _REDUCE_EPILOGUE, dtype, head=name, head_attrs=attrs)])
        head = getattr(uma, name)(values[0], axis=axes, keepdims=keepdims is True)
        want_bits = _unfused(_REDUCE_EPILOGUE, [head] + values[1:])
        for call in range(3):  # recorded, then replayed
            got = p.run(values)[0]
            assert got.shape == out_shape and str(got.device) == "cuda:0"
            same_bits(got, want_bits, f"case {k} {dtype} call {call}")
        r = getattr(np, name)(host_values[0].astype(np.float64), axis=axes, keepdims=keepdims is True)
        want = np.maximum(host_values[1] - 0.5 * r, host_values[3])
        np.testing.assert_allclose(host(got), want, rtol=1e-5 if dtype == "float32" else 1e-12, atol=1e-5,
                                   err_msg=f"case {k} {dtype}")
    made = uma._core.cuda._chain_kernel_stats()["reduce_epilogues"] - before
    assert made in (0, 2), made  # a sum's and a mean's kernel in this dtype, compiled once per process
    if os.environ.get("UMA_REQUIRE_CHAIN_KERNELS") == "1":
        assert made == 2, made


def _fusable_chains(dtype):
    """A two-instruction chain per op of the op table that fuses in `dtype`: the op on the two
    inputs (a comparison as a where's condition), then a product with the second input."""
    chains = []
    for row in uma._core._op_table():
        name = row["name"]
        if row["arity"] == 1:
            code = [(name, 0, 0), ("multiply", 2, 1)]
        elif row["bool_result"]:
            code = [(name, 0, 1), ("where", 2, 0, 1), ("multiply", 3, 1)]
        else:
            code = [(name, 0, 1), ("multiply", 2, 1)]
        p = uma._core.Program()
        slots = [p.add_input(), p.add_input()]
        try:
            p.set_outputs([p.add_fused(slots, code, dtype)])
        except TypeError:  # "<op> cannot be fused for dtype <dtype>"
            continue
        chains.append((name, p))
    return chains


@needs_gpu
@pytest.mark.parametrize("dtype", ["float32", "float64", "int32", "int64"])
def test_every_fusable_op_in_a_chain_on_cuda_is_bit_for_bit_the_op(dtype):
    """Each op that fuses in `dtype`, in a chain kernel (generated per chain where NVRTC is there:
    Note [Generated chain kernels]), gives the bits of its own eager kernel, on operands with
    special values (zeros, negatives, NaN and infinities for floats)."""
    rng = np.random.default_rng(5)
    if dtype.startswith("int"):
        x, y = (rng.integers(-60, 60, size=(37, 9)).astype(dtype) for _ in range(2))
        y[0, :3] = 0
    else:
        x, y = (rng.standard_normal((37, 9)).astype(dtype) * 3 for _ in range(2))
        x.flat[:6] = [0.0, -0.0, np.inf, -np.inf, np.nan, 1.0]
        y.flat[:6] = [0.0, 2.0, -np.inf, 0.5, 1.0, np.nan]
    values = [uma.asarray(x, device="cuda"), uma.asarray(y, device="cuda")]
    chains = _fusable_chains(dtype)
    assert len(chains) >= (20 if dtype.startswith("int") else 40), [n for n, _ in chains]
    for name, p in chains:
        with np.errstate(all="ignore"):
            expected = _eager_chain(name, values)
        same_bits(p.run(values)[0], expected, f"{name} {dtype}")


_UNARY_NAMES = {row["name"] for row in uma._core._op_table() if row["arity"] == 1}
_BOOL_NAMES = {row["name"] for row in uma._core._op_table() if row["bool_result"]}


def _eager_chain(name, values):
    """_fusable_chains' chain for op `name`, op by op with uma's eager ops on the device."""
    x, y = values
    f = getattr(uma, name)
    if name in _UNARY_NAMES:
        r = f(x)
    elif name in _BOOL_NAMES:
        r = uma.where(f(x, y), x, y)
    else:
        r = f(x, y)
    return uma.multiply(r, y)


@needs_gpu
def test_chain_kernels_are_generated_or_the_reason_is_given():
    """A fused chain runs a kernel generated for it, or the interpreting kernel with the reason
    recorded; UMA_REQUIRE_CHAIN_KERNELS=1 (the GPU run, tests/gpu/run.sh) requires generation."""
    x = uma.asarray(np.arange(12.0).reshape(3, 4), device="cuda")
    p = uma._core.Program()
    slots = [p.add_input(), p.add_input()]
    p.set_outputs([p.add_fused(slots, [("add", 0, 1), ("exp", 2, 0), ("multiply", 3, 0)], "float64")])
    same_bits(p.run([x, x])[0], uma.exp(x + x) * x, "chain")
    st = uma._core.cuda._chain_kernel_stats()
    assert st["generated"] + st["interpreted"] >= 1, st
    assert (st["interpreted"] == 0) == (st["reason"] == ""), st
    if os.environ.get("UMA_REQUIRE_CHAIN_KERNELS") == "1":
        assert st["generated"] >= 1 and st["interpreted"] == 0, st


_CHAIN_IN_A_PROCESS = textwrap.dedent("""
    import sys
    import numpy as np
    import uma
    x = uma.asarray(np.linspace(-4.0, 4.0, 1000), device="cuda")
    p = uma._core.Program()
    slots = [p.add_input(), p.add_input()]
    p.set_outputs([p.add_fused(slots, [("multiply", 0, 1), ("tanh", 2, 0), ("subtract", 3, 0)], "float64")])
    np.save(sys.argv[1], np.asarray(p.run([x, x])[0].to_device("cpu")))
    st = uma._core.cuda._chain_kernel_stats()
    print(st["generated"], st["from_disk"], st["interpreted"], repr(st["reason"]))
""")


@needs_gpu
def test_chain_kernels_are_loaded_from_the_image_cache_by_a_later_process(tmp_path):
    """Note [Kernel image cache]: a process compiles a chain and stores its image under
    UMA_CACHE_DIR; a later process loads the image instead of compiling, with the same bits;
    UMA_CACHE_DIR="" turns the cache off."""
    def run(k, cache):
        env = dict(os.environ, UMA_CACHE_DIR=cache)
        r = subprocess.run([sys.executable, "-c", _CHAIN_IN_A_PROCESS, str(tmp_path / f"out{k}.npy")], env=env,
                           capture_output=True, text=True, timeout=300)
        assert r.returncode == 0, r.stderr[-3000:]
        generated, from_disk, interpreted, reason = r.stdout.split()[-4:]
        if interpreted != "0":
            pytest.skip(f"chains are interpreted here: {reason}")
        return int(generated), int(from_disk), np.load(tmp_path / f"out{k}.npy")
    cache = tmp_path / "cache"
    first, second, off = run(0, str(cache)), run(1, str(cache)), run(2, "")
    assert first[:2] == (1, 0) and second[:2] == (1, 1) and off[:2] == (1, 0), (first, second, off)
    images = list((cache / "kernels").glob("*.img"))
    assert len(images) == 1 and (cache / "kernels").stat().st_mode & 0o777 == 0o700
    for _, _, out in (second, off):
        np.testing.assert_array_equal(out.view(np.uint64), first[2].view(np.uint64))
    np.testing.assert_allclose(first[2], np.tanh(np.linspace(-4.0, 4.0, 1000) ** 2) - np.linspace(-4.0, 4.0, 1000))
    # a damaged image is a miss: the chain is compiled again and the image rewritten
    images[0].write_bytes(images[0].read_bytes()[:100])
    again = run(3, str(cache))
    assert again[:2] == (1, 0)
    np.testing.assert_array_equal(again[2].view(np.uint64), first[2].view(np.uint64))
    assert run(4, str(cache))[:2] == (1, 1)


@needs_gpu
def test_training_step_fuses_and_equals_the_eager_ops():
    """The cuda linker fuses the step's elementwise chains (and product epilogues); the losses
    and parameters stay bit for bit the eager ops'."""
    X, Y = batch(32)
    params, step = mlp(GRAPHS)
    eparams, estep = mlp(EagerCuda())
    assert step._thunk.n_fused > 0
    for k in range(4):
        same_bits(step(X, Y), estep(X, Y), f"loss {k}")
    for p, q in zip(params, eparams):
        same_bits(p.get_value(), q.get_value(), p.name)


def one_hot_step(backend, mode=None, depth=5):
    """(params, step): a float32 tanh MLP 20 -> 16 -> 5 with its loss written as
    ``-mean(sum(one_hot(y, depth) * log_softmax(z, axis=1), axis=1))`` (the digits model of
    bench/bench_gpu_step.py) and its SGD step (lr 0.5)."""
    rng = np.random.default_rng(3)
    sym = uma.sym
    params = [uma.shared((rng.standard_normal(s) * 0.5).astype(np.float32), n)
              for n, s in (("W1", (20, 16)), ("b1", (16,)), ("W2", (16, 5)), ("b2", (5,)))]
    W1, b1, W2, b2 = params
    x, y = sym.matrix("x", dtype="float32"), sym.vector("y", dtype="int64")
    z = sym.tanh(x @ W1 + b1) @ W2 + b2
    loss = -sym.mean(sym.sum(sym.one_hot(y, depth, dtype="float32") * sym.log_softmax(z, axis=1), axis=1))
    grads = uma.grad(loss, params)
    step = uma.function([x, y], loss, updates=[(p, p - 0.5 * g) for p, g in zip(params, grads)], backend=backend,
                        mode=mode)
    return params, step


def numpy_one_hot_step(X, Y, values):
    """The loss and the updated parameters of one_hot_step's graph as written, in float64 NumPy
    (labels outside [0, 5) are zero rows of one_hot: no loss, no gradient)."""
    W1, b1, W2, b2 = (v.astype(np.float64) for v in values)
    X = X.astype(np.float64)
    h = np.tanh(X @ W1 + b1)
    z = h @ W2 + b2
    logp = z - z.max(axis=1, keepdims=True)
    logp -= np.log(np.exp(logp).sum(axis=1, keepdims=True))
    oh = (Y[:, None] == np.arange(5)[None, :]).astype(np.float64)
    n = X.shape[0]
    dz = (np.exp(logp) * oh.sum(axis=1, keepdims=True) - oh) / n
    dh = (dz @ W2.T) * (1 - h * h)
    grads = (X.T @ dh, dh.sum(axis=0), h.T @ dz, dz.sum(axis=0))
    return -(oh * logp).sum(axis=1).mean(), [v - 0.5 * g for v, g in zip((W1, b1, W2, b2), grads)]


@needs_gpu
def test_one_hot_cross_entropy_step_runs_its_closed_form_on_cuda():
    """The closed_forms pass runs on cuda: the loss and its gradient are one kernel each (no
    log_softmax, one_hot or product in the Program); replays equal the eager oracle (the same
    passes, node by node) bit for bit; the values are the graph as written within the accuracy
    rule, labels outside [0, 5) included (zero rows)."""
    rng = np.random.default_rng(8)
    X = rng.standard_normal((32, 20)).astype(np.float32)
    Y = rng.integers(0, 5, 32)
    Y[[3, 10, 17]] = [-1, 5, 99]
    Xd, Yd = uma.asarray(X, device="cuda"), uma.asarray(Y, device="cuda")
    params, step = one_hot_step(GRAPHS)
    eparams, estep = one_hot_step(EagerCuda())
    program = uma.dprint(step, file="str").split("cuda program")[1]
    assert "one_hot_cross_entropy(" in program and "one_hot_cross_entropy_grad(" in program
    assert "log_softmax" not in program and "one_hot(" not in program
    assert step._thunk.program.num_label_checks == 0  # one_hot's labels are never checked
    values = [p.get_value() for p in params]
    for k in range(6):
        want_loss, want = numpy_one_hot_step(X, Y, values)
        loss = step(Xd, Yd)
        same_bits(loss, estep(Xd, Yd), f"loss {k}")
        np.testing.assert_allclose(host(loss), want_loss, rtol=1e-5)
        values = [p.get_value() for p in params]
        for p, q, v, w in zip(params, eparams, values, want):
            same_bits(v, q.get_value(), f"{p.name} after call {k}")
            np.testing.assert_allclose(v, w, rtol=1e-4, atol=1e-5, err_msg=f"{p.name} after call {k}")
    s = stats(step)
    assert (s["recorded"], s["replayed"], s["failed"]) == (2, 5, 0), s


@needs_gpu
def test_one_hot_closed_form_can_be_switched_off_on_cuda():
    """Mode(exclude=["closed_forms"]) keeps the product as written on cuda; its values are the
    closed form's within the accuracy rule."""
    rng = np.random.default_rng(9)
    X = uma.asarray(rng.standard_normal((16, 20)).astype(np.float32), device="cuda")
    Y = uma.asarray(rng.integers(0, 5, 16), device="cuda")
    off_params, off = one_hot_step(GRAPHS, mode={"exclude": ["closed_forms"]})
    on_params, on = one_hot_step(GRAPHS)
    eparams, eoff = one_hot_step(EagerCuda(), mode={"exclude": ["closed_forms"]})
    assert "one_hot_cross_entropy" not in uma.dprint(off, file="str")
    for k in range(4):
        a = off(X, Y)
        same_bits(a, eoff(X, Y), f"loss {k}")
        np.testing.assert_allclose(host(a), host(on(X, Y)), rtol=1e-5)
    for p, q in zip(off_params, on_params):
        np.testing.assert_allclose(p.get_value(), q.get_value(), rtol=1e-4, atol=1e-6, err_msg=p.name)


@needs_gpu
@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("label_dtype", ["int64", "int32"])
def test_one_hot_cross_entropy_kernel_on_cuda_equals_the_cpu_kernel(dtype, label_dtype):
    """The Program ops one_hot_cross_entropy and its gradient on device arrays: the cpu kernel's
    values within the accuracy rule; a label outside [0, C) is a zero row (loss 0, gradient
    row 0) exactly, NaN where the product is (a NaN upstream gradient, a NaN logit); depth 1
    against 4 classes is the product that broadcasts; another depth is the product's
    ValueError."""
    from uma.runtime.linkers.program import op_runner
    rng = np.random.default_rng(4)
    Z = rng.standard_normal((40, 4)).astype(dtype) * 3
    Y = rng.integers(0, 4, 40).astype(label_dtype)
    Y[[0, 7, 39]] = [-1, 4, 1000]
    G = rng.standard_normal(40).astype(dtype)
    G[7] = np.nan
    Z[39, 1] = np.nan
    rtol = 1e-5 if dtype == "float32" else 1e-12
    for depth in (4, 1):
        fwd = op_runner("one_hot_cross_entropy", {"depth": depth}, 2)
        bwd = op_runner("one_hot_cross_entropy_grad", {"depth": depth}, 3)
        on_host = (fwd([uma.asarray(Z), uma.asarray(Y)])[0], bwd([uma.asarray(G), uma.asarray(Z), uma.asarray(Y)])[0])
        dev = (fwd([uma.asarray(Z, device="cuda"), uma.asarray(Y, device="cuda")])[0],
               bwd([uma.asarray(G, device="cuda"), uma.asarray(Z, device="cuda"), uma.asarray(Y, device="cuda")])[0])
        for h, d in zip(on_host, dev):
            assert str(d.device).startswith("cuda")
            np.testing.assert_allclose(host(d), host(h), rtol=rtol, atol=rtol, err_msg=f"depth {depth}")
        if depth == 4:
            loss, grad = (host(v) for v in dev)
            assert loss[0] == 0 and loss[7] == 0 and (grad[0] == 0).all()
            assert np.isnan(grad[7]).all() and np.isnan(loss[39]) and np.isnan(grad[39]).all()
            assert np.isfinite(np.delete(grad, [7, 39], axis=0)).all()
    fwd = op_runner("one_hot_cross_entropy", {"depth": 3}, 2)
    with pytest.raises(ValueError, match="could not be broadcast"):
        fwd([uma.asarray(Z, device="cuda"), uma.asarray(Y, device="cuda")])


def test_cuda_linker_arguments(monkeypatch):
    """CudaLinker: a cuda device, graphs True/False/None; UMA_CUDA_GRAPHS read at compile time."""
    with pytest.raises(ValueError, match="expected a cuda device, got 'cpu'"):
        CudaLinker(device="cpu")
    for bad in ("0", 1, "false"):
        with pytest.raises(TypeError, match=f"graphs must be True, False or None, got {bad!r}"):
            CudaLinker(graphs=bad)
    assert CudaLinker(graphs=False).graphs is False
    linker = CudaLinker()
    for env, want in (("0", False), ("off", False), (" False ", False), ("no", False), ("1", True), ("on", True)):
        monkeypatch.setenv("UMA_CUDA_GRAPHS", env)
        assert linker.graphs is want, env
    monkeypatch.setenv("UMA_CUDA_GRAPHS", "maybe")
    with pytest.raises(ValueError, match="UMA_CUDA_GRAPHS must be .* got 'maybe'"):
        linker.graphs
    monkeypatch.delenv("UMA_CUDA_GRAPHS")
    assert linker.graphs is SWITCH_DEFAULTS["UMA_CUDA_GRAPHS"]
    with pytest.raises(TypeError, match="fuse must be True, False or None, got 'yes'"):
        CudaLinker(fuse="yes")
    monkeypatch.setenv("UMA_CUDA_FUSE", "off")
    assert linker.fuse is False and CudaLinker(fuse=True).fuse is True
    monkeypatch.delenv("UMA_CUDA_FUSE")
    assert linker.fuse is SWITCH_DEFAULTS["UMA_CUDA_FUSE"]
    with pytest.raises(TypeError, match="lean_replay must be True, False or None, got 1"):
        CudaLinker(lean_replay=1)
    monkeypatch.setenv("UMA_CUDA_LEAN_REPLAY", "on")
    assert linker.lean_replay is True and CudaLinker(lean_replay=False).lean_replay is False
    monkeypatch.delenv("UMA_CUDA_LEAN_REPLAY")
    assert linker.lean_replay is SWITCH_DEFAULTS["UMA_CUDA_LEAN_REPLAY"]
    x = uma.sym.vector("x")
    # a device that is not usable is refused when compiling, whatever the graph
    missing = f"cuda:{uma.cuda.device_count()}" if GPU else "cuda:0"
    with pytest.raises(RuntimeError, match=f"CudaLinker: device {missing} is not available"):
        uma.function([x], x + x, backend=CudaLinker(missing))
    assert CudaLinker.graph_stats(uma.function([x], x * 2, backend="cpu")) is None
    assert CudaLinker.graph_stats(None) is None


@needs_gpu
def test_default_linker_records_training_steps_not_one_kernel_functions(monkeypatch):
    """Graphs by default (neither the argument nor UMA_CUDA_GRAPHS): a Program of fewer than
    AUTO_GRAPH_MIN_STEPS steps runs op by op, a training step records; an explicit switch
    records any Program."""
    from uma.runtime.linkers.cuda.linker import AUTO_GRAPH_MIN_STEPS
    monkeypatch.delenv("UMA_CUDA_GRAPHS", raising=False)
    x = uma.sym.vector("x", dtype="float32")
    small = uma.function([x], x * 3, backend=CudaLinker())
    assert small._thunk.program.num_steps < AUTO_GRAPH_MIN_STEPS
    assert not small._thunk.program.graphs
    assert GRAPHS.graphs and uma.function([x], x * 3, backend=GRAPHS)._thunk.program.graphs
    X, Y = batch(32)
    params, step = mlp(CudaLinker())
    for _ in range(4):
        step(X, Y)
    s = stats(step)
    assert s is not None and s["recorded"] >= 1 and s["replayed"] >= 2, s
