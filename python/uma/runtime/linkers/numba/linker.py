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
without copies, as the ``numpy`` backend's; an n-d result of a compiled run that the call does
not return as it is (an update, a value a later step reads) is a read-only array, as the
compiled runs take every argument (outputs returned to the caller are writeable). After the
first call with each combination of input shapes, a call is one generated Python function
calling the compiled runs directly (``walk.by_signature``), with 0-d values passed and
returned as numbers. Shapes that do not fit and cross-entropy labels out
of range are found on the ``numpy`` table, which raises uma's own error, before any update is
written. Numba computes with its own loops
(sums in order, BLAS from SciPy for matrix products), so float results may differ from
uma's ``cpu`` backend in the last bits. Registered as ``"numba"`` when Numba is installed; it
is imported when the first function is compiled for it.
"""
from __future__ import annotations

import threading

import numpy as np

from ....graph.fgraph import alias_root
from ..numpy import NumpyLinker
from ..numpy.linker import _fresh, _ndarray_result
from ..numpy.dispatch import numpy_dtype, numpy_impl
from ..walk import by_signature, runs, straight_line
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


def _source(nodes, codes, in_vars, out_vars, frozen):
    """The Python source of ``run(*in_vars)`` computing ``nodes``, in the calling convention of
    a compiled run: a 0-d input comes as a scalar (made a 0-d array first thing), a 0-d result
    goes back as a scalar (Numba returns a number faster than an array), a result in ``frozen``
    goes back read-only (``frozen``), then a flag per node with a domain check (False: the
    node's inputs are outside it). A single result without flags is returned as it is, more
    as a tuple."""
    names = {v: f"a{k}" for k, v in enumerate(in_vars)}
    lines = [f"def run({', '.join(names[v] for v in in_vars)}):"]
    lines += [f"    {names[v]} = np.asarray({names[v]})" for v in in_vars if v.type.ndim == 0]
    flags = []
    for k, (node, code) in enumerate(zip(nodes, codes)):
        args = [names[v] for v in node.inputs]
        check = getattr(code, "check", None)
        if check is not None:
            flags.append(f"f{k}")
            lines.append(f"    f{k} = {check(args)}")
        names[node.outputs[0]] = f"v{k}"
        lines.append(f"    v{k} = {code(args)}")
    results = [f"np.asarray({names[v]})[()]" if v.type.ndim == 0 else f"frozen({names[v]})" if v in frozen
               else names[v] for v in out_vars] + flags
    lines.append(f"    return {results[0]}" if len(results) == 1 else f"    return ({''.join(r + ', ' for r in results)})")
    return "\n".join(lines) + "\n"


_MAX_SHAPES = 64  # input shapes remembered per compiled run (then forgotten and checked again)


def _run(nodes, codes, in_vars, consts, out_vars, frozen, read_only):
    """``impl(values of in_vars + consts) -> values of out_vars`` (module documentation), and
    ``impl.inline``, the same as lines of generated code (walk.straight_code).

    ``consts``: the constants the run reads (passed after ``in_vars``); ``frozen``: the results
    it returns read-only (those not handed to the caller as they are); ``read_only``: the
    variables whose values are read-only at every call (results frozen by earlier runs).

    Numba-compiled code must not raise: an exception inside it (a shape mismatch in a NumPy
    function, an index error) leaks references to the arguments, and so the memory they view.
    So the run goes to Numba only for input shapes it has already run with: the first call
    with new shapes runs the nodes on the ``numpy`` table, which raises uma's error for shapes
    that do not fit (the shapes of everything a run computes follow from its input shapes),
    and compiles the run for the next calls (without running it), checking the dtypes of
    its results.
    Domain checks the nodes carry (cross-entropy labels) are flags the compiled run returns; a
    false one sends the call to the numpy table, for uma's error. Where Numba cannot compile
    the run for the values' types, the numpy table runs it from then on.

    Arguments go to the compiled run as scalars (0-d values) or read-only arrays: Numba
    compiles a function once per argument types, the read-only flag is part of them, and
    arguments filtered from the host are read-only views; a writeable array (an argument, a
    value the numpy table computed) is passed as a read-only view of it (the compiled code
    never writes into its arguments)."""
    args = list(in_vars) + list(consts)
    state = [_compiled(_source(nodes, codes, args, out_vars, frozen))]
    fallback = [(numpy_impl(n.op, n), n) for n in nodes]
    numba_error = _numba().core.errors.NumbaError
    n_out = len(out_vars)
    n_results = n_out + sum(getattr(c, "check", None) is not None for c in codes)
    shapes_seen = set()
    # a constant's argument, made once: a scalar (0-d) or a read-only array
    const_args = {c: np.asarray(c.value)[()] if c.type.ndim == 0 else _read_only(c.value) for c in consts}
    namespaces = []  # (globals, name): where generated code calls the compiled run

    def on_numpy(values):
        env = dict(zip(args, values))
        with np.errstate(all="ignore"):
            for fn, node in fallback:
                env.update(zip(node.outputs, fn([env[v] for v in node.inputs])))
        return [env[v] for v in out_vars]

    def no_numba(*_):
        raise numba_error("uma numba backend: this run runs on the numpy table")

    def stop():
        """Numba cannot compile the run: the numpy table from now on."""
        state[0] = None
        for ns, name in namespaces:
            ns[name] = no_numba

    def give_up(values):
        stop()
        return on_numpy(values)

    def arguments(ins, ns, p):
        """The expressions of the compiled run's arguments made from the values named ``ins``
        (in ``ns``, the generated function's globals, with names starting with ``p``)."""
        call = []
        for k, (v, n) in enumerate(zip(args, ins)):
            if v in const_args:
                ns[f"{p}k{k}"] = const_args[v]
                call.append(f"{p}k{k}")
            elif v.type.ndim == 0:
                call.append(f"{n}[()]")
            elif v in read_only:
                call.append(n)
            else:
                call.append(f"(_ro({n}) if {n}.flags.writeable else {n})")
        ns["_ro"] = _read_only
        return call

    def inline(ins, outs, ns):
        """Lines computing the values named ``outs`` from those named ``ins`` (the values of
        ``in_vars + consts``), calling the compiled run through ``ns`` (the generated
        function's globals)."""
        p = f"_n{len(ns)}_"
        ns.update({p + "j": no_numba if state[0] is None else state[0], p + "give_up": give_up,
                   p + "numpy": on_numpy, "NumbaError": numba_error, "_arr": np.array})
        namespaces.append((ns, p + "j"))
        call = arguments(ins, ns, p)
        values = f"[{', '.join(ins)}]"
        targets = "".join(o + ", " for o in outs) + "= " if outs else ""
        item = (lambda k: "r") if n_results == 1 else (lambda k: f"r[{k}]")
        assign = []
        for k, (v, o) in enumerate(zip(out_vars, outs)):
            if v.type.ndim == 0:  # the compiled run returned a number
                ns[f"{p}d{k}"] = numpy_dtype(v.type.dtype)
                assign.append(f"{o} = _arr({item(k)}, {p}d{k})")
            else:
                assign.append(f"{o} = {item(k)}")
        code = ["try:", f"    r = {p}j({', '.join(call)})", "except NumbaError:",
                f"    {targets}{p}give_up({values})", "else:"]
        if n_results > n_out:  # a domain check failed: the numpy table raises uma's error
            code += [f"    if {' and '.join(item(k) for k in range(n_out, n_results))}:"]
            code += ["        " + a for a in assign or ["pass"]]
            code += ["    else:", f"        {targets}{p}numpy({values})"]
        else:
            code += ["    " + a for a in assign or ["pass"]]
        return code

    def generated(name, body, returns):
        """A generated ``name(values) -> returns``, ``body(ins, namespace)`` giving its lines."""
        ns = {}
        ins = [f"v{k}" for k in range(len(args))]
        src = [f"def {name}(values):"]
        if args:
            src.append(f"    {''.join(n + ', ' for n in ins)}= values")
        src += ["    " + line for line in body(ins, ns)]
        src.append(f"    return {returns}")
        exec(compile("\n".join(src) + "\n", f"<uma numba {name}>", "exec"), ns)
        return ns[name]

    out_names = [f"o{k}" for k in range(n_out)]
    call = generated("call", lambda ins, ns: inline(ins, out_names, ns), f"[{', '.join(out_names)}]")
    convert = generated("convert", lambda ins, ns: [f"args = ({''.join(a + ', ' for a in arguments(ins, ns, ''))})"],
                        "args")
    want = [(v, numpy_dtype(v.type.dtype), v.type.ndim) for v in out_vars]

    def prepare(values):
        """Compiles the run now for the types of ``values`` as the next calls pass them
        (read-only arrays, numbers), and checks the dtype and ndim of each result it gives
        against the graph's: ``RuntimeError`` naming the op where they differ (a bug in the
        dispatch table; the next calls' results are not checked)."""
        numba = _numba()
        from numba.np.numpy_support import as_dtype
        try:
            sig = tuple(numba.typeof(a) for a in convert(values))
            state[0].compile(sig)
            rt = state[0].overloads[sig].signature.return_type
        except numba_error:
            stop()
            return
        got = rt.types if n_results > 1 else (rt,)
        for (v, dt, ndim), t in zip(want, got):
            t_dt, t_ndim = (t.dtype, t.ndim) if isinstance(t, numba.core.types.Array) else (t, 0)
            t_dt = as_dtype(t_dt)
            if t_dt != dt or t_ndim != ndim:
                raise RuntimeError(f"{v.owner.op}: Numba computes dtype {t_dt} with {t_ndim} dimension(s), but the "
                                   f"graph inferred {v.type.dtype} with {ndim} (a bug in uma's numba linker)")

    def impl(values):
        if state[0] is None:
            return on_numpy(values)
        shapes = tuple(v.shape for v in values)
        if shapes not in shapes_seen:
            results = on_numpy(values)  # uma's errors for shapes that do not fit
            prepare(values)  # compiled now, its result types checked
            if len(shapes_seen) >= _MAX_SHAPES:
                shapes_seen.clear()
            shapes_seen.add(shapes)
            return results
        return call(values)

    impl.compiled = lambda: state[0]  # the dispatcher in use (None: the numpy table)
    impl.inline = inline  # by_signature's calls after the first: no shape check
    return impl


class NumbaLinker(NumpyLinker):
    """Compiles graphs with ``numba.njit``; values are ``numpy.ndarray`` s in residency
    ``"numba"`` (module documentation)."""

    name = "numba"
    residency = "numba"

    def compile(self, fgraph):
        nodes = fgraph.toposort()
        copies = fgraph.outputs_needing_copy()
        # the results handed to the caller as they are (or views of them) stay writeable; a
        # compiled run returns every other n-d result read-only, so passing it back in needs no
        # read-only view
        returned = {alias_root(o) for k, o in enumerate(fgraph.outputs)
                    if k not in fgraph.update_mapping and k not in copies}
        read_only = set()
        steps, compiled, numpy_steps = [], [], []
        for run_nodes, codes, in_vars, out_vars, consts in runs(fgraph, [numba_code(n.op, n) for n in nodes]):
            if codes is None:
                node = run_nodes[0]
                steps.append((numpy_impl(node.op, node), node, in_vars, out_vars))
                numpy_steps.append(node.op)
                continue
            frozen = {v for v in out_vars if v.type.ndim > 0 and v not in returned}
            impl = _run(run_nodes, codes, in_vars, consts, out_vars, frozen, frozenset(read_only))
            read_only |= frozen
            steps.append((impl, run_nodes[-1], in_vars + consts, out_vars))
            compiled.append(impl)
        converted = []
        run = straight_line(fgraph.inputs, fgraph.outputs, steps, copies, constant=lambda c: _read_only(c.value), copy=_fresh,
                            output=lambda v: _ndarray_result(v, converted))

        def checked(values):
            converted.clear()
            with np.errstate(all="ignore"):
                return run(values)

        # after a signature's checked call, every compiled run has seen its input shapes: the
        # next calls run generated code calling the compiled runs directly, with no shape check
        code = dict(inputs=fgraph.inputs, outputs=fgraph.outputs, steps=steps, copies=copies,
                    constant=lambda c: _read_only(c.value), copy=_fresh)
        wrap = None
        if numpy_steps:  # NumPy's warnings are uma's silent IEEE results
            def wrap(code):
                def fast(values):
                    with np.errstate(all="ignore"):
                        return code(values)
                return fast
        ndarray, dtypes = np.ndarray, [numpy_dtype(v.type.dtype) for v in fgraph.inputs]

        def native_args(args):
            """``numpy.ndarray`` s of the inputs' dtypes (shapes: checked once per signature)."""
            for a, dt in zip(args, dtypes):
                if type(a) is not ndarray or a.dtype != dt:
                    return False
            return True

        thunk = by_signature(fgraph, checked, code=code, wrap=wrap, native_args=native_args,
                             settled=lambda: not converted)

        thunk.compiled_runs = len(compiled)
        thunk.runs = compiled  # each run's impl; run.compiled() is its Numba dispatcher or None
        thunk.numpy_steps = numpy_steps
        return thunk
