"""Compiled functions: :func:`function` and :class:`Function`."""
from __future__ import annotations

import numpy as np

from ..graph.basic import Constant, Variable, ancestors, as_variable
from ..graph.fgraph import FunctionGraph, validate
from ..graph.type import _fmt_shape
from .filters import filter_host
from .linker import get_linker
from .shared import SharedVariable

__all__ = ["function", "Function"]

_SHAPE_CACHE_LIMIT = 64
_MISSING = object()


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
            raise TypeError(
                f"function: the update of shared variable {_label(target)} has dtype {u.dtype} and ndim "
                f"{u.ndim}, but the variable has dtype {t.dtype} and ndim {t.ndim}; cast the update "
                f"expression (e.g. .astype({t.dtype!r})) to match")
        for a, b in zip(u.shape, t.shape):
            if a is not None and b is not None and a != b:
                raise TypeError(f"function: the update of shared variable {_label(target)} has static "
                                f"shape {_fmt_shape(u.shape)}, the variable {_fmt_shape(t.shape)}")
        result.append((target, value))
    return result


class Function:
    """A compiled function (see :func:`function`). Call it with one value per input."""

    def __init__(self, inputs, outputs, updates, linker, update_policy, allow_input_downcast):
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
        self._names = {v.name: k for k, v in enumerate(inputs) if v.name is not None}
        self._containers = [s.container for s in shared]
        self._writes = [(shared[ii - n_in].container, oi) for oi, ii in sorted(mapping.items())]
        self._shapes_ok = set()
        self._thunk = linker.compile(fgraph.clone())

    # ---- calling ------------------------------------------------------------------------
    def _bind(self, args, kwargs):
        n = len(self.inputs)
        if kwargs:
            if len(args) > n:
                raise TypeError(f"function takes {n} argument(s), got {len(args) + len(kwargs)}")
            full = list(args) + [_MISSING] * (n - len(args))
            for key, val in kwargs.items():
                k = self._names.get(key)
                if k is None:
                    raise TypeError(f"function got an unexpected keyword argument {key!r}")
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

    def _check_shapes(self, values):
        try:
            key = tuple(tuple(v.shape) for v in values)
        except (AttributeError, TypeError):
            return
        if key in self._shapes_ok:
            return
        env = dict(zip(self.fgraph.inputs, key))
        for c in self.fgraph.constants():
            env[c] = c.value.shape
        for node in self.fgraph.toposort():
            try:
                shapes = node.op.infer_shape(node, [env[i] for i in node.inputs])
            except NotImplementedError:
                return
            env.update(zip(node.outputs, shapes))
        if len(self._shapes_ok) >= _SHAPE_CACHE_LIMIT:
            self._shapes_ok.clear()
        self._shapes_ok.add(key)

    def __call__(self, *args, **kwargs):
        args = self._bind(args, kwargs)
        linker = self.linker
        values = []
        for a, t, what in zip(args, self._in_types, self._what):
            if linker.is_native(a, t):
                values.append(a)
            else:
                h = filter_host(a, t, allow_downcast=self.allow_input_downcast, what=what,
                                hint=" (or pass allow_input_downcast=True to uma.function)")
                values.append(linker.input_filter(h, t))
        for c in self._containers:
            values.append(c.read(linker))
        self._check_shapes(values)
        outs = self._thunk(values)
        # Every output is computed: now write all updates at once (they read old values).
        if self._writes:
            if self.update_policy == "eager":
                hosts = [c.host_copy_of(linker, outs[oi]) for c, oi in self._writes]
                for (c, oi), h in zip(self._writes, hosts):
                    c.write(linker, outs[oi], h)
            else:
                for c, oi in self._writes:
                    c.write(linker, outs[oi])
        if self._single:
            return outs[0]
        return list(outs[:self._n_out])

    def __repr__(self):
        return (f"<uma.Function inputs={self.inputs} outputs={len(self.outputs)} "
                f"updates={len(self.updates)} backend={self.backend!r}>")


def function(inputs, outputs=None, *, updates=None, backend="cpu", update_policy="lazy",
             allow_input_downcast=False):
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
    - ``backend``: a registered name (``"cpu"``, ``"reference"``, see :func:`backends`) or a
      :class:`Linker`. ``update_policy="lazy"`` leaves updated values in the backend's
      residency; ``"eager"`` also refreshes the host copy every call.

    Errors at compile time: ``TypeError`` for a bad input/update (an update whose dtype or
    ndim differs from its shared variable's), ``MissingInputError`` (a ``ValueError``) when
    an output needs a variable that is not an input. At call time: ``TypeError`` for the
    wrong number of arguments, a wrong ndim or a dtype that cannot be cast safely (naming
    the input); ``ValueError`` naming the op for a shape mismatch.
    Convention: PyTensor's ``function``.
    """
    linker = get_linker(backend)
    return Function(inputs, outputs, updates, linker, update_policy, allow_input_downcast)
