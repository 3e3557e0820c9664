// src/kernels/cuda/sort_launch.h — plain-C++ launchers of the sorting, searching and unique
// kernels (internal). Free of uma headers but uma/bool8.h (nvcc compiles the .cu files in
// C++17); dtype codes are the integer values of uma::DType (kernels/cuda/support.h). Each
// returns a cudaError_t (0 on success) and queues its work on `stream` without waiting.
//
// Note [Radix keys]
// The device sorts by unsigned radix keys whose order is NumPy's sort order (Note [Sort order]
// in kernels/cpu/sort.cpp): bool as 0/1; signed integers with the sign bit flipped; floats
// (float16 and bfloat16 through float32) with the usual sign-magnitude flip, -0.0 read as 0.0
// (a tie) and every NaN as the all-ones key (after +inf; NaNs tie). 32-bit keys for dtypes up to
// 32 bits, 64-bit keys for the 64-bit ones. Complex values order by NumPy's NaN class first
// (R + Rj, R + nanj, nan + Rj, nan + nanj), then lexicographically: complex64 in one 64-bit key
// that holds all three (sort.cu, complex64_key), complex128 in three stable passes of 64-bit
// keys (the imaginary part's, the real part's, the class). Descending order is the descending
// key order, stable: NaN first, equal elements in their original order.
#pragma once
#include <cstddef>
#include <cstdint>

#include "uma/bool8.h"

namespace uma::kernels::cuda_launch {

/// The radix key width of a dtype (Note [Radix keys]): 32 or 64 bits; complex128: 64 (two passes).
int radix_key_bits(int dtype);

/// keys[i] = the radix key of x[i] (n elements of `dtype`; uint32 or uint64 keys as
/// radix_key_bits). For complex128, `part` 1 keys the real parts, 2 the imaginary parts, 3 the
/// NaN classes;
/// with `perm` (nullable) the element read for row r = i / row_len is x[r * row_len + perm[i]].
int radix_keys(int dtype, const void* x, const int64_t* perm, int64_t row_len, void* keys, int64_t n, int part,
               void* stream);

/// offsets[r] = r * row_len for r <= rows; values[i] = i % row_len for i < rows * row_len.
int row_setup(int64_t* offsets, int64_t rows, int64_t row_len, int64_t* values, void* stream);

/// CUB's segmented stable sort of (key, value) pairs: rows of row_len entries (offsets from
/// row_setup), keys of `key_bits` bits (32 or 64), ascending or descending; equal keys keep their
/// input order. Two-phase: with `ws` nullptr only *ws_bytes is set.
int segmented_sort(void* ws, std::size_t* ws_bytes, int key_bits, bool descending, const void* keys_in,
                   void* keys_out, const int64_t* values_in, int64_t* values_out, int64_t n, int64_t rows,
                   const int64_t* offsets, void* stream);

/// out[i] = x[r * row_len + perm[i]] for r = i / row_len (elements of `itemsize` bytes; `as_bool`:
/// bytes written as 0 or 1).
int gather_rows(const void* x, const int64_t* perm, void* out, int64_t n, int64_t row_len, int itemsize,
                bool as_bool, void* stream);

/// out[j] = the insertion point of v[j] (m elements) into x (n elements of `dtype`, ascending in
/// NumPy's order when read through `sorter`, nullable): the first i with !(x[i] < v) (left) or
/// v < x[i] (right).
int search_sorted(int dtype, const void* x, const int64_t* sorter, int64_t n, const void* v, int64_t m, bool right,
                  int64_t* out, void* stream);

/// *first_bad (preset to UINT64_MAX by the caller) = the smallest i with idx[i] outside [0, n).
int first_outside(const int64_t* idx, int64_t m, int64_t n, unsigned long long* first_bad, void* stream);

/// flags[p] = 1 where sorted element p (n elements of `dtype`) starts a group of equal values
/// (the standard's `==`: -0.0 == 0.0, NaN equal to nothing), else 0.
int group_starts(int dtype, const void* sorted, int64_t* flags, int64_t n, void* stream);
/// In place inclusive sum of `vals` (n int64). Two-phase as segmented_sort.
int inclusive_sum(void* ws, std::size_t* ws_bytes, int64_t* vals, int64_t n, void* stream);
/// From the inclusive sum `gid` of group_starts' flags and the stable sort's permutation `perm`:
/// starts[g] = the first sorted position of group g; inverse[perm[p]] = gid[p] - 1 (nullable).
int group_layout(const int64_t* gid, const int64_t* perm, int64_t n, int64_t* starts, int64_t* inverse, void* stream);
/// For g < groups: values[g] = sorted[starts[g]] (itemsize bytes, `as_bool` as gather_rows),
/// indices[g] = perm[starts[g]], counts[g] = the group's length (each output nullable).
int group_outputs(const void* sorted, const int64_t* perm, const int64_t* starts, int64_t groups, int64_t n,
                  void* values, int itemsize, bool as_bool, int64_t* indices, int64_t* counts, void* stream);

}  // namespace uma::kernels::cuda_launch
