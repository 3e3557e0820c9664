"""The ``mlx`` linker: evaluates graphs with MLX on the CPU, lazily, with one ``mx.eval`` per
call.

Values are ``mx.array`` s in residency ``"mlx"``: a shared variable that an ``mlx`` function
updated keeps its value as an MLX array until another backend, or ``get_value``, reads it. MLX
owns its memory, so host -> MLX copies (once per switch of residency; the dtype kept exactly,
float64 included, where ``mx.array`` alone would narrow it to float32); MLX -> host shares the
evaluated array's memory (the buffer protocol). Nodes MLX does not compute as uma does run
uma's eager op on the host (``dispatch.py``). An output that is also an input, a stored value
or another output is returned as a copy (``fgraph.outputs_needing_copy()``): an MLX array is
immutable to MLX, but NumPy's view of it (the buffer protocol) is writeable. Registered as ``"mlx"`` where MLX is
installed; it is imported when the first function is compiled for it.
"""
from __future__ import annotations

from ...linker import Linker
from ....graph.type import _ALL_DTYPES
from ..walk import by_signature, node_steps, straight_line
from .dispatch import _mx, mlx_dtype, mlx_impl, to_mlx, to_uma

__all__ = ["MlxLinker"]


def _uma():
    import uma
    return uma


def _result_check(var):
    """The check of a value computed for ``var``: an ``mx.array`` of the graph's dtype."""
    name = var.type.dtype

    def result(r, node):
        if r.dtype != mlx_dtype(name):
            raise RuntimeError(f"{node.op}: MLX returned dtype {r.dtype}, but the graph inferred {name} "
                               f"(a bug in uma's mlx linker)")
        return r

    return result


class MlxLinker(Linker):
    """Evaluates graphs with MLX on the CPU; values are ``mx.array`` s in residency ``"mlx"``
    (module documentation)."""

    name = "mlx"
    residency = "mlx"
    dispatch = mlx_impl
    #: every uma dtype but complex128, which MLX lacks (a graph with one is refused at compile time)
    dtypes = frozenset(_ALL_DTYPES) - {"complex128"}

    def is_native(self, value, type):
        mx = _mx()
        return (isinstance(value, mx.array) and value.dtype == mlx_dtype(type.dtype)
                and type.is_compatible_shape(tuple(value.shape)))

    def input_filter(self, value, type):
        return to_mlx(value if isinstance(value, _uma().Array) else _uma().asarray(value))

    def output_filter(self, value, type):
        _mx().eval(value)
        return to_uma(value)

    def compile(self, fgraph):
        """The graph node by node: the first call with each combination of value shapes with
        every result checked, the next ones as generated straight-line code without checks
        (:func:`~..walk.by_signature`, the shape check and the nodes in one generated function);
        one ``mx.eval`` per call, of exactly the outputs and the updates."""
        mx = _mx()
        steps = node_steps(fgraph, mlx_impl)
        constants = {}

        def constant(c):
            v = constants.get(c)
            if v is None:
                v = constants[c] = to_mlx(_uma().asarray(c.value))
            return v

        copies = fgraph.outputs_needing_copy()

        def copy(value):  # a new, evaluated MLX array with the value's bytes
            c = mx.array(value)
            mx.eval(c)
            return c

        run = straight_line(fgraph.inputs, fgraph.outputs, steps, copies, constant=constant, copy=copy,
                            output=_result_check)

        def checked(values):
            outs = run(values)
            mx.eval(outs)
            return outs

        # the next calls: the generated code itself, ending in one mx.eval of every output and update
        code = dict(inputs=fgraph.inputs, outputs=fgraph.outputs, steps=steps, copies=copies, constant=constant,
                    copy=copy, finish=mx.eval)
        array, dtypes = mx.array, [mlx_dtype(v.type.dtype) for v in fgraph.inputs]

        def native_args(args):
            """``mx.array`` s of the inputs' dtypes (shapes: checked once per signature)."""
            for a, dt in zip(args, dtypes):
                if type(a) is not array or a.dtype != dt:
                    return False
            return True

        return by_signature(fgraph, checked, code=code, native_args=native_args)
