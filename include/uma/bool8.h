// uma/bool8.h — the element type of the bool dtype, for host and device code. Plain C++17
// without other uma headers, so that the CUDA kernels (which cannot include uma/dtype.h)
// read bool elements through the same type as the CPU kernels.
#pragma once
#include <cstdint>
#include <type_traits>

#ifdef __CUDACC__
#define UMA_BOOL8_HD __host__ __device__
#else
#define UMA_BOOL8_HD
#endif

namespace uma {

/// One element of a bool array: a byte that means true when it is not 0 and false when it is
/// 0, NumPy's rule for bool memory (a uint8 view of shared memory can write any byte into
/// it), and that uma writes as 0 or 1. Kernels read bool elements through this type, never
/// through a C++ `bool`, whose only valid bytes are 0 and 1 (any other is undefined).
struct bool8 {
  uint8_t byte;

  bool8() = default;
  UMA_BOOL8_HD constexpr bool8(bool v) noexcept : byte(v ? 1 : 0) {}
  /// The value of the byte: byte != 0.
  UMA_BOOL8_HD constexpr operator bool() const noexcept { return byte != 0; }
};

static_assert(sizeof(bool8) == 1 && alignof(bool8) == 1, "bool8 is one byte, like NumPy's bool");
static_assert(std::is_trivially_copyable_v<bool8> && std::is_trivially_default_constructible_v<bool8>,
              "bool8 lives in raw, uninitialised buffers");

}  // namespace uma

#undef UMA_BOOL8_HD
