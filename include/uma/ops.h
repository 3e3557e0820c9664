// uma/ops.h — eager ops: shape/dtype inference, broadcasting, NumPy 2 type promotion, and
// dispatch to the device kernels. Every op returns a fresh array from the allocator or a
// view; no op writes its result into an input's memory (no donation, DESIGN.md).
#pragma once
#include <complex>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <tuple>
#include <utility>
#include <vector>

#include "uma/array.h"
#include "uma/ops/table.h"

namespace uma {

/// A Python-like scalar value.
struct Scalar {
  ScalarKind kind = ScalarKind::Float;
  bool b = false;
  int64_t i = 0;
  double f = 0;
  std::complex<double> c{};
  bool big = false;  // an Int in [2**63, 2**64): its value is static_cast<uint64_t>(i) (fits uint64 only)
  static Scalar from_bool(bool v) { Scalar s; s.kind = ScalarKind::Bool; s.b = v; return s; }
  static Scalar from_int(int64_t v) { Scalar s; s.kind = ScalarKind::Int; s.i = v; return s; }
  static Scalar from_uint(uint64_t v) {
    Scalar s = from_int(static_cast<int64_t>(v));
    s.big = v > static_cast<uint64_t>(INT64_MAX);
    return s;
  }
  static Scalar from_float(double v) { Scalar s; s.kind = ScalarKind::Float; s.f = v; return s; }
  static Scalar from_complex(std::complex<double> v) { Scalar s; s.kind = ScalarKind::Complex; s.c = v; return s; }
};

/// One item of a basic index: an integer, a slice, None (new axis) or Ellipsis.
struct IndexItem {
  enum Kind { Int, Slice, NewAxis, Ellipsis } kind = Int;
  int64_t i = 0;
  std::optional<int64_t> start, stop, step;  // slice parts; nullopt = None
};

/// One item of a NumPy index (ops::index): a basic item, or an index array when `array` is
/// defined (any integer dtype or bool, any rank; a 0-d bool array is a boolean scalar index,
/// Python's `True`/`False`).
struct IndexKey {
  IndexItem item;
  Array array;
};

namespace ops {

const char* op_name(BinaryOp op) noexcept;
const char* op_name(UnaryOp op) noexcept;
const char* op_name(ReduceOp op) noexcept;
/// The elementwise op named `name` (its eager function's name, uma/ops/table.h), if any.
std::optional<BinaryOp> binary_op_named(std::string_view name) noexcept;
std::optional<UnaryOp> unary_op_named(std::string_view name) noexcept;

// ---- shape inference (static shapes) -----------------------------------------------------
// Each shape rule is written once, for *static* shapes: one length per axis, kUnknownLength
// where the length is known only at run time (the types of a symbolic graph, which asks the
// core for them through uma._core._result_shape). A concrete shape is the case with no unknown
// length: the eager ops apply the same rules to their arrays' shapes.

/// The length of an axis that is known only at run time (Python: None).
inline constexpr int64_t kUnknownLength = -1;
/// A static shape as the graph writes it: NumPy's tuple notation, "?" for an unknown length
/// ("(2, ?)", "(3,)", "()"); a concrete shape reads as shape_str gives it.
std::string static_shape_str(const Shape& shape);
/// NumPy broadcasting of static shapes, with PyTensor's rule that only static length-1 axes
/// broadcast: per aligned axis (missing leading axes count as 1) the result is the known length
/// other than 1 when there is one, else unknown when an operand's length is unknown, else 1.
/// ValueError "<op>: operands could not be broadcast together with shapes <s1> <s2> ..." when two
/// known lengths other than 1 differ. On concrete shapes: NumPy's broadcast_shapes.
Shape broadcast_shapes(std::span<const Shape* const> shapes, const char* op);
/// broadcast_shapes of two shapes.
Shape broadcast_shapes(const Shape& a, const Shape& b, const char* op);
/// The axes a reduction over `axes` (nullopt: all) of an `ndim`-d array reduces, as a mask;
/// negative axes count from the end. AxisError (Python: numpy.exceptions.AxisError) naming `op`
/// for an axis out of range, ValueError "<op>: duplicate value in 'axis'".
std::vector<bool> reduced_axes(int64_t ndim, const std::optional<std::vector<int64_t>>& axes, const char* op);
/// Result shape of a reduction (NumPy: sum ... any, argmax, argmin, var, std, logsumexp): the
/// axes of `reduced` removed, or kept as length 1 when `keepdims`; other lengths as they are.
Shape reduce_shape(const Shape& shape, const std::vector<bool>& reduced, bool keepdims);
/// reduce_shape over `axes` (nullopt: all), with reduced_axes' errors.
Shape reduce_shape(const Shape& shape, const std::optional<std::vector<int64_t>>& axes, bool keepdims,
                   const char* op);
/// Result shape of cumsum / cumprod along `axis` (NumPy): the input's shape; with no axis the
/// flattened length (unknown when any length is). AxisError naming `op` for a bad axis.
Shape cumulate_shape(const Shape& shape, std::optional<int64_t> axis, const char* op);
/// The shapes of NumPy's matmul of operands shaped `a` and `b` (static lengths allowed): a 1-d
/// `a` is read as (1, k) and a 1-d `b` as (k, 1), the batch axes (all but the last two)
/// broadcast, and the added axes are dropped from `result`.
struct MatmulShapes {
  Shape batch;        // the broadcast batch axes
  int64_t m, k, n;    // rows of a, the core dimension, columns of b (kUnknownLength allowed)
  Shape result;       // batch + (m if a.ndim > 1) + (n if b.ndim > 1)
};
/// ValueError "matmul: input operand does not have enough dimensions (0-d operands are not
/// allowed)", "matmul: mismatch in the core dimension: shapes <a> and <b> (<k1> != <k2>)" when
/// both core lengths are known and differ, and broadcast_shapes' error for the batch axes.
MatmulShapes matmul_shapes(const Shape& a, const Shape& b);
/// Normalises an axis (negative counts from the end); AxisError naming `op` when out of range.
int64_t normalize_axis(int64_t axis, int64_t ndim, const char* op);
/// The number of elements of a static shape where the shape decides it (every length known, or
/// one known length 0), else kUnknownLength. ValueError "<op>: shape <s> is too large" when the
/// product of its known lengths other than 0 overflows (NumPy's rule, even beside a 0).
int64_t static_size(const Shape& shape, const char* op);
/// The result of reduction `op` (sum ... any, argmax, argmin): reduce_shape over `axes`, and the
/// rule's checks: TypeError "<op>: axis must be an integer or None" for several axes of argmax and
/// argmin; ValueError "<op>: zero-size array to reduction operation <maximum|minimum> which has no
/// identity" (max, min) or "<op>: attempt to get <op> of an empty sequence" (argmax, argmin) when a
/// reduced axis has the known length 0 (NumPy refuses these even when the result is empty).
Shape reduce_shape(ReduceOp op, const Shape& shape, const std::optional<std::vector<int64_t>>& axes, bool keepdims);

// The shape ops. Each function is the whole rule of its op: the eager op takes its result shape
// from it and raises its errors, and so does the graph (uma._core._result_shape).

/// NumPy reshape of an array of static `shape` to `newshape`, one entry of which may be negative
/// (-1: the length that keeps the size; unknown when the size is). ValueError "reshape: can only
/// specify one unknown dimension", "reshape: cannot reshape array of size <n> into shape <newshape>"
/// when the sizes certainly differ or a -1 sits beside a zero length, "reshape: shape <s> is too large".
Shape reshape_shape(const Shape& shape, const Shape& newshape);
/// reshape_like (a reshape to another array's static shape `target`): `target`, with reshape_shape's
/// size check when both sizes are known.
Shape reshape_like_shape(const Shape& shape, const Shape& target);
/// The permutation `axes` of an `ndim`-d array's axes, normalised (NumPy transpose): ValueError
/// "transpose: axes don't match array (got <k> axes for an array of dimension <n>)", "transpose:
/// repeated axis in transpose"; AxisError for an axis out of range.
std::vector<int64_t> transpose_axes(int64_t ndim, const std::vector<int64_t>& axes);
/// `shape` permuted by `axes` (nullopt: reversed), with transpose_axes' errors.
Shape transpose_shape(const Shape& shape, const std::optional<std::vector<int64_t>>& axes);
/// `shape` with a length-1 axis inserted at `axis` (in [-ndim-1, ndim]; AxisError otherwise).
Shape expand_dims_shape(const Shape& shape, int64_t axis);
/// The axes squeeze removes, as a mask: `axes` (reduced_axes' errors; ValueError "squeeze: cannot
/// select an axis to squeeze out which has size not equal to one (axis <d> of shape <s>)" for a known
/// length other than 1), or with nullopt every axis of known length 1 (an unknown length is kept:
/// PyTensor's convention).
std::vector<bool> squeezed_axes(const Shape& shape, const std::optional<std::vector<int64_t>>& axes);
/// `shape` without its squeezed_axes.
Shape squeeze_shape(const Shape& shape, const std::optional<std::vector<int64_t>>& axes);
/// NumPy broadcast_to of an array of static `shape` to the static `target` (broadcast_to: a concrete
/// one; broadcast_like: another array's): each axis of `shape`, aligned on the last, is 1, unknown or
/// the target's length. The result is `target` with an unknown length taken from `shape` where that
/// is known and not 1. ValueError "<op>: cannot broadcast an array of shape <s> to shape <t>" when a
/// known length certainly differs, or `shape` has more axes.
Shape broadcast_to_shape(const Shape& shape, const Shape& target, const char* op);
/// NumPy concatenate along `axis`: ValueError for no shapes, 0-d shapes, different ranks and known
/// lengths that differ off the axis (NumPy's wording, naming the dimension and both arrays);
/// AxisError. The axis' length is the sum (unknown when one is), the others the known one.
Shape concatenate_shape(std::span<const Shape* const> shapes, int64_t axis);
/// NumPy stack along a new `axis` (in [-ndim-1, ndim]): ValueError "stack: need at least one array to
/// stack", "stack: all input arrays must have the same shape, got <s1> <s2> ..." when ranks or known
/// lengths differ. The common shape (known lengths where any shape knows them) with the count inserted.
Shape stack_shape(std::span<const Shape* const> shapes, int64_t axis);
/// Piece `part` of a gradient `g` of concatenate(`parts`, axis) (its gradient helper, segment): `g`
/// with the axis' length that of parts[part]. ValueError when `g` is not concatenate's shape.
Shape segment_shape(const Shape& g, std::span<const Shape* const> parts, int64_t axis, int64_t part);
/// np.split into `sections` equal parts along `axis`: the split points. ValueError "split: number
/// sections must be larger than 0", "split: array split does not result in an equal division ...",
/// and for an axis whose length is unknown; AxisError.
std::vector<int64_t> split_points(const Shape& shape, int64_t sections, int64_t axis);
/// One slice of an axis of length `n` (CPython's PySlice_AdjustIndices): the first position, the
/// step and the number of positions. ValueError "slice step cannot be zero".
struct SliceRange {
  int64_t start, step, length;
};
SliceRange slice_range(const IndexItem& slice, int64_t n);
/// The result of basic indexing (ints, slices, None, Ellipsis) of an array of static `shape`: an
/// int removes its axis, a slice keeps it with the slice's length (unknown when the axis' is, unless
/// the slice selects nothing whatever the length: bounds of one sign in the wrong order), None
/// inserts a length 1. IndexError "<op>: an index can only have a single ellipsis ('...')", "<op>:
/// too many indices for array: array is <n>-dimensional, but <k> were indexed", "<op>: index <i> is
/// out of bounds for axis <d> with size <n>" (a known length); ValueError "slice step cannot be zero".
Shape index_shape(const Shape& shape, const std::vector<IndexItem>& index, const char* op);
/// np.take of an array of static `shape` at indices of static shape `indices` along `axis`
/// (nullopt: of the flattened array): shape[:axis] + indices + shape[axis+1:]. AxisError.
Shape take_shape(const Shape& shape, const Shape& indices, std::optional<int64_t> axis, const char* op);
/// a[mask] for a bool mask of static shape `mask`: (unknown count,) + shape[mask.ndim:]. IndexError
/// for a 0-d mask, a mask of more axes than the array's, or known lengths that differ, the mask's
/// not 0 (NumPy lets a mask axis of length 0 match any axis) ("<op>: boolean
/// index did not match indexed array along axis <d>; ...").
Shape mask_select_shape(const Shape& shape, const Shape& mask, const char* op);
/// One item of a NumPy index as its shape rule sees it: a basic item, or an index array by its kind
/// and shape (a bool array's `count` of true entries: kUnknownLength where not known).
struct IndexSpec {
  enum Kind { Basic, IntArray, BoolArray } kind = Basic;
  IndexItem item;  // Basic
  Shape shape;     // IntArray, BoolArray
  int64_t count = kUnknownLength;  // BoolArray
};
/// How an index with index arrays selects (NumPy's advanced indexing, numpy.org "Indexing on
/// ndarrays"): the basic items apply first, as a view; then each index array picks along its axis
/// of that view. Integers count as 0-d index arrays when the index holds an array; a k-d bool array
/// is its k nonzero() coordinate arrays (shape (count,)); a 0-d bool adds a length-1 axis that an
/// index array of shape (1,) (True) or (0,) (False) picks from.
struct AdvancedIndexLayout {
  /// The basic view: the index with the Ellipsis expanded, every array and integer that is an
  /// advanced index replaced by a full slice and every 0-d bool by None.
  std::vector<IndexItem> basic;
  struct Entry {
    int64_t item;         // which index item
    int64_t dim;          // a bool array's coordinate (0 for others)
    int64_t view_axis;    // the axis of the basic view it picks along
    int64_t source_axis;  // that axis in the indexed array (the IndexError's axis; -1 for a 0-d bool)
  };
  std::vector<Entry> entries;  // one per coordinate array, in index order
  Shape broadcast;             // the index arrays' broadcast shape
  /// Where the broadcast axes go among the view's other axes: in place of the advanced items when
  /// they are adjacent in the index (nothing, not even an empty Ellipsis or None, between them),
  /// else first.
  int64_t position = 0;
  Shape shape;                 // the result: the view's other axes with `broadcast` at `position`
};
/// The layout of `shape` indexed by `index`. With no index array it is basic indexing (entries
/// empty, shape index_shape's). IndexError "<op>: an index can only have a single ellipsis ('...')",
/// "<op>: too many indices for array: array is <n>-dimensional, but <k> were indexed", "<op>: index <i>
/// is out of bounds for axis <d> with size <n>" (an integer), "<op>: boolean index did not match
/// indexed array along axis <d>; size of axis is <n> but size of corresponding boolean axis is <m>"
/// (m != 0: NumPy lets a bool axis of length 0 match any axis),
/// "<op>: shape mismatch: indexing arrays could not be broadcast together with shapes <s1> <s2> ...";
/// ValueError "slice step cannot be zero". The values of integer arrays are checked by the op.
AdvancedIndexLayout advanced_index_layout(const Shape& shape, const std::vector<IndexSpec>& index, const char* op);
/// A gradient `g` of a region of an array of static shape `x` written back into zeros of x's shape
/// (getitem_grad, diagonal_embed): `x`. ValueError "<op>: gradient of shape <g> does not match the
/// region's shape <region>" when ranks or known lengths differ.
Shape embed_shape(const Shape& g, const Shape& region, const Shape& x, const char* op);

// Linear algebra and nn helpers (their result shapes; matmul_shapes above).

/// NumPy outer: (size of a, size of b), each unknown unless the shape decides it (static_size).
Shape outer_shape(const Shape& a, const Shape& b);
/// NumPy diagonal: the axes axis1 and axis2 removed and the diagonal's length appended (unknown
/// unless the known lengths decide it). ValueError "<op>: the array must have at least two
/// dimensions, got shape <s>", "<op>: axis1 and axis2 cannot be the same (both are <d>)";
/// AxisError. `op` names the op in errors (trace's rule is this one).
Shape diagonal_shape(const Shape& shape, int64_t offset, int64_t axis1, int64_t axis2, const char* op = "diagonal");
/// NumPy diag: a 1-d (n,) gives (n + |k|, n + |k|), a 2-d one diagonal_shape(shape, k, 0, 1).
/// ValueError "diag: input must be 1-d or 2-d, got shape <s>", "diag: offset <k> is too large".
Shape diag_shape(const Shape& shape, int64_t k);
/// The stack of matrices a uma.linalg function `op` takes (Array API standard, linalg: "(..., M, N)",
/// "(..., M, M)" when `square`): its leading (batch) shape. ValueError "uma.linalg.<op>: x must have
/// at least 2 dimensions (a stack of matrices), got shape <s>", "uma.linalg.<op>: the last two
/// dimensions must be square, got shape <s>" (two known lengths that differ).
Shape linalg_batch_shape(const Shape& x, bool square, const char* op);
/// linalg.solve of a (..., M, M) by b: b of shape (M,) is one vector for every matrix (result
/// a.shape[:-2] + (M,)); otherwise b is (..., M, K) and the batch shapes broadcast (result
/// batch + (M, K)). Array API standard 2025.12 (NumPy 2's rule: b is a vector only when 1-d).
/// ValueError naming both shapes when b's M differs or b is 0-d; the batch_shape errors.
struct SolveShapes {
  Shape batch;       // the broadcast batch shape
  int64_t m, k;      // the system's order and its right-hand sides (1 for a vector b)
  bool vector;       // b is one (M,) vector
  Shape result;
};
SolveShapes solve_shapes(const Shape& a, const Shape& b);
/// linalg.svd of (..., M, N), K = min(M, N): U (..., M, M), S (..., K), Vh (..., N, N) when
/// full_matrices, else U (..., M, K) and Vh (..., K, N).
struct SvdShapes { Shape u, s, vh; };
SvdShapes svd_shapes(const Shape& x, bool full_matrices);
/// linalg.qr of (..., M, N), K = min(M, N): Q (..., M, M) and R (..., M, N) when complete, else
/// Q (..., M, K) and R (..., K, N).
std::pair<Shape, Shape> qr_shapes(const Shape& x, bool complete);
/// The dtype uma.linalg's LAPACK functions compute and return in (NumPy's rule, numpy.linalg
/// _commonType): float32, float64, complex64, complex128 as they are; bool and integers
/// float64. TypeError "uma.linalg.<op>: array type <t> is unsupported in linalg" for float16
/// and bfloat16 (LAPACK has no such routines).
DType linalg_dtype(DType t, const char* op);
/// The kinds of transform of uma.fft: complex to complex (fft, ifft, fftn, ifftn), real to
/// half-spectrum complex (rfft, rfftn, ihfft) and back (irfft, irfftn, hfft).
enum class FftKind { C2C, R2C, C2R };
/// The shapes of an FFT over `axes` with lengths `s` (Array API standard 2025.12, fft extension;
/// NumPy's numpy.fft where it is silent): `axes` nullopt transforms the last len(s) axes (NumPy)
/// or, with `s` nullopt too, every axis; an `s` entry of -1 keeps that axis's length. `lens`
/// are the transform lengths (the result's lengths along the axes; for C2R the last one
/// defaults to 2 * (m - 1) from the input's m), `input` the shape the input is trimmed or
/// zero-padded to (C2R: lens.back() / 2 + 1 along the last axis), `result` the result's shape
/// (R2C: lens.back() / 2 + 1 along the last axis). AxisError for an axis out of range;
/// ValueError "uma.fft.<op>: repeated axis <a> in axes <axes>", "uma.fft.<op>: s and axes must
/// have the same length, got s=<s> and axes=<axes>", "uma.fft.<op>: s has <k> entries but x has
/// only <d> dimensions", "uma.fft.<op>: Invalid number of FFT data points (<n>) specified."
/// (NumPy's words, for a length < 1), "uma.fft.<op>: needs at least one axis" (R2C and C2R).
struct FftShapes {
  std::vector<int64_t> axes;  // normalised, in the order given
  Shape lens, input, result;
};
FftShapes fft_shapes(const Shape& x, const std::optional<Shape>& s, const std::optional<std::vector<int64_t>>& axes,
                     FftKind kind, const char* op);
/// softmax / log_softmax along `axis` (`op` names which): `shape`. ValueError "<op>: needs at least
/// 1 dimension"; AxisError.
Shape softmax_shape(const Shape& shape, int64_t axis, const char* op);
/// Per-example cross-entropy of logits (N, C) with labels (N,): (N,). ValueError "<op>: logits must
/// be 2-d (batch, classes), got shape <s>", "<op>: labels must have shape (N,) to match logits <s>,
/// got <t>" (known lengths that differ).
Shape softmax_cross_entropy_shape(const Shape& logits, const Shape& labels, const char* op);
/// Its gradient for an upstream gradient `g` that broadcasts to (N,): the logits' shape. ValueError
/// "softmax_cross_entropy_grad: gradient of shape <g> does not broadcast to (N,)" and the above.
Shape softmax_cross_entropy_grad_shape(const Shape& g, const Shape& logits, const Shape& labels);
/// one_hot: indices + (depth,). ValueError "one_hot: depth must be non-negative, got <d>".
Shape one_hot_shape(const Shape& indices, int64_t depth);

/// sort / argsort along `axis` (`op` names which): `shape`. AxisError unless axis is in
/// [-ndim, ndim) (a 0-d array has no axis: NumPy's and the Array API standard's rule).
Shape sort_shape(const Shape& shape, int64_t axis, const char* op);
/// Each of nonzero's index arrays: (unknown count,). ValueError for a 0-d shape (Array API
/// standard, nonzero).
Shape nonzero_shape(const Shape& shape);
/// searchsorted(x1, x2, sorter=): x2's shape. ValueError "searchsorted: x1 must be 1-d, got shape
/// <s>", and when the sorter's shape is not x1's.
Shape searchsorted_shape(const Shape& x1, const Shape& x2, const std::optional<Shape>& sorter);

// ---- dtype inference -----------------------------------------------------------------------
/// Result dtype of a binary op on arrays of dtypes a, b (TypeError if unsupported).
DType binary_result_dtype(BinaryOp op, DType a, DType b);
/// Result dtype of a unary op on an array of dtype t (TypeError if unsupported).
DType unary_result_dtype(UnaryOp op, DType t);

// ---- creation --------------------------------------------------------------------------
/// An array of `shape` on `device` with `value` (converted to `dtype`) in every element; on a
/// cuda device one fill kernel queued on uma's stream (no transfer, no wait).
Array full(const Shape& shape, const Scalar& value, DType dtype, Device device = Device::cpu());
Array zeros(const Shape& shape, DType dtype, Device device = Device::cpu());
Array ones(const Shape& shape, DType dtype, Device device = Device::cpu());
/// NumPy arange's default dtype: int64 when every argument is an integer that int64 holds,
/// float64 otherwise (NumPy promotes intp with uint64 to float64).
DType arange_default_dtype(const Scalar& start, const Scalar& stop, const Scalar& step);
/// NumPy arange, on the host: ceil((stop - start) / step) elements (exact for integers);
/// element 0 is start and element 1 start + step, both stored in `dtype` (OverflowError when an
/// integer dtype cannot hold them), and element i >= 2 is start + i * (element 1 - element 0)
/// in the dtype's arithmetic (NumPy's fill rule: integers wrap, float32 computes in float32).
/// ValueError for step == 0, a length that cannot be computed (NaN) or that exceeds 2**62;
/// TypeError for complex arguments and for a bool range longer than 2.
Array arange(const Scalar& start, const Scalar& stop, const Scalar& step, DType dtype);
/// arange with its length `n` given (>= 0; a stop beyond 64 bits, whose length the caller
/// computed): the elements as arange's, from start and start + step.
Array arange_count(const Scalar& start, const Scalar& step, int64_t n, DType dtype);
/// NumPy linspace of scalars, on the host: `num` values from start to stop (stop excluded when
/// !endpoint) computed in float64 (complex128 for complex bounds) as start + i * step, the last
/// one exactly stop; integer dtypes take the floor first. ValueError for num < 0.
Array linspace(const Scalar& start, const Scalar& stop, int64_t num, bool endpoint, DType dtype);
Array eye(int64_t n, int64_t m, int64_t k, DType dtype);
/// A 0-d array holding `value` converted to `dtype` (OverflowError if an int is out of range).
Array scalar_array(const Scalar& value, DType dtype);

// ---- copies and casts --------------------------------------------------------------------
/// A C-contiguous copy with dtype `dtype` (values converted, never reinterpreted).
Array astype(const Array& a, DType dtype);
/// A C-contiguous copy.
Array copy(const Array& a);
/// `a` itself if C-contiguous, else a C-contiguous copy.
Array contiguous(const Array& a);
/// dst[...] = src with broadcasting and casting (NumPy's assignment rule: src's leading length-1
/// axes beyond dst's rank drop; unsafe casting); ValueError if dst is read-only or shapes
/// do not broadcast. Safe when src overlaps dst. A src on another device is moved to dst's
/// (the write asked for that transfer); dst may be any writable view, on any device.
void assign(const Array& dst, const Array& src);

// ---- elementwise -----------------------------------------------------------------------
Array binary(BinaryOp op, const Array& a, const Array& b);
Array unary(UnaryOp op, const Array& a);
/// where(cond, x, y), broadcasting all three; cond is converted to bool.
Array where(const Array& cond, const Array& x, const Array& y);
// ---- rounding and clipping ----
/// NumPy's round(a, decimals): half to even. Floats and complex: rint(a * 10**d) / 10**d
/// (d >= 0) or rint(a / 10**-d) * 10**-d (d < 0), as NumPy computes it; integers keep their
/// dtype (a copy for d >= 0; d < 0 rounds through float64); bool gives float16 (NumPy's rint
/// rule; TypeError for d != 0, as NumPy).
Array round(const Array& a, int64_t decimals);
/// NumPy's clip(a, lo, hi) with both bounds (lo, hi already of the promoted dtype rules):
/// result dtype promote(a, lo, hi); elementwise t = a < lo ? lo : a, then t > hi ? hi : t, NaN
/// in a or a bound propagates; complex order is NumPy's lexicographic one. A missing bound
/// (nullopt) makes it maximum/minimum, as numpy.clip does.
Array clip(const Array& a, const std::optional<Array>& lo, const std::optional<Array>& hi);
/// One-hot encoding: result shape indices.shape + (depth,), value 1 where index == j (rows of
/// indices outside [0, depth) are 0), in `dtype`, on the indices' device.
Array one_hot(const Array& indices, int64_t depth, DType dtype);

/// Whether `op` keeps dtype `t` (so it can join a fused chain of dtype t): arithmetic on
/// int32/int64/float32/float64 (divide and transcendental functions on floats only).
bool is_fusable(BinaryOp op, DType t) noexcept;
bool is_fusable(UnaryOp op, DType t) noexcept;
/// Whether the comparison `op` on dtype `t` can join a fused chain of dtype t as the condition
/// of a `where` (FusedInstr::select): its truth value is stored as t(1) or t(0).
bool is_fusable_condition(BinaryOp op, DType t) noexcept;
/// Evaluates a chain of elementwise ops in one pass over memory; every input has dtype
/// `dtype` and the inputs broadcast together. Equal, bit for bit, to running the ops one by
/// one. TypeError for a wrong input dtype or a non-fusable op; ValueError on bad registers or
/// shapes that do not broadcast.
Array fused_elementwise(const std::vector<Array>& inputs, const std::vector<FusedInstr>& code, DType dtype);
/// Arrays read in place: pointers to arrays the caller keeps alive for the call.
using ArrayRefs = std::span<const Array* const>;
/// fused_elementwise on arrays read in place (no copy of the inputs).
Array fused_elementwise(ArrayRefs inputs, const std::vector<FusedInstr>& code, DType dtype);
/// fused_elementwise({matmul(a, b), rest...}, code, dtype): a product with an elementwise
/// epilogue (a bias add, an activation), computed in place in the product when the chain's
/// result has the product's shape, dtype and host device (else into a new array). Bitwise
/// the ops one by one; the errors of matmul and fused_elementwise.
Array matmul_fused(const Array& a, const Array& b, ArrayRefs rest, const std::vector<FusedInstr>& code, DType dtype);
/// The chain `code` (check_fused's rules) over (reduce(op, a, axes, keepdims), rest...): the
/// reduction is register 0 and the chain its epilogue (the Program's sum_fused and mean_fused
/// steps). A sum or mean that keeps a's dtype, where the chain keeps its shape, writes one array:
/// on a cuda device one kernel where kernels/cuda allows (Note [Reduction epilogues] in
/// kernels/cuda/chain_compiler.cpp). Bit for bit reduce then fused_elementwise; their errors.
Array reduce_fused(ReduceOp op, const Array& a, const std::optional<std::vector<int64_t>>& axes, bool keepdims,
                   ArrayRefs rest, const std::vector<FusedInstr>& code, DType dtype);

// ---- one element on the host (the small-operand fast paths, for callers without arrays) ----
/// The result dtype when binary(op, a, b) of two one-element host operands of dtype `t`
/// takes its small-operand fast path (the value is then binary_one's); nullopt otherwise (the
/// general path decides, its errors included).
std::optional<DType> binary_one_dtype(BinaryOp op, DType t) noexcept;
/// *out = op(*a, *b) for operands of dtype `t` whose binary_one_dtype is set; `out` receives
/// that dtype. Bitwise the value binary() computes.
void binary_one(BinaryOp op, DType t, const void* a, const void* b, void* out);
/// True when fused_elementwise with `n_inputs` inputs of dtype `dtype` raises no error about
/// `code` (registers, fusable ops).
bool fused_code_ok(int n_inputs, const std::vector<FusedInstr>& code, DType dtype) noexcept;
/// The errors fused_elementwise raises about `code` for `n_inputs` inputs of dtype `dtype`
/// (ValueError for registers and misplaced comparisons, TypeError for non-fusable ops).
void check_fused_code(int n_inputs, const std::vector<FusedInstr>& code, DType dtype);
/// fused_elementwise on one element per input: `inputs[i]` points to input i's value (dtype
/// `dtype`, host memory), the result goes to `*out`; `code` must pass fused_code_ok. Bitwise
/// the value fused_elementwise computes.
void fused_one(const void* const* inputs, int n_inputs, const std::vector<FusedInstr>& code, DType dtype, void* out);

// ---- neural-network helpers --------------------------------------------------------------
/// Per-example softmax cross-entropy of logits (N, C) float32/float64 with integer labels
/// (N,): log(sum_j exp(z_ij)) - z_{i, y_i}, shape (N,), the logits' dtype. ValueError for a
/// label outside [0, C) or mismatched shapes; TypeError for non-float logits or non-integer
/// labels. (TensorFlow's sparse_softmax_cross_entropy_with_logits; PyTorch's cross_entropy
/// with reduction='none'.)
///
/// `check_labels = false` defers the label check on a cuda device: the op then neither checks
/// the labels nor waits for the device's stream (rows with a label out of range come out NaN),
/// and the caller must call check_labels() before it uses or stores the result. The cuda
/// linker does that once per call, after the whole step is queued and before any update is
/// written, so a step waits for the GPU once instead of once per cross-entropy node. On the
/// CPU the labels are always checked.
Array softmax_cross_entropy(const Array& logits, const Array& labels, bool check_labels = true);
/// Its gradient with respect to the logits for an upstream gradient `grad` of shape (N,)
/// (or broadcastable to it): grad_i * (softmax(z)_ij - [j == y_i]), shape (N, C).
/// `check_labels` as for softmax_cross_entropy.
Array softmax_cross_entropy_grad(const Array& grad, const Array& logits, const Array& labels,
                                 bool check_labels = true);
/// -sum(one_hot(labels, depth) * log_softmax(logits, axis=1), axis=1) in one pass per row:
/// softmax_cross_entropy where the label is in [0, depth), 0 where it is outside (one_hot's zero
/// row). Where `depth` is not the logits' class count it is that product: depth 1 broadcasts
/// one_hot's column, other depths are the product's ValueError. The closed form the cpu linker's
/// closed_forms pass puts in place of that product; cpu only.
Array one_hot_cross_entropy(const Array& logits, const Array& labels, int64_t depth);
/// Its gradient with respect to the logits: softmax_cross_entropy_grad's rows where the label is
/// in [0, depth), zero rows elsewhere (shape (N, depth); the product form's gradient where
/// `depth` is not the class count).
Array one_hot_cross_entropy_grad(const Array& grad, const Array& logits, const Array& labels, int64_t depth);
/// ValueError naming the first of the integer `labels` (1-d) outside [0, nclasses) and its
/// position (`op` names the op in the message); TypeError for non-integer labels. On a cuda
/// device this waits for the device's stream and reads a 4-byte status word (not an array
/// transfer: it is not counted in memory_stats' transfer bytes).
void check_labels(const char* op, const Array& labels, int64_t nclasses);

// ---- reductions --------------------------------------------------------------------------
/// Reduces over `axes` (nullopt: all axes). ArgMax/ArgMin accept one axis or none.
Array reduce(ReduceOp op, const Array& a, const std::optional<std::vector<int64_t>>& axes, bool keepdims);

// ---- linear algebra ----------------------------------------------------------------------
/// NumPy matmul semantics (1-D promotion, batch broadcasting); BLAS for float32/float64.
Array matmul(const Array& a, const Array& b);
/// How float32 and complex64 products run on cuda devices (cuBLAS). Highest (the default, as
/// PyTorch's): exact float32 arithmetic. TF32: the inputs rounded to TF32 (10-bit mantissa)
/// on the tensor cores, float32 accumulation (JAX's default precision on Ampere and later
/// GPUs; about 1e-3 relative error). Host products and other dtypes are exact either way.
enum class MatmulPrecision : int { Highest = 0, TF32 = 1 };
/// Process-wide; takes effect for products queued afterwards (a cuda Program's recorded
/// graphs are per precision: Note [Program graphs]).
void set_cuda_matmul_precision(MatmulPrecision p) noexcept;
MatmulPrecision cuda_matmul_precision() noexcept;
/// What the cuda chain compiler did in this process (uma.cuda's test hook). A fused chain over
/// a blocked space (every operand contiguous, a scalar, or repeated along axes) runs a kernel
/// generated for it and compiled with NVRTC at its first launch (Note [Generated chain kernels]
/// in kernels/cuda/chain_compiler.cpp); where NVRTC or the CUDA headers are missing, or
/// UMA_CUDA_CHAIN_KERNELS=0, the instruction-interpreting kernel runs it, with the same results.
/// `generated`: chains given a generated kernel (compiled, or loaded from the on-disk image
/// cache, Note [Kernel image cache]: `from_disk` of them); `interpreted`: chains that fell
/// back; `epilogues`: products given a generated kernel that runs their chain on each output
/// element (Note [Epilogue kernels]); `reduce_epilogues`: likewise column sums and means (Note
/// [Reduction epilogues]); `reason`: why the first fell back ("" when none did).
struct ChainKernelStats {
  int64_t generated = 0, epilogues = 0, reduce_epilogues = 0, interpreted = 0;
  int64_t from_disk = 0;  // of the generated: kernels loaded from the image cache, not compiled
  int64_t scaled_updates = 0;  // products whose chain C + s * P ran as cuBLASLt's alpha and beta
  std::string reason;
};
ChainKernelStats cuda_chain_kernel_stats();

// ---- shape -----------------------------------------------------------------------------
/// Reshape; one dimension may be -1. A view when the layout allows, else a copy.
Array reshape(const Array& a, const Shape& shape);
/// The axes permuted by `axes` (one entry per axis; ValueError otherwise, NumPy's rule). A view.
Array transpose(const Array& a, const std::vector<int64_t>& axes);
/// The axes reversed (NumPy's transpose(a), a.T). A view.
Array transpose(const Array& a);
/// Broadcast view (read-only, as in NumPy).
Array broadcast_to(const Array& a, const Shape& shape);
Array concatenate(const std::vector<Array>& arrays, int64_t axis);
Array stack(const std::vector<Array>& arrays, int64_t axis);
Array expand_dims(const Array& a, int64_t axis);
/// Remove the size-1 axes `axes` (nullopt: all of them; squeezed_axes).
Array squeeze(const Array& a, const std::optional<std::vector<int64_t>>& axes);

// ---- indexing ----------------------------------------------------------------------------
/// Basic indexing (ints, slices, None, Ellipsis): always a view.
Array getitem(const Array& a, const std::vector<IndexItem>& index);
/// a[key] with NumPy's semantics (numpy.org, "Indexing on ndarrays"): basic indexing (a view)
/// when the key holds no index array, else advanced indexing (a copy, C-contiguous, a's dtype),
/// shaped by advanced_index_layout, with its errors; IndexError "<op>: index <i> is out of bounds
/// for axis <d> with size <n>" for an integer-array value outside [-n, n), "arrays used as indices
/// must be of integer (or boolean) type, got <dtype>". Index arrays may be on a's device or the
/// host (Note [Index arrays and devices]). On a cuda array only one integer array among full
/// slices and one bool mask over the leading axes (take, mask_select) are supported;
/// RuntimeError for the others.
Array index(const Array& a, const std::vector<IndexKey>& key);
/// a[key] = value in place, with NumPy's semantics: the region index(a, key) selects (a view for
/// basic keys, the selected elements for advanced ones) receives `value` by assign's rule
/// (broadcasting, NumPy's unsafe casting); repeated indices: the last write in C order wins.
/// ValueError "assignment destination is read-only"; index(a, key)'s errors. Advanced keys on
/// the cpu only (RuntimeError on a cuda array).
void index_assign(const Array& a, const std::vector<IndexKey>& key, const Array& value);

// ---- reductions, linear algebra, shape, indexing and nn helpers on every dtype ------------
// NumPy 2 semantics; errors name the op and the bad value.

/// Result dtype of a reduction (NumPy 2): sum/prod of bool and signed ints -> int64, of
/// unsigned ints -> uint64; mean of bool/ints -> float64; max/min keep the dtype; argmax/
/// argmin -> int64; all/any -> bool.
DType reduce_result_dtype(ReduceOp op, DType t) noexcept;
/// Result dtype of var, std and logsumexp (NumPy 2): the real dtype of a complex dtype, a float
/// dtype itself, float64 for bool and integers.
DType stat_result_dtype(DType t) noexcept;
/// The reduction named `name` (its eager function's name, UMA_REDUCE_OPS), if any.
std::optional<ReduceOp> reduce_op_named(std::string_view name) noexcept;
/// Variance over `axes` (nullopt: all) with NumPy's ddof: sum(|x - mean|^2) / max(n - ddof, 0).
/// Result: float64 for bool/ints, the real dtype of complex inputs, else the input's dtype.
Array var(const Array& a, const std::optional<std::vector<int64_t>>& axes, double ddof, bool keepdims);
/// sqrt(var(...)), same dtype rule.
Array std_dev(const Array& a, const std::optional<std::vector<int64_t>>& axes, double ddof, bool keepdims);
/// log(sum(exp(a))) over `axes`, computed stably (scipy.special.logsumexp). Real inputs:
/// float64 for bool/ints, else the input's float dtype; TypeError for complex.
Array logsumexp(const Array& a, const std::optional<std::vector<int64_t>>& axes, bool keepdims);
/// Cumulative sum/product along `axis` (nullopt: of the flattened array), dtype as sum's.
Array cumsum(const Array& a, std::optional<int64_t> axis);
Array cumprod(const Array& a, std::optional<int64_t> axis);

/// Outer product of the flattened inputs: out[i, j] = a[i] * b[j] (promoted dtype).
Array outer(const Array& a, const Array& b);
/// 1-D v -> 2-D array with v on diagonal k; 2-D -> a copy of its diagonal k (NumPy diag).
/// ValueError for other ranks.
Array diag(const Array& a, int64_t k);
/// View of the diagonal `offset` of the axes axis1/axis2, appended as the last axis (NumPy
/// diagonal; read-only). ValueError if ndim < 2 or axis1 == axis2.
Array diagonal(const Array& a, int64_t offset, int64_t axis1, int64_t axis2);
/// sum(diagonal(a, offset, axis1, axis2), axis=-1) (NumPy trace; dtype as sum's).
Array trace(const Array& a, int64_t offset, int64_t axis1, int64_t axis2);

// The uma.linalg functions that factorise matrices (LAPACK from OpenBLAS, cpu only): each takes a
// stack of matrices (..., M, N) of any dtype linalg_dtype accepts, works in that dtype, and
// raises the shape errors of linalg_batch_shape, the TypeError of linalg_dtype, RuntimeError for
// an array on a cuda device, and LinAlgError (ErrorKind::LinAlg) where LAPACK fails on a matrix.
// Array API standard 2025.12, linear algebra extension; NumPy 2's numpy.linalg for the details.
namespace linalg {
/// The inverse of each (..., M, M) matrix. LinAlgError for a singular matrix.
Array inv(const Array& x);
/// The solution X of a X = b (shapes: solve_shapes; dtype: linalg_dtype of the promoted dtype).
/// LinAlgError for a singular matrix.
Array solve(const Array& a, const Array& b);
/// sign and log|det| of each (..., M, M) matrix, shape (...): sign has the dtype (0 for a
/// singular matrix, a unit complex number for complex), logabsdet its real dtype (-inf when singular).
std::pair<Array, Array> slogdet(const Array& x);
/// det = sign * exp(logabsdet) of each (..., M, M) matrix, shape (...).
Array det(const Array& x);
/// The Cholesky factor of each Hermitian positive-definite (..., M, M) matrix: lower L with
/// x = L L^H, or upper U = L^H; reads the lower triangle (the upper one when `upper`). LinAlgError
/// when a matrix is not positive definite.
Array cholesky(const Array& x, bool upper);
/// Eigenvalues (..., M) (real dtype, ascending) and eigenvectors (..., M, M) (columns) of each
/// Hermitian matrix, its lower triangle read. LinAlgError when LAPACK does not converge.
std::pair<Array, Array> eigh(const Array& x);
/// The eigenvalues of eigh alone.
Array eigvalsh(const Array& x);
/// Eigenvalues (..., M) and right eigenvectors (..., M, M) (columns of unit norm) of each general
/// square matrix, both of the complex dtype of x's precision (float32 -> complex64), the
/// eigenvalues in no particular order (LAPACK geev on the complex matrix). LinAlgError when
/// LAPACK does not converge.
std::pair<Array, Array> eig(const Array& x);
/// The eigenvalues of eig alone.
Array eigvals(const Array& x);
/// U, S, Vh with x = U diag(S) Vh (shapes: svd_shapes; S real, descending). LinAlgError when
/// LAPACK does not converge.
std::tuple<Array, Array, Array> svd(const Array& x, bool full_matrices);
/// The singular values of svd alone, (..., K).
Array svdvals(const Array& x);
/// Q, R with x = Q R (shapes: qr_shapes). `mode`: "reduced" or "complete" (ValueError otherwise).
std::pair<Array, Array> qr(const Array& x, std::string_view mode);
}  // namespace linalg

// uma.fft: the fft extension of the Array API standard 2025.12 (NumPy 2's numpy.fft for what it
// leaves open). Shapes: fft_shapes. Dtypes: float32 (float16, bfloat16 computed as float32) gives
// complex64, float64 complex128, complex stays; c2r transforms (irfft, irfftn, hfft) give the real
// dtype of that precision. TypeError for bool and integer inputs (the standard requires floating
// ones) and for complex input to rfft, rfftn and ihfft; ValueError for a `norm` other than
// "backward", "ortho" and "forward". `norm` scales the forward transform by 1 ("backward"),
// 1/sqrt(N) ("ortho") or 1/N ("forward"), N the product of the transform lengths, and the inverse
// by the reciprocal choice. cpu: pocketfft; cuda: cuFFT (kernels/cuda/cufft.cpp).
namespace fft {
/// The one-dimensional transforms along `axis`; `n` the transform length (nullopt: the axis's
/// length, 2 * (m - 1) for irfft and hfft), the input trimmed or zero-padded to it.
Array fft(const Array& x, std::optional<int64_t> n, int64_t axis, std::string_view norm);
Array ifft(const Array& x, std::optional<int64_t> n, int64_t axis, std::string_view norm);
Array rfft(const Array& x, std::optional<int64_t> n, int64_t axis, std::string_view norm);
Array irfft(const Array& x, std::optional<int64_t> n, int64_t axis, std::string_view norm);
/// The transform of a Hermitian-symmetric signal given by its first half (a real result).
Array hfft(const Array& x, std::optional<int64_t> n, int64_t axis, std::string_view norm);
/// hfft's inverse: the half spectrum of a real signal, conj(rfft) with the inverse's scale.
Array ihfft(const Array& x, std::optional<int64_t> n, int64_t axis, std::string_view norm);
/// The n-dimensional transforms over `axes` with lengths `s` (fft_shapes).
Array fftn(const Array& x, const std::optional<Shape>& s, const std::optional<std::vector<int64_t>>& axes,
           std::string_view norm);
Array ifftn(const Array& x, const std::optional<Shape>& s, const std::optional<std::vector<int64_t>>& axes,
            std::string_view norm);
Array rfftn(const Array& x, const std::optional<Shape>& s, const std::optional<std::vector<int64_t>>& axes,
            std::string_view norm);
Array irfftn(const Array& x, const std::optional<Shape>& s, const std::optional<std::vector<int64_t>>& axes,
             std::string_view norm);
/// The sample frequencies (n,) of fft: [0, 1, ..., (n - 1) // 2, -(n // 2), ..., -1] / (d * n),
/// and (n // 2 + 1,) of rfft: [0, 1, ..., n // 2] / (d * n), computed in float64 and converted to
/// `dtype` (a real floating dtype: TypeError otherwise) on `device`. ValueError for n < 1.
Array fftfreq(int64_t n, double d, DType dtype, Device device);
Array rfftfreq(int64_t n, double d, DType dtype, Device device);
}  // namespace fft

/// np.split with split points `indices` (clamped like slices): views of `a` along `axis`.
std::vector<Array> split_at(const Array& a, const std::vector<int64_t>& indices, int64_t axis);
/// np.split into `sections` equal parts; ValueError when the axis does not divide equally.
std::vector<Array> split_sections(const Array& a, int64_t sections, int64_t axis);

/// np.take: elements of `a` at integer `indices` along `axis` (nullopt: of the flattened
/// array); negative indices count from the end. IndexError naming the bad index; TypeError
/// for non-integer indices. Shape a.shape[:axis] + indices.shape + a.shape[axis+1:].
/// On a's device; index arrays and masks may be on a's device or on the host (RuntimeError
/// otherwise; Note [Index arrays and devices] in ops/indexing.cpp).
Array take(const Array& a, const Array& indices, std::optional<int64_t> axis);
/// a[mask] for a bool mask whose shape equals a.shape[:mask.ndim]: shape (count,) +
/// a.shape[mask.ndim:], C order. IndexError on a shape mismatch, TypeError for non-bool masks.
Array mask_select(const Array& a, const Array& mask);
/// Functional updates (PyTensor's set_subtensor / inc_subtensor): a copy of x with the region
/// x[index] replaced by y (inc: incremented by y; repeated integer indices accumulate, as
/// np.add.at). y broadcasts to the region's shape (ValueError otherwise) and is converted to
/// x's dtype (TypeError unless the cast is same_kind). x and y follow the device rule of the
/// elementwise ops (0-d host arrays join a cuda x); the result is on x's device.
Array update_basic(const Array& x, const std::vector<IndexItem>& index, const Array& y, bool inc);
Array update_take(const Array& x, const Array& indices, int64_t axis, const Array& y, bool inc);
Array update_mask(const Array& x, const Array& mask, const Array& y, bool inc);

// ---- sorting, sets and searching (Array API standard 2025.12; NumPy's order, Note [Sort order]
// in kernels/cpu/sort.cpp: NaN last, complex lexicographic). Host arrays only for now: a cuda
// array is a RuntimeError naming the function and saying to move it to the cpu.

/// A sorted copy of `x` along `axis` (its dtype and shape); `descending` reverses the order
/// (NaN first); `stable` keeps equal elements in their original order (both directions).
/// sort_shape's AxisError.
Array sort(const Array& x, int64_t axis, bool descending, bool stable);
/// The int64 positions along `axis` that sort `x` as sort() does (x's shape).
Array argsort(const Array& x, int64_t axis, bool descending, bool stable);
/// The unique values of `x` flattened (C order), ascending: `values` (x's dtype, 1-d); when asked
/// for, `indices` (int64, the first occurrence of each value in the flattened x),
/// `inverse_indices` (int64, x's shape: the position in `values` of each element) and `counts`
/// (int64). Value equality as `==`: -0.0 and 0.0 are one value (the first occurrence's kept),
/// each NaN (each complex with a NaN part) its own (Array API standard, unique_all).
struct UniqueResult {
  Array values, indices, inverse_indices, counts;
};
/// `op` names the function in errors.
UniqueResult unique(const Array& x, bool want_indices, bool want_inverse, bool want_counts,
                    const char* op = "unique_all");
/// The int64 indices of the non-zero elements of `x`, one array per axis, in C order (NaN is
/// non-zero; a complex element is non-zero when either part is). nonzero_shape's ValueError for
/// a 0-d x. On a cuda array too (composed of the mask and arithmetic kernels).
std::vector<Array> nonzero(const Array& x);
/// The int64 insertion points (x2's shape) of x2's elements into the 1-d `x1`, ascending (or
/// ascending through the integer permutation `sorter`): side left (the first i with
/// !(x1[i] < v)) or `right` (the first i with v < x1[i]), in the order of sort(). Both are
/// compared in their promoted dtype. searchsorted_shape's ValueError; ValueError for a sorter
/// index outside [0, n); TypeError for a non-integer sorter.
Array searchsorted(const Array& x1, const Array& x2, bool right, const std::optional<Array>& sorter);

/// softmax (log_softmax when `log`) along `axis`, stable (the maximum is subtracted);
/// float16/bfloat16 are computed in float32. TypeError for non-float inputs.
Array softmax(const Array& x, int64_t axis, bool log);
/// maximum(x, 0) (NaN propagates); float16/bfloat16 computed in float32.
Array relu(const Array& x);

}  // namespace ops
}  // namespace uma
