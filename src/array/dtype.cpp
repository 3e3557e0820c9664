#include "uma/dtype.h"
#include "uma/ops/table.h"

#include <algorithm>

namespace uma {

namespace {
struct Info {
  const char* name;
  char kind;
  std::size_t size;
};
constexpr Info kInfo[kNumDTypes] = {
    {"bool", 'b', 1},     {"int8", 'i', 1},     {"int16", 'i', 2},      {"int32", 'i', 4},
    {"int64", 'i', 8},    {"uint8", 'u', 1},    {"uint16", 'u', 2},     {"uint32", 'u', 4},
    {"uint64", 'u', 8},   {"float16", 'f', 2},  {"bfloat16", 'f', 2},   {"float32", 'f', 4},
    {"float64", 'f', 8},  {"complex64", 'c', 8}, {"complex128", 'c', 16},
};
const Info& info(DType t) { return kInfo[static_cast<int>(t)]; }

DType int_of(char kind, std::size_t size) {
  if (kind == 'i') {
    switch (size) { case 1: return DType::Int8; case 2: return DType::Int16; case 4: return DType::Int32; default: return DType::Int64; }
  }
  switch (size) { case 1: return DType::UInt8; case 2: return DType::UInt16; case 4: return DType::UInt32; default: return DType::UInt64; }
}
DType float_of_size(std::size_t size) {
  switch (size) { case 2: return DType::Float16; case 4: return DType::Float32; default: return DType::Float64; }
}
// Smallest float that holds every value of an integer of `size` bytes (NumPy's table).
std::size_t float_size_for_int(std::size_t size) { return size == 1 ? 2 : size == 2 ? 4 : 8; }
}  // namespace

char dtype_kind(DType t) noexcept { return info(t).kind; }
std::size_t itemsize(DType t) noexcept { return info(t).size; }
const char* dtype_name(DType t) noexcept { return info(t).name; }
std::optional<DType> dtype_from_name(const std::string& name) {
  for (int i = 0; i < kNumDTypes; ++i)
    if (name == kInfo[i].name) return static_cast<DType>(i);
  if (name == "bool_") return DType::Bool;
  return std::nullopt;
}
bool is_float(DType t) noexcept { return dtype_kind(t) == 'f'; }
bool is_integer(DType t) noexcept { char k = dtype_kind(t); return k == 'i' || k == 'u'; }
bool is_complex(DType t) noexcept { return dtype_kind(t) == 'c'; }
bool is_compute_dtype(DType t) noexcept {
  return t == DType::Bool || t == DType::Int32 || t == DType::Int64 || t == DType::Float32 || t == DType::Float64;
}

DType promote_types(DType a, DType b) noexcept {
  if (a == b) return a;
  char ka = dtype_kind(a), kb = dtype_kind(b);
  std::size_t sa = itemsize(a), sb = itemsize(b);
  if (ka == 'b') return b;
  if (kb == 'b') return a;
  auto rank = [](char k) { return k == 'i' || k == 'u' ? 1 : k == 'f' ? 2 : 3; };
  if (rank(ka) > rank(kb) || (rank(ka) == rank(kb) && ka == 'u' && kb == 'i')) {
    std::swap(a, b); std::swap(ka, kb); std::swap(sa, sb);
  }
  // Now rank(ka) <= rank(kb); for two integers of different signedness, a is signed.
  if ((ka == 'i' || ka == 'u') && (kb == 'i' || kb == 'u')) {
    if (ka == kb) return int_of(ka, std::max(sa, sb));
    // a signed, b unsigned
    if (sa > sb) return a;
    if (sb == 8) return DType::Float64;
    return int_of('i', sb * 2);
  }
  if (ka == 'i' || ka == 'u') {
    // integer with float or complex
    std::size_t need = float_size_for_int(sa);
    if (kb == 'f') {
      if (b == DType::BFloat16) return need <= 2 ? DType::BFloat16 : float_of_size(need);
      return float_of_size(std::max(need, sb));
    }
    std::size_t comp = std::max(need, sb / 2);
    return comp <= 4 ? DType::Complex64 : DType::Complex128;
  }
  if (ka == 'f' && kb == 'f') {
    if (a == DType::BFloat16 || b == DType::BFloat16) {
      DType o = a == DType::BFloat16 ? b : a;
      return o == DType::Float16 ? DType::Float32 : o;
    }
    return float_of_size(std::max(sa, sb));
  }
  if (ka == 'f') {  // float with complex
    std::size_t fs = a == DType::BFloat16 ? 4 : sa;
    return std::max(fs, sb / 2) <= 4 ? DType::Complex64 : DType::Complex128;
  }
  return sa > sb ? a : b;  // complex with complex
}

DType promote_weak(DType a, ScalarKind kind) noexcept {
  char k = dtype_kind(a);
  switch (kind) {
    case ScalarKind::Bool: return a;
    case ScalarKind::Int: return k == 'b' ? DType::Int64 : a;
    case ScalarKind::Float: return (k == 'f' || k == 'c') ? a : DType::Float64;
    case ScalarKind::Complex:
      if (k == 'c') return a;
      if (a == DType::Float32 || a == DType::Float16 || a == DType::BFloat16) return DType::Complex64;
      return DType::Complex128;
  }
  return a;
}

bool can_cast_safe(DType from, DType to) noexcept {
  if (from == to) return true;
  return promote_types(from, to) == to;
}

bool can_cast_same_kind(DType from, DType to) noexcept {
  if (can_cast_safe(from, to)) return true;
  auto order = [](char k) { return k == 'b' ? 0 : (k == 'u' || k == 'i') ? 1 : k == 'f' ? 2 : 3; };
  char kf = dtype_kind(from), kt = dtype_kind(to);
  if (kf == 'i' && kt == 'u') return false;
  return order(kf) <= order(kt);
}

DType float_result_type(DType t) noexcept {
  switch (dtype_kind(t)) {
    case 'b': return DType::Float16;
    case 'i': case 'u': return float_of_size(float_size_for_int(itemsize(t)));
    default: return t;
  }
}

}  // namespace uma

// The op table's dtype codes (uma/ops/table.h, read by the cuda kernels) are DType's values.
#define UMA_SAME_CODE(D) static_assert(static_cast<int>(uma::DType::D) == uma::dt::D, "dtype code of " #D);
UMA_SAME_CODE(Bool) UMA_SAME_CODE(Int8) UMA_SAME_CODE(Int16) UMA_SAME_CODE(Int32) UMA_SAME_CODE(Int64)
UMA_SAME_CODE(UInt8) UMA_SAME_CODE(UInt16) UMA_SAME_CODE(UInt32) UMA_SAME_CODE(UInt64) UMA_SAME_CODE(Float16)
UMA_SAME_CODE(BFloat16) UMA_SAME_CODE(Float32) UMA_SAME_CODE(Float64) UMA_SAME_CODE(Complex64)
UMA_SAME_CODE(Complex128)
#undef UMA_SAME_CODE
static_assert(uma::dt::kCount == uma::kNumDTypes, "one dtype code per DType");
