// src/kernels/cuda/index_launch.h — plain-C++ launchers of the indexing, one_hot and integer
// matmul kernels (internal). Free of uma headers but uma/bool8.h, plain C++17 (nvcc compiles
// the .cu files in C++17); dtype codes are the integer values of uma::DType
// (kernels/cuda/support.h); a bool element is a bool8 (byte != 0). Each returns a
// cudaError_t (0 on success) and queues its work on `stream` (a cudaStream_t) without waiting.
//
// Indexed operands are seen as C-contiguous (outer, n, inner) blocks, the indexed axis in the
// middle (as kernels/cpu/index.cpp).
#pragma once
#include <cstddef>
#include <cstdint>

#include "kernels/cuda/launch.h"
#include "kernels/cuda/ops_launch.h"
#include "uma/bool8.h"

namespace uma::kernels::cuda_launch {

/// Checks the int64 indices idx[0..m) against an axis of length n (bad: outside [-n, n), or,
/// with `from_uint64`, negative: a uint64 index >= 2**63) and wraps the good negative ones in
/// place (+ n). *first_bad (device, preset to INT64_MAX by the caller) becomes the smallest
/// position of a bad index.
int normalize_indices(int64_t* idx, int64_t m, int64_t n, bool from_uint64, unsigned long long* first_bad,
                      void* stream);

/// out[o, j, k] = src[o, idx[j], k] for o < outer, j < m, k < inner; elements of `itemsize`
/// bytes (1, 2, 4, 8 or 16); idx in [0, n).
int gather(const void* src, const int64_t* idx, void* out, int64_t outer, int64_t n, int64_t m, int64_t inner,
           int itemsize, void* stream);

/// NumPy's advanced-indexing gather (kernels::cpu::gather's contract): `rest` is a strided view
/// (g: its shape, merged where contiguous, and byte strides), seen as (outer, inner) with
/// n_inner elements per outer row in C order; out (outer, m, inner), C-contiguous, at (i, j, k)
/// = the element of rest at flat position i * n_inner + k moved by offsets[j] elements.
int gather_picks(const void* rest, const int64_t* offsets, void* out, const StridedGeometry& g, int64_t n_inner,
                 int64_t m, int itemsize, void* stream);
/// The inverse: the element of rest gather_picks reads at (i, j, k) = src[i, j, k], for the j
/// with keep[j] true (keep nullptr: every j). keep marks the last j of each run of equal
/// offsets, so the write order of the cpu kernel (src's C order: the last write wins) is kept
/// without two threads writing one element.
int scatter_picks(void* rest, const int64_t* offsets, const bool8* keep, const void* src, const StridedGeometry& g,
                  int64_t n_inner, int64_t m, int itemsize, void* stream);
/// keys[j] = offsets[j] as a uint64 whose unsigned order is the signed order of the int64 (the
/// sign bit flipped), for j < m.
int order_keys(const int64_t* offsets, uint64_t* keys, int64_t m, void* stream);
/// keep[vals[p]] = whether sorted position p is the last of its run of equal keys (keys
/// ascending, vals the source positions of a stable sort), for p < m.
int mark_last(const uint64_t* keys, const int64_t* vals, bool8* keep, int64_t m, void* stream);

/// The segments of a scatter: `keys` (m entries, ascending) are destination rows in [0, n),
/// `vals[p]` the source row written or added at keys[p] (nullptr: vals[p] = p); equal keys are
/// adjacent with their source rows in increasing order. For every (o, segment, k):
/// set: dst[o, key, k] = src[o, last source row of the segment, k];
/// accumulate: dst[o, key, k] += src[o, r, k] for the segment's rows r in order, each addition
/// rounded to the dtype (NumPy's add: bool is or, integers wrap, float16/bfloat16 add in float32).
/// One thread per (o, segment, k): deterministic, no atomics. set dispatches on itemsize,
/// accumulate on `dtype`.
int scatter_segments(void* dst, const void* src, const uint64_t* keys, const int64_t* vals, int64_t outer, int64_t n,
                     int64_t m, int64_t inner, int dtype, int itemsize, bool accumulate, void* stream);

/// CUB-style two-phase calls: with `ws` nullptr only *ws_bytes is set (the workspace size);
/// then called again with a device workspace of that size.
///
/// Sorts the (key, value) pairs (m entries) stably by key: keys_out ascending, values of equal
/// keys in their input order. Keys use their low `key_bits` bits.
int sort_pairs(void* ws, std::size_t* ws_bytes, const uint64_t* keys_in, uint64_t* keys_out, const int64_t* values_in,
               int64_t* values_out, int64_t m, int key_bits, void* stream);
/// values[i] = i for i < m.
int iota(int64_t* values, int64_t m, void* stream);

/// counts[i] = number of true entries (bytes other than 0) in mask[0..i] (int64, n entries;
/// an inclusive scan).
int mask_count(void* ws, std::size_t* ws_bytes, const bool8* mask, int64_t* counts, int64_t n, void* stream);
/// pos[counts[i] - 1] = i for every true mask[i] (counts from mask_count).
int mask_compact(const bool8* mask, const int64_t* counts, int64_t* pos, int64_t n, void* stream);

/// out[i, c] = (idx[i] == c ? one : 0) for i < m, c < depth: `one` holds the dtype's 1
/// (`itemsize` bytes, 1 to 16); out C-contiguous (m, depth). Indices outside [0, depth) give a
/// row of zeros.
int one_hot(const int64_t* idx, int64_t m, int64_t depth, const unsigned char* one, int itemsize, void* out,
            void* stream);

/// uma's tiled matrix products (TiledGemm, kernels/cuda/ops_launch.h): bool and integer
/// dtypes accumulate as kernels::cpu::gemm does (integers in unsigned 64-bit arithmetic,
/// wrapping, then truncated to the dtype; bool: or of ands); float32 and float64 with fused
/// multiply-adds in their own type, k in order.
int tiled_matmul(int dtype, const void* a, const void* b, void* out, const TiledGemm& g, void* stream);

/// The address on the current device of a constant 1 (float64 when `f64`, else float32): the
/// beta of cuBLASLt's products with device pointers (Note [Scaled updates] in
/// kernels/cuda/cublas.cpp); null where the lookup fails.
const void* device_one(bool f64);

}  // namespace uma::kernels::cuda_launch
