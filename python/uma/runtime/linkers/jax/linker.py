"""The ``jax`` linker: compiles graphs with ``jax.jit``; values are ``jax.Array`` s on JAX's CPU
(backend ``jax``) or on a GPU (``jax-cuda``, where JAX and uma both have one).

The graph's nodes that JAX computes as uma does (its dispatch table) are compiled as one
``jax.jit`` function per maximal run of such nodes in execution order: the whole graph when
every node has a JAX implementation, as a training step of the usual ops does. A node without
one runs uma's eager op on the host between two jitted segments, on zero-copy views of the
JAX values. Every call runs with ``jax.enable_x64(True)``, so float64 stays float64 (never a
silent float32) without changing the process's JAX configuration.

Values live in residency ``"jax"`` (``"jax-cuda:N"`` on a GPU): a shared variable that a
``jax`` function updated keeps its value as a ``jax.Array`` until another backend, or
``get_value``, reads it. Conversions use DLPack: JAX -> uma shares memory (uma sees it
read-only, as JAX arrays are immutable); uma -> JAX shares memory where JAX accepts the
buffer's alignment (64 bytes on the host, as uma allocates) and otherwise copies it once into
uma's aligned memory, which JAX then shares. On a GPU both directions stay on the device: a switch
between ``jax-cuda`` and uma's ``cuda`` (or ``torch-cuda``) never goes through host memory.
Every value, constant and computation of a function is placed on the linker's device, whatever
JAX's default device is.
A graph that is one run is one jitted function of the arguments and the shared values,
checked when JAX traces (once per input signature), with the updated shared values donated
where safe and no wait for the computation (``_whole_graph``); arguments filtered from the
host are copies (``argument_filter``). For a graph of several runs an argument may share the
caller's memory, so that call returns only when its computations are done (the caller may then
change that memory), and an output that is an argument's buffer is copied; other outputs are
JAX's own immutable arrays.

XLA on the CPU flushes subnormal floats to zero, so results that would be subnormal are 0 on
this backend (uma's other backends keep them), and XLA's algebraic simplifier rewrites some
expressions exactly as written elsewhere would not round or overflow: ``log(exp(x))`` is
``x``, ``x * c / c`` is ``x``, ``x + 0`` keeps ``-0.0``, and ``one_hot(y) * z`` is a select,
so a ``-inf`` off the label gives no NaN (as plain ``jax.jit`` does). The
backend uses XLA's threads, not uma's thread policy (``uma.set_num_threads``).

The softmax cross-entropy's label check runs inside the jitted code as a flag; a bad label
raises uma's ``ValueError`` after the segment and before any update is written. Registered as
``"jax"`` when JAX is installed; JAX is imported when the first function is compiled for it.
"""
from __future__ import annotations

import functools

import numpy as np

from ....graph import ops as o
from ....graph.basic import Constant, infer_node_shape
from ...linker import Linker, distinct, framework_device
from ..walk import has_perform, runs, straight_line
from .dispatch import _jax, jax_impl, label_check

__all__ = ["JaxLinker"]


def _uma():
    import uma
    return uma


#: JAX on the CPU takes a host buffer through DLPack without copying only at this alignment.
_JAX_HOST_ALIGNMENT = 64


def _to_jax(a, device):
    """A ``jax.Array`` on JAX device ``device`` of ``uma.Array`` ``a``: DLPack (shared where JAX
    takes the buffer and ``a`` is on that device), else a copy (of host memory JAX does not
    take, a misaligned NumPy buffer: uma's copy, which JAX then shares). Bool memory is made 0/1 bytes
    first: uma reads any nonzero byte as True (DESIGN.md, "bool memory"), XLA's bool operations
    use the bytes as they are."""
    jax = _jax()
    if a.dtype.name == "bool":
        a = _uma().not_equal(a, False)
    if a.device.type == "cpu" and a._data_ptr % _JAX_HOST_ALIGNMENT:
        a = _uma().array(a)  # JAX would copy it itself, more slowly: uma's copy is aligned, and shared
    try:
        x = jax.dlpack.from_dlpack(a)
    except Exception:  # a layout JAX does not import: one copy
        return jax.device_put(np.asarray(a.to_device("cpu")), device)
    return x if x.devices() == {device} else jax.device_put(x, device)


def _host_step(node, device):
    """``node`` by uma's eager op (on the host, or on the GPU for ``jax-cuda``), on zero-copy
    views of the JAX values."""
    perform, from_dlpack = node.op.perform, _uma().from_dlpack

    def impl(values):
        return [_to_jax(r, device) for r in perform(node, [from_dlpack(v) for v in values])]

    return impl


def _segment(nodes, fns, in_vars, out_vars, constants, device):
    """One jitted function over ``nodes`` (execution order; ``fns`` their traceable
    implementations): ``impl(values of in_vars) -> values of out_vars``, raising uma's
    ValueError for a bad cross-entropy label after the jitted call."""
    jax, uma = _jax(), _uma()
    checks = [(node, *label_check(node)) for node in nodes
              if isinstance(node.op, (o.SoftmaxCrossEntropy, o.SoftmaxCrossEntropyGrad))]
    have = set(in_vars) | set(out_vars)
    outs = list(out_vars) + [v for v in distinct(node.inputs[k] for node, k, _ in checks) if v not in have]

    def run(*vals):
        env = dict(zip(in_vars, vals))
        env.update(constants)
        flags = []
        for node, fn in zip(nodes, fns):
            ins = [env[v] for v in node.inputs]
            for n, k, flag in checks:
                if n is node:
                    flags.append(flag(ins))
            env.update(zip(node.outputs, fn(ins)))
        if not flags:
            return tuple(env[v] for v in outs), None, ()
        # one flag for the segment: one device-to-host read per call
        return (tuple(env[v] for v in outs), jax.numpy.any(jax.numpy.stack([bad for bad, _ in flags])),
                tuple(c for _, c in flags))

    # results on the linker's device, also where no argument says where (JAX's default device)
    jitted = jax.jit(run, out_shardings=jax.sharding.SingleDeviceSharding(device))
    check = uma._core._check_labels

    def impl(values):
        results, any_bad, classes = jitted(*values)
        if any_bad is not None and np.asarray(any_bad):
            known = dict(zip(in_vars, values))
            known.update(zip(outs, results))
            for (node, k, _), c in zip(checks, classes):  # uma's ValueError for the first bad label
                check(uma.from_dlpack(known[node.inputs[k]]).to_device("cpu"), int(c), "softmax_cross_entropy")
        return list(results[:len(out_vars)])

    return impl


class JaxLinker(Linker):
    """Compiles graphs with ``jax.jit``; values are ``jax.Array`` s (module documentation).

    ``JaxLinker()`` is backend ``jax``: JAX's CPU, residency ``"jax"``.
    ``JaxLinker("cuda:N")`` is backend ``jax-cuda`` (``jax-cuda:N`` for N > 0): JAX's N-th GPU,
    residency ``"jax-cuda:N"``, whose values convert to and from uma's ``cuda:N`` on the
    device. ``ValueError`` for another device; ``RuntimeError`` at the first compile when JAX
    has no such GPU."""

    dispatch = jax_impl
    #: updated shared values are donated to XLA (see :func:`_whole_graph`)
    consumes_stored_values = True

    def __init__(self, device=None):
        self.device, self.name, self.residency = framework_device("jax", device)
        self._jax_device = None

    def jax_device(self):
        """The ``jax.Device`` this linker's values live on."""
        if self._jax_device is None:
            jax = _jax()
            if self.device is None:
                self._jax_device = jax.devices("cpu")[0]
            else:
                index = int(self.device.split(":")[1])
                try:
                    gpus = jax.devices("gpu")
                except RuntimeError:
                    gpus = []
                if index >= len(gpus):
                    raise RuntimeError(f"backend {self.name!r}: JAX has {len(gpus)} GPU(s), so none for "
                                       f"{self.device} (a CUDA build of jaxlib is needed, e.g. jax[cuda13])")
                self._jax_device = gpus[index]
        return self._jax_device

    def is_native(self, value, type):
        jax = _jax()
        return (isinstance(value, jax.Array) and value.dtype == _np_dtype(type.dtype)
                and type.is_compatible_shape(tuple(value.shape))
                and value.devices() == {self.jax_device()})

    def input_filter(self, value, type):
        with _jax().enable_x64(True):
            return _to_jax(value if isinstance(value, _uma().Array) else _uma().asarray(value), self.jax_device())

    def argument_filter(self, value, type):
        """A JAX-owned copy of a call's argument (never a view of the caller's memory, which
        the caller may change once the call returns): calls need not wait for their
        computations."""
        with _jax().enable_x64(True):
            return _to_jax_copy(value if isinstance(value, _uma().Array) else _uma().asarray(value),
                                self.jax_device())

    def output_filter(self, value, type):
        return _uma().from_dlpack(value)

    def unsupported(self, fgraph) -> list:
        """Only ops without a JAX implementation and without ``perform``."""
        return distinct(n.op for n in fgraph.toposort() if jax_impl(n.op, n) is None and not has_perform(n.op))

    def compile(self, fgraph):
        jax = _jax()
        with jax.enable_x64(True):
            return self._compile(fgraph)

    def _compile(self, fgraph):
        dev = self.jax_device()
        groups = runs(fgraph, [jax_impl(n.op, n) for n in fgraph.toposort()])
        if len(groups) == 1 and groups[0][1] is not None:
            return _whole_graph(fgraph, *groups[0], dev)

        def constant(c):
            return _constant(c, dev)

        steps, segments, host_steps = [], 0, []
        for nodes, fns, in_vars, out_vars, consts in groups:
            if fns is None:
                steps.append((_host_step(nodes[0], dev), nodes[0], in_vars, out_vars))
                host_steps.append(nodes[0].op)
                continue
            constants = {c: constant(c) for c in consts}
            steps.append((_segment(nodes, fns, in_vars, out_vars, constants, dev), nodes[-1], in_vars, out_vars))
            segments += 1
        run = straight_line(fgraph.inputs, fgraph.outputs, steps, set(), constant=constant, copy=None,
                            output=_result_check)

        jax = _jax()

        def thunk(values):
            with jax.enable_x64(True):
                outs = run(values)
                # Arguments may be zero-copy views of the caller's memory, which the caller may
                # change once the call returns: the call waits for its computations, and copies
                # an output that is an argument's buffer (an identity such as x.T of a vector).
                jax.block_until_ready(outs)
                args = {v.unsafe_buffer_pointer() for v in values if isinstance(v, jax.Array) and v.size}
                return [jax.numpy.array(o, copy=True) if o.size and o.unsafe_buffer_pointer() in args else o
                        for o in outs]

        thunk.segments = segments
        thunk.host_steps = host_steps
        return thunk


def _to_jax_copy(a, device):
    """A ``jax.Array`` on ``device`` holding a copy of ``uma.Array`` ``a`` in memory JAX owns."""
    jax = _jax()
    if a.dtype.name == "bool":
        a = _uma().not_equal(a, False)
    if a.device == _uma().Device("cpu"):
        return jax.device_put(np.array(a, copy=True), device)
    return jax.numpy.array(_to_jax(a, device), copy=True)


def _constant(c, device):
    """The ``jax.Array`` of graph constant ``c``, in memory JAX owns: jitted functions keep their
    constants in JAX's caches, which outlive uma's objects at interpreter exit, so they must not
    hold uma memory."""
    return _to_jax_copy(_uma().asarray(c.value), device)


class _UpdateMisfit(Exception):
    """Raised while the donating function traces a signature whose update does not fit its
    variable's type (see :func:`_whole_graph`)."""


def _whole_graph(fgraph, nodes, fns, in_vars, out_vars, consts, device):
    """The thunk of a graph whose every node JAX computes: one ``jax.jit`` function of all the
    graph's inputs (the explicit inputs, then the shared values) returning every output and
    update (and, where the graph has cross-entropy nodes, the label flag).

    What uma checks per call on the other paths is checked here when JAX traces, which it does
    once per input signature (dtypes, shapes, placement): the inputs' shapes against their
    types, uma's shape inference of every node (``ValueError`` naming the op), the dtype of every
    result, and the type of every update (``checks_updates``: the C++ call then does not
    describe the updates again; a signature whose updates do not fit turns it off for good, and
    the call's own checks raise the error). Results that would be an input's buffer or another
    result's are copies, so no returned or stored value aliases another.

    The shared values that are updated are donated to XLA (``donate_argnums``: the old value
    is dead once the update is written) unless the graph has a label check, which can fail
    after the computation while the old values must stay, or the signature's updates do not
    fit their variables' types (found while tracing, before anything runs: that call runs
    without donating, and the C++ call's check raises with the old values kept); JAX itself keeps a buffer that is
    also exported (a host view of it through DLPack, as ``get_value(borrow=True)`` returns).
    A call does not wait for its computations, as a jitted JAX call does not: the arguments are
    the caller's ``jax.Array`` s or copies (``argument_filter``), and a shared value's host
    memory that a JAX copy views is never written in place while that view exists (the DLPack
    capsule holds a reference to it: Note [Updates in place])."""
    jax, uma = _jax(), _uma()
    jnp = jax.numpy
    inputs, outputs = list(fgraph.inputs), list(fgraph.outputs)
    constants = {c: _constant(c, device) for c in consts}
    for v in fgraph.outputs:  # a constant that is an output (and no node's input)
        if isinstance(v, Constant) and v not in constants:
            constants[v] = _constant(v, device)
    checks = [(node, *label_check(node)) for node in nodes
              if isinstance(node.op, (o.SoftmaxCrossEntropy, o.SoftmaxCrossEntropyGrad))]
    update_of = dict(fgraph.update_mapping)  # output index -> input index
    wants = [_np_dtype(v.type.dtype) for v in outputs]

    def run(*vals, donating=False):
        for v, x in zip(inputs, vals):
            if not v.type.is_compatible_shape(tuple(x.shape)) or x.dtype != _np_dtype(v.type.dtype):
                raise TypeError(f"jax: a value of {x.dtype}{tuple(x.shape)} for {v.type}")
        shapes = dict(zip(inputs, (tuple(x.shape) for x in vals)))
        shapes.update((c, tuple(c.value.shape)) for c in consts)
        env = dict(zip(inputs, vals))
        env.update(constants)
        flags = []
        for node, fn in zip(nodes, fns):
            try:  # uma's shape rule: a mismatch is its ValueError naming the op (or its composed function)
                shapes.update(zip(node.outputs, infer_node_shape(node, [shapes[i] for i in node.inputs])))
            except NotImplementedError:
                pass
            ins = [env[v] for v in node.inputs]
            for n, k, flag in checks:
                if n is node:
                    flags.append((*flag(ins), ins[k]))  # (bad, classes, labels)
            env.update(zip(node.outputs, fn(ins)))
        results, seen = [], {id(x) for x in vals} | {id(c) for c in constants.values()}
        for k, v in enumerate(outputs):
            r = env[v]
            if r.dtype != wants[k]:
                raise RuntimeError(f"{v.owner.op if v.owner else v}: JAX returned dtype {r.dtype}, but the graph "
                                   f"inferred {v.type.dtype} (a bug in uma's jax linker)")
            if id(r) in seen:  # an input, a constant or another result: a buffer of its own
                r = jnp.array(r, copy=True)
            seen.add(id(r))
            ii = update_of.get(k)
            if ii is not None and not inputs[ii].type.is_compatible_shape(tuple(r.shape)):
                thunk.checks_updates = False  # the call's own checks name the problem
                if donating:  # nothing has run: the call runs without donating, then raises
                    raise _UpdateMisfit()
            results.append(r)
        if not flags:
            return tuple(results)
        # one flag for the graph: one device-to-host read per call
        return (tuple(results), jnp.any(jnp.stack([bad for bad, _, _ in flags])),
                tuple((c, y) for _, c, y in flags))

    donate = () if checks else tuple(sorted(set(update_of.values())))
    # results on the linker's device, also where no argument says where (JAX's default device)
    sharding = jax.sharding.SingleDeviceSharding(device)
    jitted = jax.jit(functools.partial(run, donating=bool(donate)), donate_argnums=donate, out_shardings=sharding)
    # XLA on a GPU refuses to donate a buffer that a DLPack view holds (a value shared with uma
    # or torch since a switch of residency): such a call runs without donation, and its results,
    # JAX's own, are donated by the next ones. The refusal comes before anything runs.
    keep = jax.jit(run, out_shardings=sharding) if donate else jitted
    x64 = jax.config
    check = uma._core._check_labels

    def launch(values):
        try:
            return jitted(*values)
        except _UpdateMisfit:  # raised while tracing: keep the old values for the call's own error
            return keep(*values)
        except ValueError as e:
            if keep is jitted or "external reference" not in str(e):
                raise
            return keep(*values)

    def call(values):
        if x64.jax_enable_x64:
            return launch(values)
        with jax.enable_x64(True):
            return launch(values)

    if not checks:
        thunk = call
    else:
        def thunk(values):
            results, any_bad, labelled = call(values)
            if np.asarray(any_bad):  # cheaper than bool() of a jax.Array
                for c, y in labelled:  # uma's ValueError, naming the first bad label and where it is
                    check(uma.from_dlpack(y).to_device("cpu"), int(c), "softmax_cross_entropy")
                raise ValueError(f"softmax_cross_entropy: a label is out of range [0, {int(labelled[0][0])})")
            return results

    types = [_np_dtype(v.type.dtype) for v in inputs]
    impl_type = type(jnp.zeros(()))
    # where JAX has devices of one platform (a CPU-only jaxlib), an array's device is the linker's
    one_place = {d.platform for d in jax.devices()} == {device.platform} and len(jax.devices()) == 1
    here = {device}

    def native_args(args):
        """Whether ``args`` (the explicit inputs) go to the thunk as they are: ``jax.Array`` s of
        the inputs' dtypes on the linker's device (their shapes are checked when JAX traces)."""
        for a, dt in zip(args, types):
            if type(a) is not impl_type or a.dtype != dt or not (one_place or a.devices() == here):
                return False
        return True

    thunk.native_args = native_args
    thunk.checks_updates = True
    thunk.checks_shapes = True
    thunk.segments, thunk.host_steps, thunk.donated = 1, [], donate
    return thunk


def _np_dtype(name):
    """The NumPy dtype object JAX uses for uma dtype ``name`` (bfloat16: ml_dtypes'); compared
    with ``==``, which is cheaper than formatting a dtype's name."""
    from ..numpy.dispatch import numpy_dtype
    return numpy_dtype(name)


def _result_check(var):
    """The check of a value computed for ``var``: a ``jax.Array`` of the graph's dtype."""
    name = var.type.dtype
    want = _np_dtype(name)

    def result(r, node):
        if r.dtype != want:
            raise RuntimeError(f"{node.op}: JAX returned dtype {r.dtype}, but the graph inferred {name} "
                               f"(a bug in uma's jax linker)")
        return r

    return result
