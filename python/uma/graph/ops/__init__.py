"""Symbolic ops: one function per eager function of uma (same name, same signature).

Every function accepts :class:`~uma.graph.Variable` s, uma/NumPy arrays, lists and Python
scalars and returns a new Variable (or a Constant for creation functions). Dtype and static
shape are inferred when the graph is built:

- dtypes follow NumPy 2 (NEP 50): the result dtype of an op is what NumPy's function gives for
  arrays of the input dtypes (for the elementwise ops, the op table's rule in the C++ core,
  which the eager functions use too); Python scalars are *weak* (``x_float32 + 1.0`` is float32) and
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

- ``elemwise``: the :class:`Elemwise` op and one public function per row of the op table
  (``include/uma/ops/table.h``: arithmetic, comparisons, logical and bitwise ops, math,
  rounding, predicates), their result dtypes (asked of the C++ core) and gradient rules;
  ``unary``: ``round`` and the parts of complex numbers, which refine their rows; ``select``:
  ``where`` and ``clip``;
- ``convert``: ``astype``; ``creation``: constants, ``*_like`` and ``one_hot``;
- ``reduce``: reductions, ``var``, ``std``, ``logsumexp``; ``cumulative``: ``cumsum``,
  ``cumprod``; ``nn``: ``relu``, softmax and softmax cross-entropy; ``linalg``: ``matmul``,
  ``dot``, ``outer``, diagonals, ``trace``;
- ``shape``: reshape, transpose, axes and broadcasting; ``join``: ``concatenate``, ``stack``,
  ``split``; ``indexing``: ``getitem``, ``take``, ``take_along_axis``, masks; ``sorting``: ``sort``, ``argsort``
  (differentiable), ``searchsorted``; ``subtensor``: ``set_subtensor``,
  ``inc_subtensor``; ``distributed``: ``all_reduce``, ``all_gather``, ``reduce_scatter``,
  ``all_reduce_bucket`` (collectives across processes, :mod:`uma.distributed`);
- ``compose``: Array API functions written as graphs of the ops above (``flip``, ``roll``,
  ``repeat``, ``tile``, ``tril``, ``tensordot``, ``cumulative_sum``, ``diff``, ...);
- ``_common``: the helpers they share (weak scalars, broadcasting, axes).

The modules call one another's functions only when a graph is built (gradients, lowerings,
composite functions), so each imports the other modules' names at its end.
"""
from . import elemwise as _elemwise
from .elemwise import _bitwise_operator  # noqa: F401  (the operators & | ^ ~ of uma.graph.Variable)
from .elemwise import Elemwise, eq, neq

globals().update(_elemwise.FUNCTIONS)  # one function per row of the op table

from .convert import Cast, astype, cast  # noqa: E402
from .creation import (FillLike, OneHot, arange, array, asarray, empty, empty_like, eye,  # noqa: E402
                       from_dlpack, full, full_like, one_hot, ones, ones_like, zeros, zeros_like)
from .cumulative import Cumulate, cumprod, cumsum  # noqa: E402
from .distributed import (AllGather, AllReduce, ReduceScatter, all_gather, all_reduce,  # noqa: E402
                          all_reduce_bucket, reduce_scatter)
from .indexing import GetItem, GetItemGrad, MaskSelect, Take, TakeAlongAxis, getitem, take, take_along_axis  # noqa: E402
from .join import Concatenate, Segment, Stack, concatenate, split, stack  # noqa: E402
from .linalg import (Diag, Diagonal, DiagonalEmbed, MatMul, Outer, diag, diagonal, dot,  # noqa: E402
                     matmul, outer, trace)
from .nn import (OneHotCrossEntropy, OneHotCrossEntropyGrad, Softmax, SoftmaxCrossEntropy,  # noqa: E402
                 SoftmaxCrossEntropyGrad, log_softmax, relu,
                 softmax, softmax_cross_entropy)
from .reduce import (LogSumExp, Reduce, Stat, all, any, argmax, argmin, logsumexp, max, mean,  # noqa: E402
                     min, prod, std, sum, var)
from .select import Clip, Where, clip, where  # noqa: E402
from .shape import (BroadcastLike, BroadcastTo, ExpandDims, Reshape, ReshapeLike, Squeeze,  # noqa: E402
                    Transpose, broadcast_to, expand_dims, reshape, squeeze, transpose)
from .subtensor import UpdateSubtensor, inc_subtensor, set_subtensor  # noqa: E402
from .unary import Round, angle, conj, conjugate, imag, real, round  # noqa: E402
from .sorting import SearchSorted, Sort, Unpermute, argsort, searchsorted, sort  # noqa: E402
from . import compose as _compose  # noqa: E402
from .compose import *  # noqa: E402,F401,F403

__all__ = [
    # elementwise: every op of the op table, in its order, and their other names
    *_elemwise.FUNCTIONS, "eq", "neq", "conjugate", "round",
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
    "getitem", "take", "take_along_axis", "set_subtensor", "inc_subtensor",
    # sorting and searching
    "sort", "argsort", "searchsorted",
    # collectives across processes (uma.distributed)
    "all_reduce", "all_gather", "reduce_scatter", "all_reduce_bucket",
    # Array API functions composed of the ops above
    *_compose.__all__,
]
