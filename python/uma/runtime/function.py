"""Compiled functions: :func:`function` and :class:`Function`.

One call path for every backend: C++ ``Function::call`` (``uma._core.Function``,
include/uma/runtime/function.h) locks the shared variables, reads each in the backend's
residency (a stale copy is converted once, through the host), runs what the linker compiled,
checks every update against its shared variable's type and writes the updates; a call that
raises writes nothing. What the linker compiled decides how much Python a call runs:

- a whole-graph Program (the ``cpu`` and ``cuda`` linkers; any linker of the host residency,
  or of a device's, whose thunk has a ``program``): the call runs no Python at all.
  ``Function.__call__`` itself is written in C++ (``uma._core._function_call_method``); it
  filters the arguments (``uma.Array`` of the declared type on the residency's device as it
  is; a ``numpy.ndarray`` of the declared dtype and ndim read from NumPy's struct fields,
  copied when it holds at most 1 KiB and shared under the copy rules otherwise; anything else
  through :func:`~uma.runtime.filters.filter_host` and the linker's ``input_filter``). The GIL
  is released while it computes, except for a call whose inputs and shared values hold at
  most 4096 host elements: that one keeps the GIL (cheaper than handing it over) and runs only
  if every lock it needs is free at once and no shared value needs a conversion (otherwise it
  releases the GIL and waits);
- a thunk (a Python linker's, or a Program split by ops that run in Python): the arguments are
  filtered in Python (``is_native``, the host filter, ``argument_filter``), and C++ calls the
  thunk with the GIL held, as it does the residencies' filters. A thunk with ``native_args``
  (the framework backends') is called from C++ without that Python step when
  ``native_args(args)`` is true (every argument the framework's own array of the input's
  dtype); a call that fails there wrote nothing and runs again on the filtered path, which
  raises the error. A thunk with ``checks_shapes`` runs uma's shape rules itself, one with
  ``checks_updates`` true checked its update values itself (walk.by_signature).

Keyword arguments are bound in Python first. :attr:`Function.fast_path` says whether calls
run a Program; :meth:`Function.call_counts` counts them.

Thread safety: a call locks the containers of the shared variables it reads or writes (one
re-entrant lock per container, taken in the containers' creation order, so two calls can never
wait for each other in a cycle), reads their values, then releases the containers it only
reads; the containers it writes stay locked while it computes until its updates are written.
Calls touching the same variables therefore behave as if run one after the other in some
order (two-phase locking); calls on disjoint variables run in parallel.
``get_value``/``set_value`` take the same locks.
"""
from __future__ import annotations

import numpy as np

from ..graph.basic import Constant, Op, Variable, ancestors, as_variable, infer_node_shape, toposort
from ..graph.fgraph import FunctionGraph, validate
from ..graph.rewrite import LINKER_PASSES, as_mode, rewrite
from ..graph.type import _ALL_DTYPES, _fmt_shape
from .filters import can_cast_safe, filter_host, value_type
from .linker import _BACKENDS, check_residency, get_linker
from .shared import SharedVariable


def _call_thunk_of_core():
    from .. import _core
    return _core._call_thunk


_call_thunk = _call_thunk_of_core()

__all__ = ["function", "Function", "dprint"]

_SHAPE_CACHE_LIMIT = 64
_MISSING = object()
_DOWNCAST_HINT = " (or pass allow_input_downcast=True to uma.function)"


def _label(v, i=None):
    if v.name is not None:
        return repr(v.name)
    return f"#{i}" if i is not None else repr(v)


def _normalize_updates(updates):
    if updates is None:
        return []
    if isinstance(updates, dict):
        pairs = list(updates.items())
    else:
        try:
            pairs = [tuple(p) for p in updates]
        except TypeError:
            raise TypeError("function: updates must be a dict or a list of (shared variable, "
                            "new value) pairs") from None
        for p in pairs:
            if len(p) != 2:
                raise TypeError(f"function: each update must be a (shared variable, new value) pair, got {p!r}")
    seen = set()
    result = []
    for target, value in pairs:
        if not isinstance(target, SharedVariable):
            raise TypeError(f"function: an update target must be a shared variable, got {target!r}")
        if target in seen:
            raise ValueError(f"function: shared variable {_label(target)} has more than one update")
        seen.add(target)
        if not isinstance(value, Variable):
            # a plain value: filtered into the variable's type like set_value
            value = Constant(np.asarray(filter_host(value, target.type, what=f"update of {_label(target)}")))
        t, u = target.type, value.type
        if u.dtype != t.dtype or u.ndim != t.ndim:
            fix = (f"cast the update expression (e.g. .astype({t.dtype!r})) to match" if u.dtype != t.dtype
                   else f"give the update expression {t.ndim} dimension(s)")
            raise TypeError(
                f"function: the update of shared variable {_label(target)} has dtype {u.dtype} and ndim "
                f"{u.ndim}, but the variable has dtype {t.dtype} and ndim {t.ndim}; {fix}")
        for a, b in zip(u.shape, t.shape):
            if a is not None and b is not None and a != b:
                raise TypeError(f"function: the update of shared variable {_label(target)} has static "
                                f"shape {_fmt_shape(u.shape)}, the variable {_fmt_shape(t.shape)}")
        result.append((target, value))
    return result


def _default_updates(outputs, updates, inputs, no_default_updates):
    """``(shared, default_update)`` pairs for the shared variables the graph reads that have
    a ``default_update`` and no explicit update (PyTensor convention); repeated until no new
    shared variable appears (an update expression may read more of them)."""
    if no_default_updates is True:
        return []
    if no_default_updates is False or no_default_updates is None:
        skip = set()
    elif isinstance(no_default_updates, (list, tuple, set, frozenset)) and all(
            isinstance(v, SharedVariable) for v in no_default_updates):
        skip = set(no_default_updates)
    else:
        raise TypeError("function: no_default_updates must be True, False or a list of shared variables, got "
                        f"{no_default_updates!r}"[:200])
    have = {t for t, _ in updates}
    extra = []
    frontier = list(outputs) + [v for _, v in updates]
    seen = set()
    while frontier:
        new = []
        for v in ancestors(frontier, stop=inputs):
            if (isinstance(v, SharedVariable) and v not in seen and v not in have and v not in skip
                    and v.default_update is not None):
                if not isinstance(v.default_update, Variable):
                    raise TypeError(f"function: the default_update of shared variable {_label(v)} must be a "
                                    f"symbolic expression, got {type(v.default_update).__name__}")
                seen.add(v)
                extra.append((v, v.default_update))
                new.append(v.default_update)
        frontier = new
    return _normalize_updates(extra) if extra else []


class Function:
    """A compiled function (see :func:`function`). Call it with one value per input.

    Attributes: ``inputs``, ``outputs``, ``updates`` (``[(shared, expression)]``, default
    updates included), ``shared_variables``, ``fgraph`` (the graph after the rewrite passes:
    what the linker compiled), ``mode``, ``backend``, ``fast_path`` (True when calls run a
    whole-graph Program with no Python; see the module documentation and :meth:`call_counts`). :meth:`dprint` shows the
    compiled graph.
    Functions pickle and deep-copy (see :meth:`__reduce__`).
    """

    def __init__(self, inputs, outputs, updates, linker, update_policy, allow_input_downcast,
                 mode=None, no_default_updates=False):
        if not isinstance(inputs, (list, tuple)):
            raise TypeError(f"function: inputs must be a list of symbolic variables, got {inputs!r}")
        inputs = list(inputs)
        seen = set()
        for k, i in enumerate(inputs):
            if not isinstance(i, Variable):
                raise TypeError(f"function: input {k} must be a symbolic variable, got {i!r}")
            if isinstance(i, SharedVariable):
                raise TypeError(f"function: shared variable {_label(i)} cannot be an explicit input; "
                                f"its value is used implicitly (PyTensor convention)")
            if isinstance(i, Constant):
                raise TypeError(f"function: input {k} is a constant, not a variable")
            if i in seen:
                raise ValueError(f"function: input {_label(i, k)} is given more than once")
            seen.add(i)
        if outputs is None:
            out_list, self._single = [], False
        elif isinstance(outputs, (list, tuple)):
            out_list, self._single = [as_variable(o) for o in outputs], False
        else:
            out_list, self._single = [as_variable(outputs)], True
        upd = _normalize_updates(updates)
        upd = upd + _default_updates(out_list, upd, inputs, no_default_updates)
        if update_policy not in ("lazy", "eager"):
            raise ValueError(f"function: update_policy must be 'lazy' or 'eager', got {update_policy!r}")

        # shared variables read by the graph, then update targets not read
        roots = ancestors(out_list + [v for _, v in upd], stop=inputs)
        shared = sorted((v for v in roots if isinstance(v, SharedVariable) and v not in seen),
                        key=lambda v: v.id)
        for t, _ in upd:
            if t not in shared:
                shared.append(t)
        n_in, n_out = len(inputs), len(out_list)
        mapping = {n_out + k: n_in + shared.index(t) for k, (t, _) in enumerate(upd)}
        fgraph = FunctionGraph(inputs + shared, out_list + [v for _, v in upd], mapping)
        validate(fgraph)
        self.mode = as_mode(mode)
        fgraph.mode = self.mode
        self.passes = rewrite(fgraph, self.mode)

        self.inputs = inputs
        self.outputs = out_list
        self.updates = upd
        self.shared_variables = shared
        self.fgraph = fgraph
        self.linker = linker
        self.backend = linker.name
        self.update_policy = update_policy
        self.allow_input_downcast = bool(allow_input_downcast)
        self._n_out = n_out
        self._in_types = [v.type for v in inputs]
        self._what = [f"input {k} ({_label(v, k)})" for k, v in enumerate(inputs)]
        self._names = {}  # input name -> the positions of the inputs of that name
        for k, v in enumerate(inputs):
            if v.name is not None:
                self._names.setdefault(v.name, []).append(k)
        self._containers = [s.container for s in shared]
        check_residency(linker)
        for c in self._containers:
            c.keep(linker)
        missing = linker.unsupported(fgraph)
        if not isinstance(missing, (list, tuple)) or not all(isinstance(op, Op) for op in missing):
            raise TypeError(f"function: backend {self.backend!r}: Linker.unsupported must return a list of "
                            f"the graph's ops, got {missing!r:.200}")
        if missing:
            names = ", ".join(dict.fromkeys(f"{op.name} ({type(op).__name__})" for op in missing))
            raise NotImplementedError(f"function: backend {self.backend!r} has no implementation of op(s) {names}")
        unheld = linker.unheld_dtypes(fgraph)
        if unheld:
            what = ", ".join(f"{dt} (variable {v.name!r})" if v.name is not None else
                             f"{dt} (an output of {v.owner.op.name})" if v.owner is not None else dt
                             for dt, v in unheld.items())
            raise TypeError(f"function: backend {self.backend!r} cannot hold dtype {what}; its dtypes are "
                            f"{', '.join(sorted(linker.dtypes))}")
        compiled = fgraph.clone()
        compiled.mode = self.mode
        self._thunk = linker.compile(compiled)
        if not callable(self._thunk):
            raise TypeError(f"function: backend {self.backend!r}: Linker.compile must return a thunk "
                            f"(values -> outputs), got {self._thunk!r:.200}")
        self._fast = self._make_call(upd)
        # the thunk's check of arguments it takes as they are (see _bound_call), or None
        self._native_args = getattr(self._thunk, "native_args", None)

    def _make_call(self, upd):
        """The C++ call (``uma._core.Function``): of the whole-graph Program when the thunk
        carries one (``thunk.program``) and the linker's values are ``uma.Array`` s (the host
        residency or a device's), else of the thunk. Its helpers close over what they need, not
        over ``self`` (the C++ object takes part in garbage collection, but a cycle through it
        would keep a whole function alive until the collector runs)."""
        core = _uma()._core
        linker = self.linker
        residency = linker.core_residency()
        program = getattr(self._thunk, "program", None)
        runs_program = isinstance(program, core.Program) and residency.device is not None
        in_types, what, downcast = self._in_types, self._what, self.allow_input_downcast
        on_host = residency.is_host

        def filter_arg(k, value):
            h = filter_host(value, in_types[k], allow_downcast=downcast, what=what[k], hint=_DOWNCAST_HINT)
            return h if on_host else linker.argument_filter(h, in_types[k])

        fgraph, shapes_ok = self.fgraph, set()
        checks_shapes = getattr(self._thunk, "checks_shapes", False) is True  # the thunk runs uma's shape rules

        def check_shapes(values):
            _check_shapes(fgraph, shapes_ok, values)

        n_in = len(self.inputs)
        specs = [(t.dtype, tuple(t.shape), w) for t, w in zip(in_types, what)]
        updates = [ii - n_in for _, ii in sorted(self.fgraph.update_mapping.items())]
        fast = core.Function(program if runs_program else self._thunk, specs,
                             [c.cell for c in self._containers], updates, self._n_out, downcast,
                             filter_arg if runs_program else None, None if checks_shapes else check_shapes,
                             self._single,
                             self.backend, residency, self.update_policy == "eager", value_type,
                             getattr(linker, "consumes_stored_values", False))
        # Per update, the static axes of its variable that the update expression leaves open
        # (None): a wrong length there is the graph's value (ValueError), elsewhere the backend
        # broke the type (TypeError).
        fast.set_open_axes([[i for i, d in enumerate(t.type.shape) if d is not None and v.type.shape[i] is None]
                            for t, v in upd])
        return fast

    @property
    def fast_path(self) -> bool:
        """True when calls run a whole-graph Program (no Python per call, as ``cpu`` and
        ``cuda`` compile), False when they call the linker's thunk."""
        return self._fast.runs_program

    def call_counts(self) -> dict:
        """``{"fast": n, "general": m}``: calls that ran the Program and calls that ran the
        thunk so far (introspection for tests and benchmarks)."""
        n = self._fast.calls
        return {"fast": n, "general": 0} if self._fast.runs_program else {"fast": 0, "general": n}

    # ---- calling ------------------------------------------------------------------------
    def _bind(self, args, kwargs):
        n = len(self.inputs)
        if kwargs:
            if len(args) > n:
                raise TypeError(f"function takes {n} argument(s), got {len(args) + len(kwargs)}")
            full = list(args) + [_MISSING] * (n - len(args))
            for key, val in kwargs.items():
                ks = self._names.get(key)
                if ks is None:
                    raise TypeError(f"function got an unexpected keyword argument {key!r}")
                if len(ks) > 1:  # PyTensor: "Ambiguous name"
                    raise TypeError(f"function got the keyword argument {key!r}, but inputs "
                                    f"{', '.join(map(str, ks))} are all named {key!r}; pass them by position")
                k = ks[0]
                if full[k] is not _MISSING:
                    raise TypeError(f"function got multiple values for input {key!r}")
                full[k] = val
            missing = [self._what[k] for k, v in enumerate(full) if v is _MISSING]
            if missing:
                raise TypeError(f"function is missing argument(s): {', '.join(missing)}")
            return full
        if len(args) != n:
            raise TypeError(f"function takes {n} argument(s) "
                            f"({', '.join(self._what) or 'none'}), got {len(args)}")
        return args

    def _native_fits(self, value, t, what):
        """Whether an argument the linker's ``is_native`` accepted goes to the thunk as it is:
        its dtype, ndim and static lengths (read without converting it) are checked as the
        host filter checks any other argument, with the same errors (``TypeError`` for another
        ndim or a dtype that cannot be cast safely, ``ValueError`` for a static length that
        differs). False for another dtype that casts safely (or with
        ``allow_input_downcast``): the host filter then converts it like any argument."""
        got = value_type(value)
        if got is None:
            raise TypeError(f"{what}: backend {self.backend!r} accepts a {type(value).__name__} as native "
                            f"(is_native), but it has no dtype and shape")
        dtype, shape = got
        if dtype != t.dtype:
            if dtype not in _ALL_DTYPES:
                raise TypeError(f"{what}: unsupported dtype {dtype} (expected {t.dtype})")
            if not self.allow_input_downcast and not can_cast_safe(dtype, t.dtype):
                raise TypeError(f"{what}: cannot cast {dtype} to {t.dtype} safely (NumPy 'safe' casting); "
                                f"cast the value first{_DOWNCAST_HINT}")
        t.check_value_shape(shape, what)
        return dtype == t.dtype

    def __call__(self, *args, **kwargs):
        if kwargs or not self._fast.runs_program:
            return self._bound_call(args, kwargs)
        return self._fast(args)

    def _bound_call(self, args, kwargs):
        """A call with keyword arguments, or of a thunk: binds the arguments in Python, filters
        a thunk's into its residency, and calls the C++ Function."""
        args = self._bind(args, kwargs)
        if self._fast.runs_program:
            return self._fast(tuple(args))
        linker = self.linker
        values = []
        for a, t, what in zip(args, self._in_types, self._what):
            if linker.is_native(a, t) and self._native_fits(a, t, what):
                values.append(a)
            else:
                h = filter_host(a, t, allow_downcast=self.allow_input_downcast, what=what,
                                hint=_DOWNCAST_HINT)
                values.append(self._filtered(linker.argument_filter(h, t), h, what))
        return _call_thunk(self._fast, tuple(values))

    def _filtered(self, value, host, what):
        """``value``, what the linker's ``input_filter`` made of the host array ``host``, when it
        has ``host``'s dtype and shape (read without converting it); ``TypeError`` naming the
        backend otherwise."""
        got = value_type(value)
        want = (host.dtype.name, tuple(host.shape))
        if got is None or (got[0], tuple(got[1])) != want:
            desc = (f"a {type(value).__name__} without dtype and shape" if got is None
                    else f"{got[0]} of shape {tuple(got[1])}")
            raise TypeError(f"{what}: backend {self.backend!r}'s input_filter gave {desc} for {want[0]} of "
                            f"shape {want[1]}")
        return value

    def __repr__(self):
        return (f"<uma.Function inputs={self.inputs} outputs={len(self.outputs)} "
                f"updates={len(self.updates)} backend={self.backend!r}>")

    # ---- printing ----------------------------------------------------------------------
    def dprint(self, file=None):
        """Print the compiled graph (see :func:`dprint`)."""
        return dprint(self, file=file)

    # ---- pickling and deep copies ------------------------------------------------------
    def __reduce__(self):
        """Pickle / ``copy.deepcopy`` support: the graph (flat, so deep graphs need no deep
        recursion), the shared variables (each with its current value, brought to the host
        first), the backend (its registered name, or the linker object), the mode and the
        options. Unpickling compiles again. Shared variables in one pickle stay shared; a
        deep copy gets its own copies of them (with their current values)."""
        return (_rebuild_function, (self._flat_state(),))

    def _flat_state(self):
        upd_values = [v for _, v in self.updates]
        nodes = toposort(self.outputs + upd_values, stop=self.inputs)
        index, table = {}, []

        def ref(v):
            k = index.get(v)
            if k is None:
                if isinstance(v, SharedVariable):
                    d = ("shared", v)
                elif isinstance(v, Constant):
                    d = ("const", v)
                else:
                    d = ("input", v.type, v.name)
                k = index[v] = len(table)
                table.append(d)
            return k

        for v in self.inputs:
            ref(v)
        node_table = []
        for n in nodes:
            ins = [ref(v) for v in n.inputs]
            node_table.append((n.op, ins, [o.name for o in n.outputs]))
            for o in n.outputs:
                index[o] = len(table)
                table.append(("out", len(node_table) - 1, o.index))
        linker = self.linker
        backend = linker.name if _BACKENDS.get(linker.name) is linker else linker
        return {
            "table": table, "nodes": node_table,
            "inputs": [index[v] for v in self.inputs],
            "outputs": [ref(v) for v in self.outputs],
            "updates": [(ref(t), ref(v)) for t, v in self.updates],
            "single": self._single, "backend": backend, "update_policy": self.update_policy,
            "allow_input_downcast": self.allow_input_downcast, "mode": self.mode,
        }


def _install_native_call():
    """``Function.__call__`` in C++ (``uma._core._function_call_method``,
    python/src/bind_runtime.cpp): the same logic as the Python method, without its frame (a
    call of a Program runs no Python code)."""
    from .. import _core
    make = getattr(_core, "_function_call_method", None)
    if make is not None:
        Function.__call__ = make(Function)


_install_native_call()


def _check_shapes(fgraph, shapes_ok, values):
    """Infer every node's output shape from the values' shapes, so that a shape mismatch is a
    ``ValueError`` naming the op (or the composed function that built it: ``infer_node_shape``)
    before anything runs; combinations that passed are remembered in ``shapes_ok`` (at most
    _SHAPE_CACHE_LIMIT)."""
    try:
        key = tuple(tuple(v.shape) for v in values)
    except (AttributeError, TypeError):
        return
    if key in shapes_ok:
        return
    env = dict(zip(fgraph.inputs, key))
    for c in fgraph.constants():
        env[c] = c.value.shape
    for node in fgraph.toposort():
        try:
            shapes = infer_node_shape(node, [env[i] for i in node.inputs])
        except NotImplementedError:
            return
        env.update(zip(node.outputs, shapes))
    if len(shapes_ok) >= _SHAPE_CACHE_LIMIT:
        shapes_ok.clear()
    shapes_ok.add(key)


def _uma():
    import uma
    return uma


def _rebuild_function(state):
    table = state["table"]
    values = [None] * len(table)
    nodes = []
    for k, d in enumerate(table):
        kind = d[0]
        if kind == "input":
            values[k] = Variable(d[1], name=d[2])
        elif kind in ("shared", "const"):
            values[k] = d[1]
        else:
            ni, oi = d[1], d[2]
            while len(nodes) <= ni:
                op, ins, names = state["nodes"][len(nodes)]
                node = op.make_node(*[values[i] for i in ins])
                for o, nm in zip(node.outputs, names):
                    o.name = nm
                nodes.append(node)
            values[k] = nodes[ni].outputs[oi]
    outputs = [values[k] for k in state["outputs"]]
    outs = outputs[0] if state["single"] else outputs
    updates = [(values[t], values[v]) for t, v in state["updates"]]
    return function([values[k] for k in state["inputs"]], outs, updates=updates,
                    backend=state["backend"], update_policy=state["update_policy"],
                    allow_input_downcast=state["allow_input_downcast"], mode=state["mode"],
                    no_default_updates=True)



def dprint(obj, file=None):
    """Print a compiled function's graph as text (PyTensor's ``debugprint``, linear form).

    ``obj``: a :class:`Function` (its graph after the rewrite passes, then the linker's plan
    when the linker describes one, e.g. the ``cpu`` Program with its fused chains), or a
    Variable / list of Variables (the symbolic graph computing them). ``file``: None prints to
    ``sys.stdout``; ``"str"`` returns the text instead; anything else with ``write`` gets it.
    Returns the text for ``file="str"``, else ``file`` (``sys.stdout`` when None).
    ``TypeError`` for another ``obj``, or a ``file`` that is none of these.
    """
    import sys
    if not (file is None or file == "str" or callable(getattr(file, "write", None))):
        raise TypeError(f"dprint: file must be None, 'str' or an object with a write method, got {file!r}")
    if isinstance(obj, Function):
        text = _describe_function(obj)
    elif isinstance(obj, Variable) or (isinstance(obj, (list, tuple)) and obj
                                       and all(isinstance(v, Variable) for v in obj)):
        outs = [obj] if isinstance(obj, Variable) else list(obj)
        text = "\n".join(_describe_graph([], outs, {}))
    else:
        raise TypeError(f"dprint: expected a uma.Function or symbolic Variable(s), got {type(obj).__name__}")
    if file == "str":
        return text
    out = sys.stdout if file is None else file
    out.write(text + "\n")
    return out


def _tname(t):
    return f"{t.dtype}{_fmt_shape(t.shape)}"


def _describe_graph(inputs, outputs, roles):
    """Lines ``%k = op(args) : type`` in execution order, and a function naming variables."""
    names = {}
    lines = []
    counter = iter(range(1 << 62))

    def name(v):
        n = names.get(v)
        if n is not None:
            return n
        if isinstance(v, Constant):
            val = v.value
            return repr(val.item()) if val.ndim == 0 else f"const{_fmt_shape(val.shape)}"
        n = f"%{next(counter)}" if v.name is None else v.name
        names[v] = n
        return n

    for k, v in enumerate(inputs):
        lines.append(f"  in  {name(v)} : {_tname(v.type)}{roles.get(k, '')}")
    for node in toposort(outputs, stop=inputs):
        outs = ", ".join(name(o) for o in node.outputs)
        args = ", ".join(name(v) for v in node.inputs)
        lines.append(f"  {outs} = {node.op}({args}) : {', '.join(_tname(o.type) for o in node.outputs)}")
    for k, o in enumerate(outputs):
        lines.append(f"  out {k}: {name(o)}{roles.get(('out', k), '')}")
    return lines


def _describe_function(f):
    fg = f.fgraph
    n_in = len(f.inputs)
    roles = {n_in + k: f" [shared {s.name or '#' + str(k)}]" for k, s in enumerate(f.shared_variables)}
    for oi, ii in fg.update_mapping.items():
        s = f.shared_variables[ii - n_in]
        roles[("out", oi)] = f" -> update of {s.name or 'shared #' + str(ii - n_in)}"
    linker_passes = [p for p in LINKER_PASSES if p in f.linker.mode_passes and f.mode.enabled(p)]
    lines = [f"uma.Function backend={f.backend!r} graph passes=[{', '.join(f.passes)}] "
             f"linker passes=[{', '.join(linker_passes)}]"]
    lines += _describe_graph(fg.inputs, fg.outputs, roles)
    describe = getattr(f._thunk, "describe", None)
    if describe is not None:
        lines += describe()
    return "\n".join(lines)


def function(inputs, outputs=None, *, updates=None, backend="cpu", update_policy="lazy",
             allow_input_downcast=False, mode=None, no_default_updates=False):
    """Compile a function from symbolic ``inputs`` to ``outputs`` for ``backend``.

    - ``inputs``: a list of symbolic variables (not shared variables or constants: shared
      variables are read implicitly). The call takes one value per input: a NumPy or uma
      array, a list or a scalar, cast into the input's dtype when safe (Python scalars weak,
      DESIGN.md "Decisions"); ``allow_input_downcast=True`` also allows unsafe casts.
    - ``outputs``: a Variable (the call returns one value), a list (returns a list) or
      None/[] (returns []). Values are the backend's native arrays (``uma.Array`` for
      ``reference`` and ``cpu``; a 0-d output is a 0-d array) and never share memory with a
      shared variable, an input or another output.
    - ``updates``: a dict or list of ``(shared_variable, new_value)``; all are computed from
      the values before the call and written together after every output was computed
      (``{a: b, b: a}`` swaps; a failing call changes no shared variable).
    - ``backend``: a registered name (``"cpu"``, ``"reference"``, ``"numpy"``, see
      :func:`backends`) or a :class:`Linker`. ``update_policy="lazy"`` leaves updated values
      in the backend's residency; ``"eager"`` also refreshes the host copy every call.
    - default updates: a shared variable the graph reads that has a ``default_update`` (the
      state of a :class:`uma.random.RandomStream`) gets that update unless ``updates`` gives
      it one; ``no_default_updates=True`` turns this off (or a list: off for those variables;
      TypeError for any other value).
    - ``mode``: which rewrite passes run (:class:`uma.Mode`, a dict such as
      ``{"exclude": ["fusion"]}``, or None for all; see :mod:`uma.graph.rewrite`).
    - Calls are thread-safe (see the module documentation): concurrent calls that share
      variables behave as some serial order of them.

    Errors at compile time: ``TypeError`` for a bad input/update (an update whose dtype or
    ndim differs from its shared variable's), ``MissingInputError`` (a ``ValueError``) when
    an output needs a variable that is not an input, ``NotImplementedError`` naming the
    backend and the ops when the graph has ops the backend cannot run (its linker's
    ``unsupported``; the ops a linker may meet: ``uma.Linker.known_ops()``). At call time:
    ``TypeError`` for the wrong number of arguments, a wrong ndim or a dtype that cannot be
    cast safely (naming the input; an argument the linker's ``is_native`` accepts is checked
    too); ``ValueError`` naming the op for a shape mismatch; ``TypeError`` naming the backend, the
    shared variable and both types when the backend returns an update value of another
    dtype, ndim or static shape (DESIGN.md "update validation"). A call that raises changes
    no shared variable.
    Convention: PyTensor's ``function``.
    """
    linker = get_linker(backend)
    return Function(inputs, outputs, updates, linker, update_policy, allow_input_downcast,
                    mode=mode, no_default_updates=no_default_updates)
