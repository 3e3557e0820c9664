"""The ``numba`` linker: compiles graphs with ``numba.njit``; values are ``numpy.ndarray`` s.

The graph's nodes that Numba computes as uma does (its dispatch table, ``dispatch.py``: float32
and float64 arithmetic, reductions, matrix products, softmax and the cross-entropy, shapes)
are written out as the Python source of one function per maximal run of such nodes in
execution order, compiled with ``numba.njit`` at its first call: a training step of the usual
ops is one compiled function. Every other node runs with the ``numpy`` backend's table
(NumPy where it computes as uma does, uma's eager op elsewhere) between compiled runs, and so
does a run's first call with new input shapes (``_run``: compiled code never raises).
Compiled runs are cached by their source for the life of the process, so the same graph
compiled twice is compiled by Numba once per argument types.

Values live in residency ``"numba"`` as ``numpy.ndarray`` s, converted to and from the host
without copies, as the ``numpy`` backend's. Shapes that do not fit and cross-entropy labels out
of range are found on the ``numpy`` table, which raises uma's own error, before any update is
written. Numba computes with its own loops
(sums in order, BLAS from SciPy for matrix products), so float results may differ from
uma's ``cpu`` backend in the last bits. Registered as ``"numba"`` when Numba is installed; it
is imported when the first function is compiled for it.
"""
from __future__ import annotations

import threading

import numpy as np

from ..numpy import NumpyLinker
from ..numpy.linker import _fresh, _ndarray_result
from ..numpy.dispatch import numpy_dtype, numpy_impl
from ..walk import by_signature, runs, straight_code, straight_line
from .dispatch import _numba, helpers, numba_code

__all__ = ["NumbaLinker"]

_COMPILED: dict = {}  # source -> numba dispatcher (one per distinct run, for the process)
_LOCK = threading.Lock()


def _compiled(source):
    """The njit dispatcher of the function ``run`` that ``source`` defines (cached)."""
    with _LOCK:
        fn = _COMPILED.get(source)
        if fn is None:
            namespace = {"np": np, **helpers()}
            exec(compile(source, "<uma numba run>", "exec"), namespace)
            fn = _COMPILED[source] = _numba().njit(cache=False, error_model="numpy")(namespace["run"])
        return fn


def _read_only(a):
    """``a``, or a read-only view of it: Numba compiles a function once per argument types, and
    the read-only flag is part of them (arguments filtered from the host are read-only views,
    values computed here are not), so every argument is passed read-only (the compiled code
    never writes into its arguments)."""
    if a.flags.writeable:
        a = a.view()
        a.flags.writeable = False
    return a


def _source(nodes, codes, in_vars, out_vars):
    """The Python source of ``run(*in_vars) -> (*out_vars, *flags)`` computing ``nodes``: a flag
    per node with a domain check (False: the node's inputs are outside it)."""
    names = {v: f"a{k}" for k, v in enumerate(in_vars)}
    lines = [f"def run({', '.join(names[v] for v in in_vars)}):"]
    flags = []
    for k, (node, code) in enumerate(zip(nodes, codes)):
        args = [names[v] for v in node.inputs]
        check = getattr(code, "check", None)
        if check is not None:
            flags.append(f"f{k}")
            lines.append(f"    f{k} = {check(args)}")
        names[node.outputs[0]] = f"v{k}"
        lines.append(f"    v{k} = {code(args)}")
    lines.append(f"    return ({''.join(x + ', ' for x in [names[v] for v in out_vars] + flags)})")
    return "\n".join(lines) + "\n"


_MAX_SHAPES = 64  # input shapes remembered per compiled run (then forgotten and checked again)


def _run(nodes, codes, in_vars, out_vars):
    """``impl(values of in_vars) -> values of out_vars`` (module documentation).

    Numba-compiled code must not raise: an exception inside it (a shape mismatch in a NumPy
    function, an index error) leaks references to the arguments, and so the memory they view.
    So the run goes to Numba only for input shapes it has already run with: the first call
    with new shapes runs the nodes on the ``numpy`` table, which raises uma's error for shapes
    that do not fit (the shapes of everything a run computes follow from its input shapes).
    Domain checks the nodes carry (cross-entropy labels) are flags the compiled run returns; a
    false one sends the call to the numpy table, for uma's error. Where Numba cannot compile
    the run for the values' types, the numpy table runs it from then on."""
    state = [_compiled(_source(nodes, codes, in_vars, out_vars))]
    fallback = [(numpy_impl(n.op, n), n) for n in nodes]
    numba_error = _numba().core.errors.NumbaError
    n_out = len(out_vars)
    shapes_seen = set()

    def on_numpy(values):
        env = dict(zip(in_vars, values))
        with np.errstate(all="ignore"):
            for fn, node in fallback:
                env.update(zip(node.outputs, fn([env[v] for v in node.inputs])))
        return [env[v] for v in out_vars]

    def impl(values):
        jitted = state[0]
        if jitted is None:
            return on_numpy(values)
        shapes = tuple(v.shape for v in values)
        if shapes not in shapes_seen:
            results = on_numpy(values)  # uma's errors for shapes that do not fit
            if len(shapes_seen) >= _MAX_SHAPES:
                shapes_seen.clear()
            shapes_seen.add(shapes)
            return results
        try:
            results = jitted(*map(_read_only, values))
        except numba_error:  # Numba cannot compile the run for these types: the numpy table from now on
            state[0] = None
            return on_numpy(values)
        if not all(results[n_out:]):
            return on_numpy(values)  # a domain check failed: uma's error
        return list(results[:n_out])

    def fast(values):
        """``impl`` for input shapes it has run with (by_signature's calls after the first):
        no shape check."""
        jitted = state[0]
        if jitted is None:
            return on_numpy(values)
        try:
            results = jitted(*map(_read_only, values))
        except numba_error:
            state[0] = None
            return on_numpy(values)
        if not all(results[n_out:]):
            return on_numpy(values)
        return list(results[:n_out])

    impl.compiled = lambda: state[0]  # the dispatcher in use (None: the numpy table)
    impl.fast = fast
    return impl


class NumbaLinker(NumpyLinker):
    """Compiles graphs with ``numba.njit``; values are ``numpy.ndarray`` s in residency
    ``"numba"`` (module documentation)."""

    name = "numba"
    residency = "numba"

    def compile(self, fgraph):
        nodes = fgraph.toposort()
        steps, compiled, numpy_steps = [], [], []
        for run_nodes, codes, in_vars, out_vars, consts in runs(fgraph, [numba_code(n.op, n) for n in nodes]):
            if codes is None:
                node = run_nodes[0]
                steps.append((numpy_impl(node.op, node), node, in_vars, out_vars))
                numpy_steps.append(node.op)
                continue
            args = in_vars + consts
            impl = _run(run_nodes, codes, args, out_vars)
            steps.append((impl, run_nodes[-1], args, out_vars))
            compiled.append(impl)
        copies = fgraph.outputs_needing_copy()
        converted = []
        run = straight_line(fgraph.inputs, fgraph.outputs, steps, copies, constant=lambda c: _read_only(c.value), copy=_fresh,
                            output=lambda v: _ndarray_result(v, converted))
        # after a signature's checked call, every compiled run has seen its input shapes: its
        # shape check is skipped
        fast_steps = [(getattr(impl, "fast", impl), node, ins, outs) for impl, node, ins, outs in steps]
        code = straight_code(fgraph.inputs, fgraph.outputs, fast_steps, copies, constant=lambda c: _read_only(c.value),
                             copy=_fresh)

        def checked(values):
            converted.clear()
            with np.errstate(all="ignore"):
                return run(values)

        if numpy_steps:  # NumPy's warnings are uma's silent IEEE results
            def fast(values):
                with np.errstate(all="ignore"):
                    return code(values)
        else:  # compiled runs only (each takes its first shapes to NumPy under errstate itself)
            fast = code
        ndarray, dtypes = np.ndarray, [numpy_dtype(v.type.dtype) for v in fgraph.inputs]

        def native_args(args):
            """``numpy.ndarray`` s of the inputs' dtypes (shapes: checked once per signature)."""
            for a, dt in zip(args, dtypes):
                if type(a) is not ndarray or a.dtype != dt:
                    return False
            return True

        thunk = by_signature(fgraph, checked, fast, native_args=native_args, settled=lambda: not converted)

        thunk.compiled_runs = len(compiled)
        thunk.runs = compiled  # each run's impl; run.compiled() is its Numba dispatcher or None
        thunk.numpy_steps = numpy_steps
        return thunk
