// Tests for uma/dtype.h: sizes, names, kinds and NumPy 2 (NEP 50) promotion and casting.
//
// The expected values are NumPy 2 facts, each checkable in one line of Python, e.g.
//   np.promote_types("i1", "u1")        -> int16
//   np.can_cast("i8", "f8")             -> True
//   (np.zeros(2, np.uint8) + 1).dtype   -> uint8     (NEP 50: Python scalars are weak)
// The Python suite (tests/python) compares the whole table against NumPy at test time; here
// we pin the rules NEP 50 and NumPy's documentation state, so a C++-only change that breaks
// them fails without Python.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <set>
#include <string>

#include "kernels/to_bfloat16.h"
#include "uma/dtype.h"

namespace uma {
namespace {

constexpr DType kAll[] = {
    DType::Bool,    DType::Int8,     DType::Int16,   DType::Int32,   DType::Int64,
    DType::UInt8,   DType::UInt16,   DType::UInt32,  DType::UInt64,  DType::Float16,
    DType::BFloat16, DType::Float32, DType::Float64, DType::Complex64, DType::Complex128,
};
static_assert(sizeof kAll / sizeof kAll[0] == kNumDTypes);

std::string N(DType t) { return dtype_name(t); }

TEST(DType, NamesKindsAndItemsizesMatchNumPy) {
  struct Row { DType t; const char* name; char kind; std::size_t size; };
  // np.dtype(name).kind / .itemsize; bfloat16 as ml_dtypes.bfloat16 ('V' in NumPy, 'f' here).
  const Row rows[] = {
      {DType::Bool, "bool", 'b', 1},         {DType::Int8, "int8", 'i', 1},
      {DType::Int16, "int16", 'i', 2},       {DType::Int32, "int32", 'i', 4},
      {DType::Int64, "int64", 'i', 8},       {DType::UInt8, "uint8", 'u', 1},
      {DType::UInt16, "uint16", 'u', 2},     {DType::UInt32, "uint32", 'u', 4},
      {DType::UInt64, "uint64", 'u', 8},     {DType::Float16, "float16", 'f', 2},
      {DType::BFloat16, "bfloat16", 'f', 2}, {DType::Float32, "float32", 'f', 4},
      {DType::Float64, "float64", 'f', 8},   {DType::Complex64, "complex64", 'c', 8},
      {DType::Complex128, "complex128", 'c', 16},
  };
  for (const Row& r : rows) {
    EXPECT_STREQ(dtype_name(r.t), r.name);
    EXPECT_EQ(dtype_kind(r.t), r.kind) << r.name;
    EXPECT_EQ(itemsize(r.t), r.size) << r.name;
  }
}

TEST(DType, ItemsizeMatchesTheCppType) {
  for (DType t : kAll) {
    std::size_t cpp = visit_dtype(t, [](auto v) { return sizeof(v); });
    EXPECT_EQ(cpp, itemsize(t)) << N(t);
    DType back = visit_dtype(t, [](auto v) { return dtype_of<decltype(v)>::value; });
    EXPECT_EQ(back, t) << N(t);
  }
}

TEST(DType, NameRoundTrip) {
  std::set<std::string> names;
  for (DType t : kAll) {
    auto back = dtype_from_name(dtype_name(t));
    ASSERT_TRUE(back.has_value()) << N(t);
    EXPECT_EQ(*back, t);
    names.insert(dtype_name(t));
  }
  EXPECT_EQ(names.size(), static_cast<std::size_t>(kNumDTypes));  // names are distinct
  EXPECT_EQ(dtype_from_name("bool_"), DType::Bool);                // NumPy's alias
  EXPECT_FALSE(dtype_from_name("float128").has_value());
  EXPECT_FALSE(dtype_from_name("").has_value());
  EXPECT_FALSE(dtype_from_name("Float32").has_value());
}

TEST(DType, KindPredicates) {
  for (DType t : kAll) {
    char k = dtype_kind(t);
    EXPECT_EQ(is_float(t), k == 'f') << N(t);
    EXPECT_EQ(is_integer(t), k == 'i' || k == 'u') << N(t);
    EXPECT_EQ(is_complex(t), k == 'c') << N(t);
  }
}

TEST(DType, ComputeDTypesOfThisIssue) {
  // Issue 2: compute ops cover at least bool, int32, int64, float32, float64.
  for (DType t : {DType::Bool, DType::Int32, DType::Int64, DType::Float32, DType::Float64})
    EXPECT_TRUE(is_compute_dtype(t)) << N(t);
}

// ---- promotion (NumPy 2, NEP 50) --------------------------------------------------------

TEST(Promotion, SameTypeAndBoolAreIdentities) {
  for (DType t : kAll) {
    EXPECT_EQ(promote_types(t, t), t) << N(t);
    // bool promotes to anything: np.promote_types("?", t) == t.
    EXPECT_EQ(promote_types(DType::Bool, t), t) << N(t);
    EXPECT_EQ(promote_types(t, DType::Bool), t) << N(t);
  }
}

TEST(Promotion, IsSymmetric) {
  for (DType a : kAll)
    for (DType b : kAll) EXPECT_EQ(promote_types(a, b), promote_types(b, a)) << N(a) << " " << N(b);
}

TEST(Promotion, ResultHoldsBothOperandsSafely) {
  // The defining property of promote_types (NumPy docs): both inputs cast safely to it.
  for (DType a : kAll)
    for (DType b : kAll) {
      if ((a == DType::BFloat16) != (b == DType::BFloat16) &&
          (b == DType::Float16 || a == DType::Float16))
        continue;  // bfloat16 with float16: no NumPy answer (uma picks float32, checked below)
      DType r = promote_types(a, b);
      EXPECT_TRUE(can_cast_safe(a, r)) << N(a) << " -> " << N(r);
      EXPECT_TRUE(can_cast_safe(b, r)) << N(b) << " -> " << N(r);
    }
}

TEST(Promotion, NumPy2Facts) {
  struct Case { DType a, b, expected; };
  const Case cases[] = {
      // same kind: the wider one
      {DType::Int8, DType::Int64, DType::Int64},
      {DType::UInt16, DType::UInt32, DType::UInt32},
      {DType::Float16, DType::Float64, DType::Float64},
      {DType::Complex64, DType::Complex128, DType::Complex128},
      // signed with unsigned: a signed type twice as wide as the unsigned one
      {DType::Int8, DType::UInt8, DType::Int16},
      {DType::Int16, DType::UInt16, DType::Int32},
      {DType::Int32, DType::UInt32, DType::Int64},
      {DType::Int16, DType::UInt8, DType::Int16},  // the signed one is already wider
      // ... and int64 with uint64 (or any signed with uint64) has no integer answer: float64
      {DType::Int64, DType::UInt64, DType::Float64},
      {DType::Int8, DType::UInt64, DType::Float64},
      // integer with float: a float that holds every value of the integer
      {DType::Int8, DType::Float16, DType::Float16},
      {DType::UInt8, DType::Float16, DType::Float16},
      {DType::Int16, DType::Float16, DType::Float32},
      {DType::Int32, DType::Float32, DType::Float64},
      {DType::UInt32, DType::Float32, DType::Float64},
      {DType::Int64, DType::Float32, DType::Float64},
      {DType::UInt64, DType::Float16, DType::Float64},
      {DType::Int8, DType::Float32, DType::Float32},
      // float or integer with complex
      {DType::Float16, DType::Complex64, DType::Complex64},
      {DType::Float32, DType::Complex64, DType::Complex64},
      {DType::Float64, DType::Complex64, DType::Complex128},
      {DType::Int8, DType::Complex64, DType::Complex64},
      {DType::Int32, DType::Complex64, DType::Complex128},
      {DType::Int64, DType::Complex128, DType::Complex128},
  };
  for (const Case& c : cases)
    EXPECT_EQ(promote_types(c.a, c.b), c.expected)
        << N(c.a) << " + " << N(c.b) << " gave " << N(promote_types(c.a, c.b));
}

TEST(Promotion, BFloat16AsMlDtypes) {
  // ml_dtypes 0.6 with NumPy 2: np.promote_types(bfloat16, x)
  EXPECT_EQ(promote_types(DType::BFloat16, DType::Float32), DType::Float32);
  EXPECT_EQ(promote_types(DType::BFloat16, DType::Float64), DType::Float64);
  EXPECT_EQ(promote_types(DType::BFloat16, DType::Int8), DType::BFloat16);
  EXPECT_EQ(promote_types(DType::BFloat16, DType::UInt8), DType::BFloat16);
  EXPECT_EQ(promote_types(DType::BFloat16, DType::Complex64), DType::Complex64);
  // ml_dtypes has no common type of bfloat16 and float16; uma (like JAX) uses float32,
  // the narrowest type that holds both exactly.
  EXPECT_EQ(promote_types(DType::BFloat16, DType::Float16), DType::Float32);
}

TEST(Promotion, WeakPythonScalars) {
  // NEP 50: a Python scalar does not widen an array's dtype of the same or higher kind.
  //   (np.zeros(2, np.uint8) + 1).dtype    -> uint8
  //   (np.zeros(2, np.float32) + 3.0).dtype -> float32
  //   (np.zeros(2, np.int32) + 1.0).dtype  -> float64   (int array, float scalar)
  //   (np.zeros(2, bool) + 1).dtype        -> int64     (the default integer)
  //   (np.zeros(2, np.float32) + 1j).dtype -> complex64
  //   (np.zeros(2, np.float16) + 1j).dtype -> complex64
  //   (np.zeros(2, np.int32) + 1j).dtype   -> complex128
  EXPECT_EQ(promote_weak(DType::UInt8, ScalarKind::Int), DType::UInt8);
  EXPECT_EQ(promote_weak(DType::Int8, ScalarKind::Int), DType::Int8);
  EXPECT_EQ(promote_weak(DType::Float32, ScalarKind::Float), DType::Float32);
  EXPECT_EQ(promote_weak(DType::Float16, ScalarKind::Int), DType::Float16);
  EXPECT_EQ(promote_weak(DType::Int32, ScalarKind::Float), DType::Float64);
  EXPECT_EQ(promote_weak(DType::Bool, ScalarKind::Int), DType::Int64);
  EXPECT_EQ(promote_weak(DType::Bool, ScalarKind::Float), DType::Float64);
  EXPECT_EQ(promote_weak(DType::Float32, ScalarKind::Complex), DType::Complex64);
  EXPECT_EQ(promote_weak(DType::Float16, ScalarKind::Complex), DType::Complex64);
  EXPECT_EQ(promote_weak(DType::Int32, ScalarKind::Complex), DType::Complex128);
  EXPECT_EQ(promote_weak(DType::Float64, ScalarKind::Complex), DType::Complex128);
  EXPECT_EQ(promote_weak(DType::Complex64, ScalarKind::Float), DType::Complex64);
  for (DType t : kAll) EXPECT_EQ(promote_weak(t, ScalarKind::Bool), t) << N(t);
}

// ---- casting ---------------------------------------------------------------------------

TEST(Casting, SafeFacts) {
  // np.can_cast(from, to) with the default casting="safe"
  EXPECT_TRUE(can_cast_safe(DType::Int32, DType::Float64));
  EXPECT_TRUE(can_cast_safe(DType::Int64, DType::Float64));  // NumPy calls this safe
  EXPECT_FALSE(can_cast_safe(DType::Int64, DType::Float32));
  EXPECT_FALSE(can_cast_safe(DType::Int32, DType::Float32));
  EXPECT_FALSE(can_cast_safe(DType::Float64, DType::Float32));
  EXPECT_FALSE(can_cast_safe(DType::UInt8, DType::Int8));
  EXPECT_TRUE(can_cast_safe(DType::UInt8, DType::Int16));
  EXPECT_FALSE(can_cast_safe(DType::UInt64, DType::Int64));
  EXPECT_TRUE(can_cast_safe(DType::Float32, DType::Complex64));
  EXPECT_FALSE(can_cast_safe(DType::Complex64, DType::Float64));
  for (DType t : kAll) {
    EXPECT_TRUE(can_cast_safe(t, t)) << N(t);
    EXPECT_TRUE(can_cast_safe(DType::Bool, t)) << N(t);
    if (t != DType::Bool) {
      EXPECT_FALSE(can_cast_safe(t, DType::Bool)) << N(t);
    }
  }
}

TEST(Casting, SameKindFacts) {
  // np.can_cast(from, to, "same_kind")
  EXPECT_TRUE(can_cast_same_kind(DType::Float64, DType::Float32));
  EXPECT_TRUE(can_cast_same_kind(DType::Int64, DType::Int8));
  EXPECT_TRUE(can_cast_same_kind(DType::UInt64, DType::Int8));
  EXPECT_TRUE(can_cast_same_kind(DType::Bool, DType::UInt8));
  EXPECT_FALSE(can_cast_same_kind(DType::Float64, DType::Int64));
  EXPECT_FALSE(can_cast_same_kind(DType::Int64, DType::UInt64));
  EXPECT_FALSE(can_cast_same_kind(DType::Complex64, DType::Float64));
  EXPECT_FALSE(can_cast_same_kind(DType::Int8, DType::Bool));
  // safe implies same_kind
  for (DType a : kAll)
    for (DType b : kAll)
      if (can_cast_safe(a, b)) {
        EXPECT_TRUE(can_cast_same_kind(a, b)) << N(a) << " -> " << N(b);
      }
}

TEST(Casting, FloatResultTypeOfUfuncs) {
  // np.exp(np.ones(1, t)).dtype
  EXPECT_EQ(float_result_type(DType::Bool), DType::Float16);
  EXPECT_EQ(float_result_type(DType::Int8), DType::Float16);
  EXPECT_EQ(float_result_type(DType::UInt8), DType::Float16);
  EXPECT_EQ(float_result_type(DType::Int16), DType::Float32);
  EXPECT_EQ(float_result_type(DType::UInt16), DType::Float32);
  EXPECT_EQ(float_result_type(DType::Int32), DType::Float64);
  EXPECT_EQ(float_result_type(DType::Int64), DType::Float64);
  EXPECT_EQ(float_result_type(DType::Float16), DType::Float16);
  EXPECT_EQ(float_result_type(DType::Float32), DType::Float32);
  EXPECT_EQ(float_result_type(DType::Float64), DType::Float64);
}

// ---- bfloat16 storage ---------------------------------------------------------------------

TEST(BFloat16, RoundsToNearestEvenLikeMlDtypes) {
  // np.array([...], np.float32).astype(ml_dtypes.bfloat16).view(np.uint16)
  EXPECT_EQ(bfloat16::from_float(1.0f).bits, 0x3F80);
  EXPECT_EQ(bfloat16::from_float(1.00390625f).bits, 0x3F80);  // tie: to even (down)
  EXPECT_EQ(bfloat16::from_float(1.01171875f).bits, 0x3F82);  // tie: to even (up)
  EXPECT_EQ(bfloat16::from_float(-0.0f).bits, 0x8000);
  EXPECT_EQ(bfloat16::from_float(3.4e38f).bits, 0x7F80);      // overflows to +inf
  EXPECT_EQ(bfloat16::from_float(std::numeric_limits<float>::infinity()).bits, 0x7F80);
  EXPECT_EQ(bfloat16::from_float(-2.5f).bits, 0xC020);
}

TEST(BFloat16, NaNStaysNaNAndRoundTripIsExact) {
  float nan = std::numeric_limits<float>::quiet_NaN();
  EXPECT_TRUE(std::isnan(bfloat16::from_float(nan).to_float()));
  // A float32 NaN whose payload sits only in the low 16 bits must not become infinity.
  uint32_t low_payload = 0x7F800001u;
  float snan;
  std::memcpy(&snan, &low_payload, 4);
  EXPECT_TRUE(std::isnan(bfloat16::from_float(snan).to_float()));
  // Every bfloat16 value converts to float32 and back unchanged.
  for (uint32_t b = 0; b <= 0xFFFF; ++b) {
    bfloat16 v{static_cast<uint16_t>(b)};
    float f = v.to_float();
    if (std::isnan(f)) continue;
    ASSERT_EQ(bfloat16::from_float(f).bits, v.bits) << std::hex << b;
  }
}

}  // namespace
}  // namespace uma

// ---- conversion to bfloat16: rounded once (src/kernels/to_bfloat16.h) ------------------------

namespace {
float bf16_value(uint16_t bits) {
  uint32_t u = static_cast<uint32_t>(bits) << 16;
  float f;
  std::memcpy(&f, &u, 4);
  return f;
}
}  // namespace

TEST(BFloat16, DoublesRoundOnceToNearestEven) {
  using uma::kernels::bfloat16_bits;
  // Through float32 this is 1 + 2^-8 (a tie) and then 1.0; rounded once it is above the tie.
  EXPECT_EQ(bf16_value(bfloat16_bits(1 + 0x1p-8 + 0x1p-30)), 1.0078125f);
  EXPECT_EQ(bf16_value(bfloat16_bits(1 + 0x1p-8)), 1.0f);                // tie to even
  EXPECT_EQ(bf16_value(bfloat16_bits(1 + 3 * 0x1p-8)), 1.015625f);      // tie to even (up)
  EXPECT_EQ(bf16_value(bfloat16_bits(-(1 + 0x1p-8 + 0x1p-40))), -1.0078125f);
  EXPECT_EQ(bf16_value(bfloat16_bits(0x1p-133)), 0x1p-133f);            // smallest subnormal
  EXPECT_EQ(bf16_value(bfloat16_bits(0x1p-134)), 0.0f);                 // tie to even: 0
  EXPECT_EQ(bf16_value(bfloat16_bits(0x1p-134 + 0x1p-170)), 0x1p-133f);
  EXPECT_EQ(bf16_value(bfloat16_bits(1e-300)), 0.0f);
  EXPECT_TRUE(std::isinf(bf16_value(bfloat16_bits(3.4e38))));            // past max + half an ulp
  EXPECT_EQ(bf16_value(bfloat16_bits(3.3895e38)), 3.3895313892515355e38f);  // the largest finite
  EXPECT_TRUE(std::isnan(bf16_value(bfloat16_bits(std::nan("")))));
  EXPECT_EQ(bfloat16_bits(-0.0), 0x8000);
}

TEST(BFloat16, IntegersRoundOnceToNearestEven) {
  using uma::kernels::bfloat16_bits_of;
  // 2^60 + 2^52 is a tie between 2^60 and 2^60 + 2^53; one more unit is above it.
  EXPECT_EQ(bf16_value(bfloat16_bits_of<int64_t>((int64_t(1) << 60) + (int64_t(1) << 52))), 0x1p60f);
  EXPECT_EQ(bf16_value(bfloat16_bits_of<int64_t>((int64_t(1) << 60) + (int64_t(1) << 52) + 1)), 0x1p60f + 0x1p53f);
  EXPECT_EQ(bf16_value(bfloat16_bits_of<int64_t>(INT64_MIN)), -0x1p63f);
  EXPECT_EQ(bf16_value(bfloat16_bits_of<uint64_t>(UINT64_MAX)), 0x1p64f);
  EXPECT_EQ(bf16_value(bfloat16_bits_of<int32_t>((1 << 24) + (1 << 16) + 1)), 0x1p24f + 0x1p17f);
  EXPECT_EQ(bf16_value(bfloat16_bits_of<int8_t>(-3)), -3.0f);
  EXPECT_EQ(bfloat16_bits_of<uint8_t>(0), 0);
}
