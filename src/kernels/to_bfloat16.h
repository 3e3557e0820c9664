// src/kernels/to_bfloat16.h — conversion of float64 and 64-bit integer values to bfloat16,
// rounded once to nearest even: the one definition the cpu kernels (cpu/convert.h) and the
// cuda kernels (cuda/cast_where.cu) both use. Plain C++ on bits, host and device (internal).
//
// bfloat16 keeps 8 significant bits and float32's exponent range (normal from 2^-126,
// subnormal steps of 2^-133). Going through float32 first rounds twice: 1 + 2^-8 + 2^-30 is
// 1.0 that way, 1.0078125 rounded once (ml_dtypes' value). float32 sources round once already
// (bfloat16::from_float). Integers wider than 53 bits are first rounded to odd at 53 bits,
// which is exact for the final rounding to 8 bits (round-to-odd keeps the sticky bit).
#pragma once
#include <cstdint>
#include <cstring>

#ifdef __CUDACC__
#define UMA_BF16_HD __host__ __device__ __forceinline__
#else
#define UMA_BF16_HD inline
#endif

namespace uma::kernels {

/// The bfloat16 bits of `d` rounded once to nearest even (NaN stays a quiet NaN of its sign,
/// values beyond the largest bfloat16 by half an ulp or more become infinity).
UMA_BF16_HD uint16_t bfloat16_bits(double d) {
  uint64_t u;
  std::memcpy(&u, &d, sizeof u);
  const uint16_t sign = static_cast<uint16_t>((u >> 48) & 0x8000u);
  const int biased = static_cast<int>((u >> 52) & 0x7ff);
  const uint64_t frac = u & ((uint64_t{1} << 52) - 1);
  if (biased == 0x7ff) return static_cast<uint16_t>(sign | (frac ? 0x7fc0u : 0x7f80u));
  if (biased == 0) return sign;  // zero and float64 subnormals (below 2^-1022): +-0
  const int e = biased - 1023;                        // d = sig * 2^(e - 52)
  const uint64_t sig = (uint64_t{1} << 52) | frac;    // 53 bits
  // Keep 8 bits for a normal result; a subnormal one keeps fewer (its steps are 2^-133).
  const int shift = 45 + (e < -126 ? -126 - e : 0);
  if (shift > 54) return sign;  // below 2^-134: rounds to 0
  uint64_t kept = sig >> shift;
  const uint64_t rest = sig & ((uint64_t{1} << shift) - 1), half = uint64_t{1} << (shift - 1);
  if (rest > half || (rest == half && (kept & 1))) ++kept;
  if (e < -126) return static_cast<uint16_t>(sign | kept);  // kept == 128 is the smallest normal
  int exponent = e;
  if (kept == 256) {  // rounded up to the next power of two
    kept = 128;
    ++exponent;
  }
  if (exponent > 127) return static_cast<uint16_t>(sign | 0x7f80u);
  return static_cast<uint16_t>(sign | (static_cast<uint32_t>(exponent + 127) << 7) | (kept & 0x7f));
}

/// The bfloat16 bits of the integer `negative ? -magnitude : magnitude`, rounded once.
UMA_BF16_HD uint16_t bfloat16_bits_of_integer(uint64_t magnitude, bool negative) {
  if (magnitude >> 53) {  // round to odd at 53 bits: exactly representable as a double
    int width = 64;
    while (!(magnitude >> (width - 1))) --width;
    const int shift = width - 53;
    uint64_t kept = magnitude >> shift;
    if (magnitude & ((uint64_t{1} << shift) - 1)) kept |= 1;
    const double d = static_cast<double>(kept) * static_cast<double>(uint64_t{1} << shift);
    return bfloat16_bits(negative ? -d : d);
  }
  const double d = static_cast<double>(magnitude);
  return bfloat16_bits(negative ? -d : d);
}

/// The bfloat16 bits of integer `v` of any integer type, rounded once.
template <class I>
UMA_BF16_HD uint16_t bfloat16_bits_of(I v) {
  if constexpr (static_cast<I>(-1) < static_cast<I>(0)) {
    const bool neg = v < 0;
    const uint64_t mag = neg ? uint64_t{0} - static_cast<uint64_t>(static_cast<int64_t>(v)) : static_cast<uint64_t>(v);
    return bfloat16_bits_of_integer(mag, neg);
  } else {
    return bfloat16_bits_of_integer(static_cast<uint64_t>(v), false);
  }
}

}  // namespace uma::kernels

#undef UMA_BF16_HD
