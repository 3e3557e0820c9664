"""Symbolic ops: one function per eager function of uma (same name, same signature).

Every function accepts :class:`~uma.graph.Variable` s, uma/NumPy arrays, lists and Python
scalars and returns a new Variable (or a Constant for creation functions). Dtype and static
shape are inferred when the graph is built:

- dtypes follow NumPy 2 (NEP 50): the result dtype of an op is what NumPy's function gives for
  arrays of the input dtypes; Python scalars are *weak* (``x_float32 + 1.0`` is float32) and
  are turned into constants of the promoted dtype (``OverflowError`` for an out-of-range
  Python int, as NumPy 2 does);
- elementwise ops (and ``where``, ``astype``, ``clip``, ``round``) accept every dtype on which
  NumPy 2 defines them (bfloat16 as ml_dtypes does) and raise ``TypeError`` naming the op and
  the dtype where NumPy does; the other ops take every dtype too, with NumPy 2's result dtype,
  except where their docstrings say (``softmax`` needs a float input, ``one_hot`` integer
  indices, ``logsumexp`` a real input);
- shapes follow NumPy broadcasting with PyTensor's static rule: only axes whose static length
  is 1 broadcast (see :mod:`uma.graph.type`). Known mismatches raise ``ValueError`` naming the
  op at build time; the rest are checked when a compiled function is called.

Each op also defines its reference semantics (``perform``, calling uma's eager function of
the same name), its gradient and its run-time shape rule. What a backend does with an op is
in that backend's dispatch table (:mod:`uma.runtime.linkers`); ``uma.Linker.known_ops()``
lists every op class under each of its names.

The package has one module per concept; this module re-exports their public functions
(``__all__``) and their :class:`~uma.graph.Op` classes:

- ``elemwise``: the :class:`Elemwise` op, NumPy 2's result dtype of each elementwise function
  and its gradient rule; ``binary`` and ``unary``: the elementwise functions (arithmetic,
  comparisons, logical, math, rounding, parts of complex numbers); ``select``: ``where`` and
  ``clip``;
- ``convert``: ``astype``; ``creation``: constants, ``*_like`` and ``one_hot``;
- ``reduce``: reductions, ``var``, ``std``, ``logsumexp``; ``cumulative``: ``cumsum``,
  ``cumprod``; ``nn``: ``relu``, softmax and softmax cross-entropy; ``linalg``: ``matmul``,
  ``dot``, ``outer``, diagonals, ``trace``;
- ``shape``: reshape, transpose, axes and broadcasting; ``join``: ``concatenate``, ``stack``,
  ``split``; ``indexing``: ``getitem``, ``take``, masks; ``subtensor``: ``set_subtensor``,
  ``inc_subtensor``;
- ``_common``: the helpers they share (weak scalars, broadcasting, axes).

The modules call one another's functions only when a graph is built (gradients, lowerings,
composite functions), so each imports the other modules' names at its end.
"""
from .binary import (add, arctan2, divide, eq, equal, floor_divide, greater, greater_equal, less,
                     less_equal, logical_and, logical_or, logical_xor, maximum, minimum, multiply,
                     neq, not_equal, power, remainder, subtract)
from .binary import _bool_op  # noqa: F401  (the operators & | ^ ~ of uma.graph.Variable)
from .convert import Cast, astype, cast
from .creation import (FillLike, OneHot, arange, array, asarray, empty, empty_like, eye, from_dlpack,
                       full, full_like, one_hot, ones, ones_like, zeros, zeros_like)
from .cumulative import Cumulate, cumprod, cumsum
from .elemwise import Elemwise
from .indexing import GetItem, GetItemGrad, MaskSelect, Take, getitem, take
from .join import Concatenate, Segment, Stack, concatenate, split, stack
from .linalg import (Diag, Diagonal, DiagonalEmbed, MatMul, Outer, diag, diagonal, dot, matmul, outer,
                     trace)
from .nn import (Softmax, SoftmaxCrossEntropy, SoftmaxCrossEntropyGrad, log_softmax, relu, softmax,
                 softmax_cross_entropy)
from .reduce import (LogSumExp, Reduce, Stat, all, any, argmax, argmin, logsumexp, max, mean, min,
                     prod, std, sum, var)
from .select import Clip, Where, clip, where
from .shape import (BroadcastLike, BroadcastTo, ExpandDims, Reshape, ReshapeLike, Squeeze, Transpose,
                    broadcast_to, expand_dims, reshape, squeeze, transpose)
from .subtensor import UpdateSubtensor, inc_subtensor, set_subtensor
from .unary import (Round, abs, angle, arccos, arcsin, arctan, ceil, conj, conjugate, cos, cosh,
                    digamma, erf, erfc, exp, exp2, expm1, floor, gammaln, imag, log, log1p, log2,
                    log10, logical_not, negative, real, reciprocal, rint, round, sigmoid, sign, sin,
                    sinh, softplus, sqrt, square, tan, tanh, trigamma)

__all__ = [
    # elementwise: binary
    "add", "subtract", "multiply", "divide", "power", "maximum", "minimum", "floor_divide",
    "remainder", "arctan2", "equal", "not_equal", "less", "less_equal", "greater",
    "greater_equal", "eq", "neq", "logical_and", "logical_or", "logical_xor",
    # elementwise: unary
    "negative", "abs", "sign", "square", "reciprocal", "sqrt", "exp", "exp2", "expm1", "log",
    "log2", "log10", "log1p", "sin", "cos", "tan", "arcsin", "arccos", "arctan", "sinh", "cosh",
    "tanh", "sigmoid", "softplus", "erf", "erfc", "gammaln", "digamma", "trigamma",
    "logical_not", "floor", "ceil", "rint", "round", "real", "imag", "conj", "conjugate", "angle",
    # elementwise selection
    "where", "clip",
    # conversion and creation
    "astype", "cast",
    "zeros", "ones", "empty", "full", "arange", "eye", "asarray", "array", "from_dlpack",
    "zeros_like", "ones_like", "empty_like", "full_like", "one_hot",
    # reductions, cumulative ops, nn
    "sum", "mean", "max", "min", "prod", "all", "any", "argmax", "argmin", "var", "std",
    "logsumexp", "cumsum", "cumprod",
    "relu", "softmax", "log_softmax", "softmax_cross_entropy",
    # linear algebra
    "matmul", "dot", "outer", "diagonal", "diag", "trace",
    # shape, joining and splitting
    "reshape", "transpose", "expand_dims", "squeeze", "broadcast_to", "concatenate", "stack",
    "split",
    # indexing and functional updates
    "getitem", "take", "set_subtensor", "inc_subtensor",
]
