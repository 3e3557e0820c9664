// src/kernels/float_to_int.h — float -> integer conversion of every value, NaN and out of range
// included (UB in C++), as NumPy's casts give it on x86-64: the one definition the cpu kernels
// (cpu/convert.h) and the cuda kernels (cuda/cast_where.cu) both use. Plain C++, host and
// device (internal).
//
// One rule for every float dtype: a float16, bfloat16 or float32 value is exactly a double, and
// is converted as that double (so bfloat16 -> uint8 of -3.0 is 253, as float32's; tests compute
// the rule, never a package's bfloat16 casts). Checked against NumPy 2 for float64 and float32
// sources (NaN, inf and out-of-range values make NumPy warn "invalid value encountered in
// cast"): 8- and 16-bit targets go through int32,
// then are truncated (NaN -> 0); int32 and int64 give their indefinite; uint64 from [2^63, inf)
// is int64 of v - 2^63 with the top bit flipped (inf -> 0), below that through int64 (negatives
// wrap, NaN -> 2^63); uint32 through int64, truncated (NaN -> 0). NumPy's own uint32 results
// differ between its element-at-a-time and its vectorised loops (NaN gives 0 or 2^31 depending
// on the array's length); uma gives the former.
#pragma once
#include <cstdint>
#include <type_traits>

#ifdef __CUDACC__
#define UMA_F2I_HD __host__ __device__ __forceinline__
#else
#define UMA_F2I_HD inline
#endif

namespace uma::kernels {

// x86-64's truncating conversions (cvttsd2si): NaN and values out of range give the "integer
// indefinite", the minimum of the register width.
UMA_F2I_HD int32_t truncate_to_int32(double v) {
  return v >= -2147483648.0 && v < 2147483648.0 ? static_cast<int32_t>(v) : INT32_MIN;
}
UMA_F2I_HD int64_t truncate_to_int64(double v) {
  return v >= -9223372036854775808.0 && v < 9223372036854775808.0 ? static_cast<int64_t>(v) : INT64_MIN;
}

/// `v` converted to the integer type D (not bool) by the rules above.
template <class D>
UMA_F2I_HD D float_to_int(double v) {
  constexpr double two63 = 9223372036854775808.0;
  if constexpr (sizeof(D) <= 2) {
    return static_cast<D>(truncate_to_int32(v));
  } else if constexpr (std::is_signed_v<D> && sizeof(D) == 4) {
    return truncate_to_int32(v);
  } else if constexpr (std::is_signed_v<D>) {
    return truncate_to_int64(v);
  } else if constexpr (sizeof(D) == 8) {
    return v >= two63 ? static_cast<D>(truncate_to_int64(v - two63)) ^ (D{1} << 63)
                      : static_cast<D>(truncate_to_int64(v));
  } else {
    return static_cast<D>(truncate_to_int64(v));
  }
}

}  // namespace uma::kernels

#undef UMA_F2I_HD
