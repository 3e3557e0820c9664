// Smoke tests for uma/ops.h on small hand-computed cases. The exhaustive op x dtype x layout
// matrix against NumPy lives in tests/python/test_ops.py; these pin the C++ API and run
// under the sanitizers without Python.
#include <gtest/gtest.h>

#include <array>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <initializer_list>
#include <limits>
#include <string>
#include <type_traits>
#include <vector>

#include "uma/array.h"
#include "uma/error.h"
#include "error_kind.h"
#include "uma/memory/allocator.h"
#include "uma/ops.h"

namespace uma {
namespace {

// The element type that stores a T (bool8 for bool).
template <class T> using elem_t = std::conditional_t<std::is_same_v<T, bool>, bool8, T>;

template <class T>
Array make(std::initializer_list<T> values, Shape shape) {
  Array a = Array::empty(shape, dtype_of<elem_t<T>>::value);
  EXPECT_EQ(static_cast<std::size_t>(a.size()), values.size());
  elem_t<T>* p = a.data_as<elem_t<T>>();
  for (T v : values) *p++ = v;
  return a;
}

// Element i (in C order of the logical shape) of any-strided `a`, as T.
template <class T>
T at(const Array& a, int64_t flat) {
  std::vector<int64_t> idx(static_cast<std::size_t>(a.ndim()));
  for (int64_t d = a.ndim() - 1; d >= 0; --d) {
    idx[d] = flat % a.shape()[d];
    flat /= a.shape()[d];
  }
  return *reinterpret_cast<const elem_t<T>*>(a.ptr_at(idx.data()));
}

template <class T>
std::vector<T> values(const Array& a) {
  EXPECT_EQ(a.dtype(), dtype_of<elem_t<T>>::value) << "dtype is " << dtype_name(a.dtype());
  std::vector<T> v;
  for (int64_t i = 0; i < a.size(); ++i) v.push_back(at<T>(a, i));
  return v;
}

void no_delete(void*, void*, std::size_t) noexcept {}

// ---- creation ----------------------------------------------------------------------------

TEST(Creation, ZerosOnesFullArangeEye) {
  EXPECT_EQ(values<double>(ops::zeros({2, 2}, DType::Float64)), (std::vector<double>{0, 0, 0, 0}));
  EXPECT_EQ(values<int32_t>(ops::ones({3}, DType::Int32)), (std::vector<int32_t>{1, 1, 1}));
  EXPECT_EQ(values<float>(ops::full({2}, Scalar::from_float(2.5), DType::Float32)),
            (std::vector<float>{2.5f, 2.5f}));
  EXPECT_EQ(values<int64_t>(ops::arange(Scalar::from_int(0), Scalar::from_int(5), Scalar::from_int(2), DType::Int64)), (std::vector<int64_t>{0, 2, 4}));
  EXPECT_EQ(values<double>(ops::arange(Scalar::from_int(1), Scalar::from_int(0), Scalar::from_float(-0.25), DType::Float64)),
            (std::vector<double>{1, 0.75, 0.5, 0.25}));
  EXPECT_EQ(ops::arange(Scalar::from_int(3), Scalar::from_int(1), Scalar::from_int(1), DType::Int64).size(), 0);
  EXPECT_EQ(values<double>(ops::eye(2, 3, 1, DType::Float64)), (std::vector<double>{0, 1, 0, 0, 0, 1}));
  EXPECT_EQ(testing::error_kind([] { ops::arange(Scalar::from_int(0), Scalar::from_int(1), Scalar::from_int(0), DType::Float64); }), ErrorKind::Value);
}

TEST(Creation, ScalarArrayIsZeroDAndRangeChecked) {
  Array s = ops::scalar_array(Scalar::from_int(7), DType::Int32);
  EXPECT_EQ(s.ndim(), 0);
  EXPECT_EQ(*s.data_as<int32_t>(), 7);
  // NumPy 2: np.array(300, dtype=np.int8) raises OverflowError
  EXPECT_EQ(testing::error_kind([] { ops::scalar_array(Scalar::from_int(300), DType::Int8); }), ErrorKind::Overflow);
}

// ---- casts and assignment --------------------------------------------------------------

TEST(Cast, AstypeConvertsValuesNeverReinterprets) {
  Array i = make<int32_t>({1, -2, 3}, {3});
  Array f = ops::astype(i, DType::Float32);
  EXPECT_EQ(values<float>(f), (std::vector<float>{1.f, -2.f, 3.f}));
  EXPECT_NE(f.data(), i.data());
  Array back = ops::astype(make<double>({1.9, -1.9, 0.0}, {3}), DType::Int64);
  EXPECT_EQ(values<int64_t>(back), (std::vector<int64_t>{1, -1, 0}));  // truncation, as NumPy
  Array b = ops::astype(make<double>({0.0, 2.0, -0.5}, {3}), DType::Bool);
  EXPECT_EQ(values<bool>(b), (std::vector<bool>{false, true, true}));
}

TEST(Cast, AssignBroadcastsAndRespectsReadOnly) {
  Array dst = ops::zeros({2, 3}, DType::Float64);
  ops::assign(dst, make<int32_t>({1, 2, 3}, {3}));  // broadcast + cast
  EXPECT_EQ(values<double>(dst), (std::vector<double>{1, 2, 3, 1, 2, 3}));
  EXPECT_EQ(testing::error_kind([&] { ops::assign(dst.as_readonly(), ops::ones({3}, DType::Float64)); }), ErrorKind::Value);
  EXPECT_EQ(testing::error_kind([&] { ops::assign(dst, ops::ones({4}, DType::Float64)); }), ErrorKind::Value);
  // Overlapping source and destination: dst[:, ::-1] = dst
  Array rev = dst.view(dst.data_as<double>() + 2, {2, 3}, {3, -1});
  ops::assign(rev, dst);
  EXPECT_EQ(values<double>(dst), (std::vector<double>{3, 2, 1, 3, 2, 1}));
}

// ---- elementwise --------------------------------------------------------------------------

TEST(Elementwise, AddWithBroadcasting) {
  Array a = make<int32_t>({1, 2, 3, 4, 5, 6}, {2, 3});
  Array b = make<int32_t>({10, 20, 30}, {3});
  Array c = ops::binary(BinaryOp::Add, a, b);
  EXPECT_EQ(c.shape(), (Shape{2, 3}));
  EXPECT_EQ(values<int32_t>(c), (std::vector<int32_t>{11, 22, 33, 14, 25, 36}));
  Array col = make<int32_t>({100, 200}, {2, 1});
  EXPECT_EQ(values<int32_t>(ops::binary(BinaryOp::Add, a, col)),
            (std::vector<int32_t>{101, 102, 103, 204, 205, 206}));
}

TEST(Elementwise, PromotionFollowsNumPy2) {
  // np.int32 array + np.float32 array -> float64 (NumPy 2)
  Array c = ops::binary(BinaryOp::Add, make<int32_t>({1, 2}, {2}), make<float>({0.5f, 0.25f}, {2}));
  EXPECT_EQ(values<double>(c), (std::vector<double>{1.5, 2.25}));
  // true division of integers gives float64
  Array d = ops::binary(BinaryOp::Divide, make<int64_t>({1, 3}, {2}), make<int64_t>({2, 2}, {2}));
  EXPECT_EQ(values<double>(d), (std::vector<double>{0.5, 1.5}));
  // comparisons give bool
  Array l = ops::binary(BinaryOp::Less, make<double>({1, 5}, {2}), make<double>({2, 2}, {2}));
  EXPECT_EQ(values<bool>(l), (std::vector<bool>{true, false}));
}

TEST(Elementwise, FloorDivideAndRemainderFollowPythonSigns) {
  Array a = make<int64_t>({7, -7, 7, -7}, {4});
  Array b = make<int64_t>({2, 2, -2, -2}, {4});
  // np.floor_divide / np.remainder: Python semantics
  EXPECT_EQ(values<int64_t>(ops::binary(BinaryOp::FloorDivide, a, b)), (std::vector<int64_t>{3, -4, -4, 3}));
  EXPECT_EQ(values<int64_t>(ops::binary(BinaryOp::Remainder, a, b)), (std::vector<int64_t>{1, 1, -1, -1}));
}

TEST(Elementwise, FloorDivideWithOneInfiniteOperandIsTheQuotient) {
  // The Array API standard's special cases (floor_divide): floor(x1 / x2) = x1 / x2 when
  // exactly one operand is infinite (NumPy gives NaN and -1.0 there).
  const double inf = std::numeric_limits<double>::infinity();
  const std::vector<double> x1{inf, -inf, inf, 1.0, -1.0, -1.0, 1.0}, x2{2.0, 2.0, -3.0, -inf, inf, -inf, inf};
  Array a = make<double>({inf, -inf, inf, 1.0, -1.0, -1.0, 1.0}, {7});
  Array b = make<double>({2.0, 2.0, -3.0, -inf, inf, -inf, inf}, {7});
  const std::vector<double> got = values<double>(ops::binary(BinaryOp::FloorDivide, a, b));
  for (std::size_t i = 0; i < got.size(); ++i) {
    const double q = x1[i] / x2[i];
    EXPECT_EQ(got[i], q) << x1[i] << " // " << x2[i];
    EXPECT_EQ(std::signbit(got[i]), std::signbit(q)) << x1[i] << " // " << x2[i];
    double one = 0;  // the one-element path (binary_one) agrees
    ops::binary_one(BinaryOp::FloorDivide, DType::Float64, &x1[i], &x2[i], &one);
    EXPECT_EQ(std::signbit(one), std::signbit(q));
    EXPECT_EQ(one, q);
  }
}

TEST(Elementwise, UnaryMath) {
  Array x = make<double>({0.0, 1.0, -2.0}, {3});
  std::vector<double> e = values<double>(ops::unary(UnaryOp::Exp, x));
  EXPECT_DOUBLE_EQ(e[0], 1.0);
  EXPECT_NEAR(e[1], std::exp(1.0), 1e-15 * std::exp(1.0));
  EXPECT_EQ(values<double>(ops::unary(UnaryOp::Negative, x)), (std::vector<double>{-0.0, -1.0, 2.0}));
  EXPECT_EQ(values<double>(ops::unary(UnaryOp::Abs, x)), (std::vector<double>{0.0, 1.0, 2.0}));
  std::vector<double> s = values<double>(ops::unary(UnaryOp::Sigmoid, x));
  EXPECT_NEAR(s[0], 0.5, 1e-15);
  EXPECT_NEAR(s[2], 1.0 / (1.0 + std::exp(2.0)), 1e-15);
  // np.sqrt(np.array([4, 9], np.int32)).dtype -> float64
  EXPECT_EQ(values<double>(ops::unary(UnaryOp::Sqrt, make<int32_t>({4, 9}, {2}))), (std::vector<double>{2, 3}));
}

TEST(Elementwise, Where) {
  Array c = make<bool>({true, false, true}, {3});
  Array w = ops::where(c, make<double>({1, 2, 3}, {3}), ops::zeros({1}, DType::Float64));
  EXPECT_EQ(values<double>(w), (std::vector<double>{1, 0, 3}));
}

TEST(Elementwise, OneHot) {
  Array h = ops::one_hot(make<int64_t>({2, 0}, {2}), 3, DType::Float32);
  EXPECT_EQ(h.shape(), (Shape{2, 3}));
  EXPECT_EQ(values<float>(h), (std::vector<float>{0, 0, 1, 1, 0, 0}));
}

TEST(Elementwise, ErrorsNameTheProblem) {
  Array a = ops::ones({2}, DType::Float64);
  Array b = ops::ones({3}, DType::Float64);
  EXPECT_EQ(testing::error_kind([&] { ops::binary(BinaryOp::Add, a, b); }), ErrorKind::Value);
  try {
    ops::binary(BinaryOp::Add, a, b);
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("add"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("(2,)"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("(3,)"), std::string::npos) << e.what();
  }
  // An op NumPy has no loop for: TypeError naming the op and the dtype.
  Array z = ops::ones({2}, DType::Complex64);
  try {
    ops::unary(UnaryOp::Floor, z);
    ADD_FAILURE() << "floor on complex64 did not raise";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::Type);
    EXPECT_NE(std::string(e.what()).find("floor"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("complex64"), std::string::npos) << e.what();
  }
  EXPECT_EQ(testing::error_kind([&] { ops::unary(UnaryOp::Erf, z); }), ErrorKind::Type);
  EXPECT_EQ(testing::error_kind([&] { ops::binary(BinaryOp::Arctan2, z, z); }), ErrorKind::Type);
  EXPECT_EQ(testing::error_kind([&] { ops::binary(BinaryOp::Remainder, z, z); }), ErrorKind::Type);
  EXPECT_EQ(testing::error_kind([&] { ops::unary(UnaryOp::Negative, ops::ones({1}, DType::Bool)); }), ErrorKind::Type);
  EXPECT_EQ(testing::error_kind([&] { ops::round(ops::ones({1}, DType::Bool), -1); }), ErrorKind::Type);
}

// ---- every dtype --------------------------------------------------------------------------

TEST(Elementwise, NarrowIntegersWrapAsNumPy) {
  Array a = make<int8_t>({127, -128, 100, -7}, {4});
  Array b = make<int8_t>({1, -1, 100, 2}, {4});
  EXPECT_EQ(values<int8_t>(ops::binary(BinaryOp::Add, a, b)), (std::vector<int8_t>{-128, 127, -56, -5}));
  EXPECT_EQ(values<int8_t>(ops::binary(BinaryOp::Multiply, a, b)), (std::vector<int8_t>{127, -128, 16, -14}));
  EXPECT_EQ(values<int8_t>(ops::binary(BinaryOp::FloorDivide, a, b)), (std::vector<int8_t>{127, -128, 1, -4}));
  EXPECT_EQ(values<int8_t>(ops::unary(UnaryOp::Abs, a)), (std::vector<int8_t>{127, -128, 100, 7}));
  // uint16 * uint16 must not overflow a promoted int (UBSAN): computed in unsigned.
  Array u = make<uint16_t>({65535, 2, 0}, {3});
  EXPECT_EQ(values<uint16_t>(ops::binary(BinaryOp::Multiply, u, u)), (std::vector<uint16_t>{1, 4, 0}));
  EXPECT_EQ(values<uint16_t>(ops::unary(UnaryOp::Negative, u)), (std::vector<uint16_t>{1, 65534, 0}));
  EXPECT_EQ(values<uint16_t>(ops::unary(UnaryOp::Sign, u)), (std::vector<uint16_t>{1, 1, 0}));
  // NumPy's integer reciprocal: 1/0 is the minimum for int32/int64, 0 for narrower types.
  EXPECT_EQ(values<int32_t>(ops::unary(UnaryOp::Reciprocal, make<int32_t>({0, 1, -1, 2}, {4}))),
            (std::vector<int32_t>{INT32_MIN, 1, -1, 0}));
  EXPECT_EQ(values<int8_t>(ops::unary(UnaryOp::Reciprocal, make<int8_t>({0, 1, -1, 2}, {4}))),
            (std::vector<int8_t>{0, 1, -1, 0}));
  // Mixed signedness promotes (int8, uint8) -> int16; int8 exp gives float16.
  EXPECT_EQ(ops::binary(BinaryOp::Add, a, make<uint8_t>({1, 2, 3, 4}, {4})).dtype(), DType::Int16);
  EXPECT_EQ(ops::unary(UnaryOp::Exp, a).dtype(), DType::Float16);
}

TEST(Elementwise, HalfPrecisionComputedInFloat32AndRoundedOnce) {
  Array h = ops::astype(make<float>({1.0f, 2.0f, 0.1f}, {3}), DType::Float16);
  Array r = ops::binary(BinaryOp::Divide, h, ops::astype(make<float>({3.0f, 3.0f, 3.0f}, {3}), DType::Float16));
  ASSERT_EQ(r.dtype(), DType::Float16);
  std::vector<float> got = values<float>(ops::astype(r, DType::Float32));
  // 1/3 in float16 is 0.333251953125 (the nearest float16), 2/3 is 0.66650390625.
  EXPECT_EQ(got[0], 0.333251953125f);
  EXPECT_EQ(got[1], 0.66650390625f);
  Array b = ops::astype(make<float>({0.5f, 2.0f}, {2}), DType::BFloat16);
  Array e = ops::unary(UnaryOp::Exp2, b);
  ASSERT_EQ(e.dtype(), DType::BFloat16);
  EXPECT_EQ(values<float>(ops::astype(e, DType::Float32)), (std::vector<float>{1.4140625f, 4.0f}));
}

TEST(Elementwise, ComplexFollowsNumPy) {
  using C = std::complex<double>;
  Array z = make<C>({C(3, 4), C(0, -2), C(0, 0)}, {3});
  EXPECT_EQ(values<double>(ops::unary(UnaryOp::Abs, z)), (std::vector<double>{5, 2, 0}));
  std::vector<C> s = values<C>(ops::unary(UnaryOp::Sign, z));
  EXPECT_DOUBLE_EQ(s[0].real(), 0.6);
  EXPECT_DOUBLE_EQ(s[0].imag(), 0.8);
  EXPECT_EQ(s[1], C(0, -1));
  EXPECT_EQ(s[2], C(0, 0));
  // Lexicographic order: (0, -2) < (0, 0) < (3, 4).
  Array w = make<C>({C(0, 0), C(0, 0), C(0, 0)}, {3});
  EXPECT_EQ(values<bool>(ops::binary(BinaryOp::Less, z, w)), (std::vector<bool>{false, true, false}));
  EXPECT_EQ(values<C>(ops::binary(BinaryOp::Maximum, z, w)), (std::vector<C>{C(3, 4), C(0, 0), C(0, 0)}));
  // Integer powers are repeated products (exact here).
  EXPECT_EQ(values<C>(ops::binary(BinaryOp::Power, z, make<C>({C(2, 0), C(3, 0), C(1, 0)}, {3}))),
            (std::vector<C>{C(-7, 24), C(0, 8), C(0, 0)}));
  // sqrt on the branch cut keeps the sign of the zero imaginary part.
  std::vector<C> r = values<C>(ops::unary(UnaryOp::Sqrt, make<C>({C(-4, 0.0), C(-4, -0.0)}, {2})));
  EXPECT_EQ(r[0], C(0, 2));
  EXPECT_EQ(r[1], C(0, -2));
  EXPECT_EQ(ops::unary(UnaryOp::Exp, ops::ones({1}, DType::Complex64)).dtype(), DType::Complex64);
  // The parts: real/imag/angle give the real dtype, conj keeps the dtype.
  EXPECT_EQ(values<double>(ops::unary(UnaryOp::Real, z)), (std::vector<double>{3, 0, 0}));
  EXPECT_EQ(values<double>(ops::unary(UnaryOp::Imag, z)), (std::vector<double>{4, -2, 0}));
  EXPECT_EQ(values<C>(ops::unary(UnaryOp::Conj, z)), (std::vector<C>{C(3, -4), C(0, 2), C(0, -0.0)}));
  std::vector<double> a = values<double>(ops::unary(UnaryOp::Angle, z));
  EXPECT_DOUBLE_EQ(a[0], std::atan2(4.0, 3.0));
  EXPECT_DOUBLE_EQ(a[1], -M_PI / 2);
  EXPECT_EQ(a[2], 0.0);
  EXPECT_EQ(ops::unary(UnaryOp::Real, ops::ones({1}, DType::Complex64)).dtype(), DType::Float32);
  // ... and on real dtypes NumPy's rules: real and conj the values (conj of bool: int8), imag
  // zeros, angle arctan2(0, x) (pi for negative values).
  Array r8 = make<int8_t>({-2, 3}, {2});
  EXPECT_EQ(values<int8_t>(ops::unary(UnaryOp::Real, r8)), (std::vector<int8_t>{-2, 3}));
  EXPECT_EQ(values<int8_t>(ops::unary(UnaryOp::Imag, r8)), (std::vector<int8_t>{0, 0}));
  EXPECT_EQ(ops::unary(UnaryOp::Conj, ops::ones({1}, DType::Bool)).dtype(), DType::Int8);
  Array ang = ops::unary(UnaryOp::Angle, r8);
  ASSERT_EQ(ang.dtype(), DType::Float16);  // arctan2's dtype for int8
  EXPECT_EQ(values<float>(ops::astype(ang, DType::Float32))[1], 0.0f);
  EXPECT_EQ(ops::unary(UnaryOp::Angle, ops::ones({1}, DType::Bool)).dtype(), DType::Float64);
}

TEST(Elementwise, NewFloatFunctions) {
  Array x = make<double>({0.5, -1.0, 2.0}, {3});
  std::vector<double> v = values<double>(ops::binary(BinaryOp::Arctan2, x, make<double>({1.0, -1.0, 0.0}, {3})));
  EXPECT_DOUBLE_EQ(v[0], std::atan2(0.5, 1.0));
  EXPECT_DOUBLE_EQ(v[1], std::atan2(-1.0, -1.0));
  v = values<double>(ops::unary(UnaryOp::Softplus, make<double>({0.0, 1000.0, -1000.0}, {3})));
  EXPECT_DOUBLE_EQ(v[0], std::log(2.0));
  EXPECT_EQ(v[1], 1000.0);  // no overflow
  EXPECT_EQ(v[2], 0.0);
  v = values<double>(ops::unary(UnaryOp::Gammaln, make<double>({1.0, 5.0, 0.5}, {3})));
  EXPECT_EQ(v[0], 0.0);
  EXPECT_NEAR(v[1], std::log(24.0), 1e-14);
  EXPECT_NEAR(v[2], 0.5 * std::log(M_PI), 1e-14);
  v = values<double>(ops::unary(UnaryOp::Digamma, make<double>({1.0, 0.5, -0.5}, {3})));
  const double euler = 0.57721566490153286;
  EXPECT_NEAR(v[0], -euler, 1e-13);
  EXPECT_NEAR(v[1], -euler - 2 * std::log(2.0), 1e-13);
  EXPECT_NEAR(v[2], -euler - 2 * std::log(2.0) + 2.0, 1e-13);  // psi(1 - x) - psi(x) = pi cot(pi x)
  // trigamma: psi'(1) = pi^2/6, psi'(1/2) = pi^2/2, psi'(-1/2) = pi^2 - psi'(3/2) = pi^2 + 4 - pi^2/2
  // (reflection, then the recurrence); +inf at the poles, 0 at +inf, NaN at -inf.
  const double inf = std::numeric_limits<double>::infinity();
  v = values<double>(ops::unary(UnaryOp::Trigamma, make<double>({1.0, 0.5, -0.5, 0.0, -3.0, inf, -inf}, {7})));
  EXPECT_NEAR(v[0], M_PI * M_PI / 6, 1e-15);
  EXPECT_NEAR(v[1], M_PI * M_PI / 2, 1e-14);
  EXPECT_NEAR(v[2], M_PI * M_PI / 2 + 4, 1e-13);
  EXPECT_EQ(v[3], inf);
  EXPECT_EQ(v[4], inf);
  EXPECT_EQ(v[5], 0.0);
  EXPECT_TRUE(std::isnan(v[6]));
  EXPECT_EQ(ops::unary(UnaryOp::Trigamma, ops::ones({1}, DType::Int8)).dtype(), DType::Float16);
  // Round half to even, with decimals.
  EXPECT_EQ(values<double>(ops::round(make<double>({0.5, 1.5, 2.5, -2.5}, {4}), 0)),
            (std::vector<double>{0.0, 2.0, 2.0, -2.0}));
  EXPECT_EQ(values<int32_t>(ops::round(make<int32_t>({1234, -155}, {2}), -2)), (std::vector<int32_t>{1200, -200}));
  EXPECT_EQ(ops::round(ops::ones({1}, DType::Bool), 0).dtype(), DType::Float16);
}

TEST(Elementwise, ClipFollowsNumPy) {
  Array x = make<double>({-0.0, 3.0, NAN, -5.0}, {4});
  Array lo = ops::scalar_array(Scalar::from_float(0.0), DType::Float64);
  Array hi = ops::scalar_array(Scalar::from_float(1.0), DType::Float64);
  std::vector<double> v = values<double>(ops::clip(x, lo, hi));
  EXPECT_TRUE(v[0] == 0.0 && std::signbit(v[0]));  // -0.0 is inside [0, 1]: kept
  EXPECT_EQ(v[1], 1.0);
  EXPECT_TRUE(std::isnan(v[2]));
  EXPECT_EQ(v[3], 0.0);
  Array i = make<uint8_t>({0, 7, 200}, {3});
  Array r = ops::clip(i, make<int16_t>({5}, {1}), std::nullopt);  // one bound: maximum
  EXPECT_EQ(r.dtype(), DType::Int16);
  EXPECT_EQ(values<int16_t>(r), (std::vector<int16_t>{5, 7, 200}));
}

TEST(Elementwise, ResultsNeverAliasInputs) {
  // No donation: an op's result lives in fresh pooled memory, never in an input's buffer,
  // even for adopted or read-only inputs.
  std::vector<double> foreign = {1, 2, 3};
  auto st = std::make_shared<Storage>(adopt(foreign.data(), 24, Device::cpu(), &no_delete, nullptr));
  Array a(st, foreign.data(), {3}, {1}, DType::Float64, false);
  Array r = ops::binary(BinaryOp::Multiply, a, a);
  EXPECT_NE(r.storage(), a.storage());
  EXPECT_FALSE(r.is_adopted());
  EXPECT_TRUE(r.writable());
  EXPECT_EQ(values<double>(r), (std::vector<double>{1, 4, 9}));
  EXPECT_EQ(foreign, (std::vector<double>{1, 2, 3}));
  Array u = ops::unary(UnaryOp::Negative, a);
  EXPECT_NE(u.storage(), a.storage());
  EXPECT_EQ(foreign, (std::vector<double>{1, 2, 3}));
}

// ---- the small-operand fast path of binary() ------------------------------------------------
// Operands of one element each take a fast path (one scalar computed, no loop set-up); the same
// values broadcast to 3 elements take the general path. Both must agree bitwise, with the same
// dtype and the broadcast shape, and raise the same errors.

Array scalar_of(DType t, double v) {
  if (is_float(t) || is_complex(t)) return ops::astype(ops::scalar_array(Scalar::from_float(v), DType::Float64), t);
  return ops::astype(ops::scalar_array(Scalar::from_int(static_cast<int64_t>(v)), DType::Int64), t);  // wraps
}

void expect_fast_matches_general(BinaryOp op, const Array& a, const Array& b) {
  SCOPED_TRACE(std::string(ops::op_name(op)) + " on " + dtype_name(a.dtype()) + ", " + dtype_name(b.dtype()));
  Array fast = ops::binary(op, a, b);
  Shape wide = a.ndim() >= b.ndim() ? a.shape() : b.shape();  // all ones; 3 along the last axis
  if (wide.empty()) wide.push_back(3);
  else wide.back() = 3;
  Array general = ops::binary(op, ops::broadcast_to(a, wide), ops::broadcast_to(b, wide));
  ASSERT_EQ(fast.dtype(), general.dtype());
  EXPECT_EQ(fast.size(), 1);
  EXPECT_EQ(fast.shape(), a.ndim() >= b.ndim() ? a.shape() : b.shape());
  EXPECT_TRUE(fast.writable());
  EXPECT_NE(fast.storage(), a.storage());
  EXPECT_EQ(std::memcmp(fast.data(), general.data(), fast.itemsize()), 0) << "results differ bitwise";
}

TEST(Elementwise, SmallOperandFastPathMatchesGeneralPath) {
  const double nan = std::nan("");
  const BinaryOp all_ops[] = {BinaryOp::Add, BinaryOp::Subtract, BinaryOp::Multiply, BinaryOp::Divide,
                              BinaryOp::Power, BinaryOp::Maximum, BinaryOp::Minimum, BinaryOp::FloorDivide,
                              BinaryOp::Remainder, BinaryOp::Equal, BinaryOp::NotEqual, BinaryOp::Less,
                              BinaryOp::LessEqual, BinaryOp::Greater, BinaryOp::GreaterEqual, BinaryOp::LogicalAnd,
                              BinaryOp::LogicalOr, BinaryOp::LogicalXor, BinaryOp::Arctan2};
  struct Case {
    DType t;
    double a, b;
  };
  const Case cases[] = {
      {DType::Float64, 1.5, -2.0},   {DType::Float64, nan, 1.0},      {DType::Float64, 1.0, nan},
      {DType::Float64, -0.0, 0.0},   {DType::Float64, 7.0, 0.0},      {DType::Float32, -7.5, 2.0},
      {DType::Float32, nan, nan},    {DType::Float16, 1000.0, 70.0},  {DType::BFloat16, 3.0, -0.0},
      {DType::Int8, 127, 1},         {DType::Int8, -128, -1},         {DType::Int8, -7, 2},
      {DType::UInt8, 0, 1},          {DType::UInt8, 255, 255},        {DType::Int32, 5, 0},
      {DType::Int64, INT64_MIN, -1}, {DType::Int64, 3, 2},            {DType::UInt64, 7, 3},
      {DType::Int16, 300, 300},      {DType::UInt32, 1, 2},           {DType::Bool, 1, 0},
      {DType::Bool, 1, 1},           {DType::Complex128, 1.5, -2.0},  {DType::Complex64, nan, 1.0},
  };
  for (const Case& c : cases) {
    const Array a = scalar_of(c.t, c.a), b = scalar_of(c.t, c.b);
    for (BinaryOp op : all_ops) {
      // Pairs NumPy has no loop for raise the same error on both paths.
      bool raised = false;
      ErrorKind kind{};
      try {
        ops::binary(op, ops::broadcast_to(a, {3}), ops::broadcast_to(b, {3}));
      } catch (const Error& e) {
        raised = true;
        kind = e.kind();
      }
      if (raised) {
        EXPECT_EQ(testing::error_kind([&] { ops::binary(op, a, b); }), kind) << ops::op_name(op) << " on " << dtype_name(c.t);
        continue;
      }
      expect_fast_matches_general(op, a, b);
    }
  }
}

TEST(Elementwise, SmallOperandFastPathShapesAndFallbacks) {
  // Size-1 operands of any rank broadcast to the longer shape; all ones.
  Array s = scalar_of(DType::Float64, 2.0);
  Array one = ops::reshape(s, {1});
  Array one3 = ops::reshape(s, {1, 1, 1});
  expect_fast_matches_general(BinaryOp::Add, s, one3);
  expect_fast_matches_general(BinaryOp::Multiply, one, one3);
  expect_fast_matches_general(BinaryOp::Less, one3, s);
  EXPECT_EQ(ops::binary(BinaryOp::Add, one, s).shape(), (Shape{1}));
  // A size-1 view with a non-unit stride reads its one element.
  Array base = make<double>({3, 4}, {2});
  Array v = base.view(base.data_as<double>() + 1, {1}, {7});
  EXPECT_EQ(values<double>(ops::binary(BinaryOp::Add, v, s)), (std::vector<double>{6}));
  expect_fast_matches_general(BinaryOp::Subtract, v, one);
  // Mixed dtypes and conversions take the general path: NumPy's result dtypes.
  EXPECT_EQ(ops::binary(BinaryOp::Add, scalar_of(DType::Int32, 1), scalar_of(DType::Float32, 1)).dtype(), DType::Float64);
  EXPECT_EQ(ops::binary(BinaryOp::Divide, scalar_of(DType::Int64, 1), scalar_of(DType::Int64, 2)).dtype(), DType::Float64);
  EXPECT_EQ(ops::binary(BinaryOp::Power, scalar_of(DType::Bool, 1), scalar_of(DType::Bool, 1)).dtype(), DType::Int8);
  EXPECT_EQ(values<int8_t>(ops::binary(BinaryOp::Add, scalar_of(DType::Int8, 127), scalar_of(DType::Int8, 1))),
            (std::vector<int8_t>{-128}));
  // Integer power's negative-exponent check and bool subtract's TypeError on one element.
  EXPECT_EQ(testing::error_kind([&] { ops::binary(BinaryOp::Power, scalar_of(DType::Int32, 2), scalar_of(DType::Int32, -1)); }),
            ErrorKind::Value);
  EXPECT_EQ(values<uint32_t>(ops::binary(BinaryOp::Power, scalar_of(DType::UInt32, 2), scalar_of(DType::UInt32, 3))),
            (std::vector<uint32_t>{8}));
  EXPECT_EQ(testing::error_kind([&] { ops::binary(BinaryOp::Subtract, scalar_of(DType::Bool, 1), scalar_of(DType::Bool, 0)); }),
            ErrorKind::Type);
}

TEST(Elementwise, WhereSelectsExactBytesOnEveryLayout) {
  // The contiguous select copies the chosen element's bytes: -0.0 and NaN payloads survive,
  // from a full x, a broadcast y, or both broadcast; any non-zero condition byte is true.
  const double nan_payload = [] {
    uint64_t u = 0x7ff8000000000123ull;
    double d;
    std::memcpy(&d, &u, 8);
    return d;
  }();
  Array c = make<bool>({true, false, true, false, true}, {5});
  Array x = make<double>({-0.0, 1.0, nan_payload, 3.0, 4.0}, {5});
  Array y = make<double>({9.0, -0.0, 9.0, nan_payload, 9.0}, {5});
  auto bytes = [](const Array& a) {
    std::vector<uint64_t> v(static_cast<std::size_t>(a.size()));
    for (int64_t i = 0; i < a.size(); ++i) {
      double d = at<double>(a, i);
      std::memcpy(&v[i], &d, 8);
    }
    return v;
  };
  EXPECT_EQ(bytes(ops::where(c, x, y)), bytes(make<double>({-0.0, -0.0, nan_payload, nan_payload, 4.0}, {5})));
  Array y0 = scalar_of(DType::Float64, -0.0);
  EXPECT_EQ(bytes(ops::where(c, x, y0)), bytes(make<double>({-0.0, -0.0, nan_payload, -0.0, 4.0}, {5})));
  EXPECT_EQ(bytes(ops::where(c, y0, x)), bytes(make<double>({-0.0, 1.0, -0.0, 3.0, -0.0}, {5})));
  EXPECT_EQ(values<int8_t>(ops::where(c, scalar_of(DType::Int8, -1), scalar_of(DType::Int8, 7))),
            (std::vector<int8_t>{-1, 7, -1, 7, -1}));
  // A condition byte other than 0/1 (a bool view of uint8 data) counts as true.
  Array raw = make<uint8_t>({2, 0, 255, 0, 1}, {5});
  Array cb(raw.storage(), raw.data(), {5}, {1}, DType::Bool, false);
  EXPECT_EQ(values<double>(ops::where(cb, x, scalar_of(DType::Float64, 5.0)))[1], 5.0);
  EXPECT_EQ(values<double>(ops::where(cb, x, scalar_of(DType::Float64, 5.0)))[4], 4.0);
  // complex128 (no select width) keeps the general loop.
  Array z = ops::where(c, scalar_of(DType::Complex128, 1.0), scalar_of(DType::Complex128, 2.0));
  EXPECT_EQ(values<complex128>(z), (std::vector<complex128>{1.0, 2.0, 1.0, 2.0, 1.0}));
}

TEST(Reduce, SumOverAxisZeroAccumulatesRowsInOrder) {
  // sum(axis=0) of a C-contiguous matrix adds the rows in order: the same value as the
  // column-by-column sum of the transposed copy (each column summed top to bottom).
  Array a = make<double>({1e16, 1.0, 3.0, 1.0, -1e16, 0.5, -1.0, 2.0, 0.25, 1.0, 1.0, 1.0}, {4, 3});
  Array rows = ops::reduce(ReduceOp::Sum, a, std::vector<int64_t>{0}, false);
  EXPECT_EQ(values<double>(rows), (std::vector<double>{((1e16 + 1.0) + -1.0) + 1.0, ((1.0 + -1e16) + 2.0) + 1.0,
                                                       ((3.0 + 0.5) + 0.25) + 1.0}));
  Array i = make<int32_t>({INT32_MAX, 1, INT32_MAX, 2}, {2, 2});
  EXPECT_EQ(values<int64_t>(ops::reduce(ReduceOp::Sum, i, std::vector<int64_t>{0}, false)),
            (std::vector<int64_t>{int64_t{INT32_MAX} * 2, 3}));
}

// ---- reductions ----------------------------------------------------------------------------

TEST(Reduce, SumMeanMaxArgmax) {
  Array a = make<double>({1, 2, 3, 4, 5, 6}, {2, 3});
  Array all = ops::reduce(ReduceOp::Sum, a, std::nullopt, false);
  EXPECT_EQ(all.ndim(), 0);
  EXPECT_EQ(values<double>(all), (std::vector<double>{21}));
  EXPECT_EQ(values<double>(ops::reduce(ReduceOp::Sum, a, std::vector<int64_t>{0}, false)),
            (std::vector<double>{5, 7, 9}));
  Array kd = ops::reduce(ReduceOp::Sum, a, std::vector<int64_t>{-1}, true);
  EXPECT_EQ(kd.shape(), (Shape{2, 1}));
  EXPECT_EQ(values<double>(kd), (std::vector<double>{6, 15}));
  EXPECT_EQ(values<double>(ops::reduce(ReduceOp::Mean, a, std::vector<int64_t>{1}, false)),
            (std::vector<double>{2, 5}));
  EXPECT_EQ(values<double>(ops::reduce(ReduceOp::Max, a, std::vector<int64_t>{0, 1}, false)),
            (std::vector<double>{6}));
  Array am = ops::reduce(ReduceOp::ArgMax, make<double>({3, 9, 9, 1}, {4}), std::nullopt, false);
  EXPECT_EQ(values<int64_t>(am), (std::vector<int64_t>{1}));  // first of equal maxima
  // np.sum of int32 gives the default integer (int64); of bool too.
  EXPECT_EQ(ops::reduce(ReduceOp::Sum, make<int32_t>({1, 2}, {2}), std::nullopt, false).dtype(), DType::Int64);
  EXPECT_EQ(values<int64_t>(ops::reduce(ReduceOp::Sum, make<bool>({true, true, false}, {3}), std::nullopt, false)),
            (std::vector<int64_t>{2}));
}

TEST(Reduce, StridedAndEmptyInputs) {
  Array a = make<double>({1, 2, 3, 4, 5, 6}, {2, 3});
  Array t = ops::transpose(a);  // (3, 2), strides (1, 3)
  EXPECT_EQ(values<double>(ops::reduce(ReduceOp::Sum, t, std::vector<int64_t>{1}, false)),
            (std::vector<double>{5, 7, 9}));
  Array empty = ops::zeros({0, 3}, DType::Float64);
  EXPECT_EQ(values<double>(ops::reduce(ReduceOp::Sum, empty, std::vector<int64_t>{0}, false)),
            (std::vector<double>{0, 0, 0}));
  EXPECT_EQ(testing::error_kind([&] { ops::reduce(ReduceOp::Max, empty, std::vector<int64_t>{0}, false); }), ErrorKind::Value);
  EXPECT_EQ(testing::error_kind([&] { ops::reduce(ReduceOp::Sum, a, std::vector<int64_t>{2}, false); }), ErrorKind::Axis);  // numpy.exceptions.AxisError in Python
}

// ---- matmul --------------------------------------------------------------------------------

TEST(Matmul, SmallCasesByHand) {
  Array a = make<double>({1, 2, 3, 4, 5, 6}, {2, 3});
  Array b = make<double>({7, 8, 9, 10, 11, 12}, {3, 2});
  // [[1*7+2*9+3*11, 1*8+2*10+3*12], [4*7+5*9+6*11, 4*8+5*10+6*12]]
  Array c = ops::matmul(a, b);
  EXPECT_EQ(c.shape(), (Shape{2, 2}));
  EXPECT_EQ(values<double>(c), (std::vector<double>{58, 64, 139, 154}));
  // float32 through BLAS, with a transposed operand
  Array af = ops::astype(a, DType::Float32);
  Array bt = ops::transpose(ops::astype(b, DType::Float32));  // (2, 3), not contiguous
  Array c2 = ops::matmul(bt, ops::transpose(af));              // (2,3) @ (3,2)
  EXPECT_EQ(values<float>(c2), (std::vector<float>{7 + 18 + 33, 28 + 45 + 66, 8 + 20 + 36, 32 + 50 + 72}));
  // integers (no BLAS) and 1-d promotion: vector @ matrix, matrix @ vector, vector @ vector
  Array ai = make<int64_t>({1, 2, 3, 4}, {2, 2});
  Array v = make<int64_t>({1, -1}, {2});
  EXPECT_EQ(values<int64_t>(ops::matmul(v, ai)), (std::vector<int64_t>{-2, -2}));
  EXPECT_EQ(values<int64_t>(ops::matmul(ai, v)), (std::vector<int64_t>{-1, -1}));
  Array dot = ops::matmul(v, v);
  EXPECT_EQ(dot.ndim(), 0);
  EXPECT_EQ(values<int64_t>(dot), (std::vector<int64_t>{2}));
  EXPECT_EQ(testing::error_kind([&] { ops::matmul(a, a); }), ErrorKind::Value);
}

TEST(Matmul, BatchedAndEmpty) {
  Array a = ops::ones({2, 2, 3}, DType::Float64);
  Array b = ops::ones({3, 4}, DType::Float64);
  Array c = ops::matmul(a, b);
  EXPECT_EQ(c.shape(), (Shape{2, 2, 4}));
  for (double x : values<double>(c)) EXPECT_EQ(x, 3.0);
  Array k0 = ops::matmul(ops::ones({2, 0}, DType::Float64), ops::ones({0, 3}, DType::Float64));
  EXPECT_EQ(k0.shape(), (Shape{2, 3}));
  for (double x : values<double>(k0)) EXPECT_EQ(x, 0.0);
}

// ---- shape ops and indexing ----------------------------------------------------------------

// ---- static shape rules (uma/ops.h, "shape inference") --------------------------------------

// The message of the error `f` throws ("" if none).
template <class F>
std::string error_message(F&& f) {
  try {
    f();
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

constexpr int64_t U = ops::kUnknownLength;

TEST(ShapeRules, StaticShapesPrintWithQuestionMarks) {
  EXPECT_EQ(ops::static_shape_str({}), "()");
  EXPECT_EQ(ops::static_shape_str({3}), "(3,)");
  EXPECT_EQ(ops::static_shape_str({2, U}), "(2, ?)");
  EXPECT_EQ(ops::static_shape_str({4, 0, 1}), shape_str({4, 0, 1}));  // concrete: as shape_str
}

TEST(ShapeRules, BroadcastFollowsNumPyOnConcreteShapes) {
  EXPECT_EQ(ops::broadcast_shapes(Shape{2, 1, 3}, Shape{4, 1}, "add"), (Shape{2, 4, 3}));
  EXPECT_EQ(ops::broadcast_shapes(Shape{}, Shape{5}, "add"), (Shape{5}));
  EXPECT_EQ(ops::broadcast_shapes(Shape{0, 1}, Shape{1, 7}, "add"), (Shape{0, 7}));
  EXPECT_EQ(error_message([] { ops::broadcast_shapes(Shape{2}, Shape{3}, "add"); }),
            "add: operands could not be broadcast together with shapes (2,) (3,)");
  EXPECT_EQ(testing::error_kind([] { ops::broadcast_shapes(Shape{0}, Shape{2}, "add"); }), ErrorKind::Value);
}

TEST(ShapeRules, BroadcastKeepsUnknownLengthsUnlessAKnownLengthDecides) {
  // PyTensor: only static length-1 axes broadcast, so a known n != 1 decides an axis
  EXPECT_EQ(ops::broadcast_shapes(Shape{U, 1}, Shape{3, U}, "add"), (Shape{3, U}));
  EXPECT_EQ(ops::broadcast_shapes(Shape{U}, Shape{1}, "add"), (Shape{U}));
  EXPECT_EQ(ops::broadcast_shapes(Shape{U}, Shape{}, "add"), (Shape{U}));
  const Shape a{2}, b{U}, c{3};
  const std::array<const Shape*, 3> abc{&a, &b, &c};
  EXPECT_EQ(error_message([&] { ops::broadcast_shapes(abc, "where"); }),
            "where: operands could not be broadcast together with shapes (2,) (?,) (3,)");
  const std::array<const Shape*, 3> aba{&a, &b, &a};
  EXPECT_EQ(ops::broadcast_shapes(aba, "where"), (Shape{2}));
}

TEST(ShapeRules, ReduceShapeRemovesOrKeepsTheAxes) {
  EXPECT_EQ(ops::reduce_shape({2, U, 4}, std::vector<int64_t>{0, -1}, false, "sum"), (Shape{U}));
  EXPECT_EQ(ops::reduce_shape({2, U, 4}, std::vector<int64_t>{1}, true, "sum"), (Shape{2, 1, 4}));
  EXPECT_EQ(ops::reduce_shape({2, U, 4}, std::nullopt, false, "sum"), (Shape{}));
  EXPECT_EQ(ops::reduce_shape({2, U, 4}, std::nullopt, true, "sum"), (Shape{1, 1, 1}));
  EXPECT_EQ(testing::error_kind([] { ops::reduce_shape({2, 3}, std::vector<int64_t>{2}, false, "sum"); }), ErrorKind::Axis);
  EXPECT_EQ(error_message([] { ops::reduce_shape({2, 3}, std::vector<int64_t>{1, -1}, false, "max"); }),
            "max: duplicate value in 'axis'");
  // the eager reduction has the rule's shape
  Array x = ops::ones({2, 3, 4}, DType::Float64);
  EXPECT_EQ(ops::reduce(ReduceOp::Sum, x, std::vector<int64_t>{1}, true).shape(), (Shape{2, 1, 4}));
  EXPECT_EQ(ops::var(x, std::vector<int64_t>{0, 2}, 0, false).shape(), (Shape{3}));
}

TEST(ShapeRules, CumulateKeepsTheShapeOrFlattens) {
  EXPECT_EQ(ops::cumulate_shape({2, U}, 1, "cumsum"), (Shape{2, U}));
  EXPECT_EQ(ops::cumulate_shape({2, 3}, std::nullopt, "cumsum"), (Shape{6}));
  EXPECT_EQ(ops::cumulate_shape({2, U}, std::nullopt, "cumsum"), (Shape{U}));
  EXPECT_EQ(testing::error_kind([] { ops::cumulate_shape({2}, 1, "cumprod"); }), ErrorKind::Axis);
  EXPECT_EQ(ops::cumsum(ops::ones({2, 3}, DType::Int32), std::nullopt).shape(), (Shape{6}));
}

TEST(ShapeRules, MatmulShapesFollowNumPy) {
  const auto s = ops::matmul_shapes({5, 1, 2, U}, {4, U, 7});
  EXPECT_EQ(s.batch, (Shape{5, 4}));
  EXPECT_EQ(s.m, 2);
  EXPECT_EQ(s.k, U);
  EXPECT_EQ(s.n, 7);
  EXPECT_EQ(s.result, (Shape{5, 4, 2, 7}));
  EXPECT_EQ(ops::matmul_shapes({3}, {3}).result, (Shape{}));
  EXPECT_EQ(ops::matmul_shapes({3}, {2, 3, U}).result, (Shape{2, U}));
  EXPECT_EQ(ops::matmul_shapes({2, U}, {3}).result, (Shape{2}));
  EXPECT_EQ(error_message([] { ops::matmul_shapes({}, {3}); }),
            "matmul: input operand does not have enough dimensions (0-d operands are not allowed)");
  EXPECT_EQ(error_message([] { ops::matmul_shapes({2, 3}, {4, U}); }),
            "matmul: mismatch in the core dimension: shapes (2, 3) and (4, ?) (3 != 4)");
  EXPECT_EQ(error_message([] { ops::matmul_shapes({2, 1, 3}, {3, 3, 1}); }),
            "matmul: operands could not be broadcast together with shapes (2, 1, 3) (3, 3, 1) (their batch axes (2,) "
            "and (3,))");
  // the eager matmul has the rule's shape, and NumPy's wording for its operand errors
  EXPECT_EQ(ops::matmul(ops::ones({4, 1, 2, 3}, DType::Float64), ops::ones({3, 5}, DType::Float64)).shape(),
            (Shape{4, 1, 2, 5}));
  EXPECT_EQ(error_message([] { ops::matmul(ops::ones({2, 3}, DType::Float64), ops::ones({4}, DType::Float64)); }),
            "matmul: Input operand 1 has a mismatch in its core dimension 0 (size 4 is different from 3); shapes "
            "(2, 3) and (4,)");
}

TEST(ShapeRules, StaticSizeIsKnownWhereTheShapeDecidesIt) {
  EXPECT_EQ(ops::static_size({2, 3}, "x"), 6);
  EXPECT_EQ(ops::static_size({}, "x"), 1);
  EXPECT_EQ(ops::static_size({2, U}, "x"), U);
  EXPECT_EQ(ops::static_size({0, U}, "x"), 0);  // a known 0 decides it
  EXPECT_EQ(testing::error_kind([] { ops::static_size({0, int64_t(1) << 62, int64_t(1) << 62}, "x"); }), ErrorKind::Value);
}

TEST(ShapeRules, ReductionRuleRefusesEmptyAxesWithoutIdentity) {
  EXPECT_EQ(ops::reduce_shape(ReduceOp::Max, {0, 3}, std::vector<int64_t>{1}, false), (Shape{0}));
  EXPECT_EQ(error_message([] { ops::reduce_shape(ReduceOp::Max, {0, 3}, std::vector<int64_t>{0}, false); }),
            "max: zero-size array to reduction operation maximum which has no identity");
  EXPECT_EQ(error_message([] { ops::reduce_shape(ReduceOp::ArgMin, {U, 0}, std::nullopt, false); }),
            "argmin: attempt to get argmin of an empty sequence");
  EXPECT_EQ(ops::reduce_shape(ReduceOp::Sum, {0, U}, std::nullopt, true), (Shape{1, 1}));  // sum has an identity
  EXPECT_EQ(ops::reduce_shape(ReduceOp::Min, {U, 3}, std::vector<int64_t>{0}, false), (Shape{3}));  // unknown: no error
  EXPECT_EQ(testing::error_kind([] { ops::reduce_shape(ReduceOp::ArgMax, {2, 3}, std::vector<int64_t>{0, 1}, false); }),
            ErrorKind::Type);
  // the eager reduction raises the rule's error
  EXPECT_EQ(error_message([] { ops::reduce(ReduceOp::Min, ops::ones({2, 0}, DType::Float32), std::nullopt, false); }),
            "min: zero-size array to reduction operation minimum which has no identity");
}

TEST(ShapeRules, ReshapeInfersTheNegativeLengthAndChecksTheSize) {
  EXPECT_EQ(ops::reshape_shape({2, 6}, {3, -1}), (Shape{3, 4}));
  EXPECT_EQ(ops::reshape_shape({2, U}, {-1, 3}), (Shape{U, 3}));
  EXPECT_EQ(ops::reshape_shape({2, U}, {4, 5}), (Shape{4, 5}));  // unknown size: nothing to check
  EXPECT_EQ(ops::reshape_shape({0, U}, {-1, 3}), (Shape{0, 3}));
  EXPECT_EQ(error_message([] { ops::reshape_shape({2, 3}, {4}); }), "reshape: cannot reshape array of size 6 into shape (4,)");
  EXPECT_EQ(error_message([] { ops::reshape_shape({2, U}, {-1, 0}); }),
            "reshape: cannot reshape array of size ? into shape (-1, 0)");
  EXPECT_EQ(error_message([] { ops::reshape_shape({6}, {-1, -1}); }), "reshape: can only specify one unknown dimension");
  EXPECT_EQ(ops::reshape_like_shape({2, U}, {U, 7}), (Shape{U, 7}));
  EXPECT_EQ(testing::error_kind([] { ops::reshape_like_shape({2, 3}, {5}); }), ErrorKind::Value);
  EXPECT_EQ(ops::reshape(ops::ones({2, 6}, DType::Float32), {-1, 4}).shape(), (Shape{3, 4}));
}

TEST(ShapeRules, TransposeExpandSqueeze) {
  EXPECT_EQ(ops::transpose_shape({2, U, 4}, std::vector<int64_t>{-1, 0, 1}), (Shape{4, 2, U}));
  EXPECT_EQ(ops::transpose_shape({2, U, 4}, std::nullopt), (Shape{4, U, 2}));
  EXPECT_EQ(error_message([] { ops::transpose_shape({2, 3}, std::vector<int64_t>{0}); }),
            "transpose: axes don't match array (got 1 axes for an array of dimension 2)");
  EXPECT_EQ(error_message([] { ops::transpose_shape({2, 3}, std::vector<int64_t>{1, -1}); }),
            "transpose: repeated axis in transpose");
  EXPECT_EQ(testing::error_kind([] { ops::transpose_shape({2, 3}, std::vector<int64_t>{0, 2}); }), ErrorKind::Axis);
  EXPECT_EQ(ops::expand_dims_shape({2, U}, -1), (Shape{2, U, 1}));
  EXPECT_EQ(ops::expand_dims_shape({}, 0), (Shape{1}));
  EXPECT_EQ(testing::error_kind([] { ops::expand_dims_shape({2}, 2); }), ErrorKind::Axis);
  EXPECT_EQ(ops::squeeze_shape({1, U, 1, 3}, std::nullopt), (Shape{U, 3}));  // unknown lengths are kept
  EXPECT_EQ(ops::squeeze_shape({1, U, 3}, std::vector<int64_t>{1}), (Shape{1, 3}));  // unknown: no error
  EXPECT_EQ(ops::squeeze_shape({1, 2}, std::vector<int64_t>{}), (Shape{1, 2}));  // axis=(): nothing
  EXPECT_EQ(error_message([] { ops::squeeze_shape({1, 2, U}, std::vector<int64_t>{1}); }),
            "squeeze: cannot select an axis to squeeze out which has size not equal to one (axis 1 of shape (1, 2, ?))");
  EXPECT_EQ(testing::error_kind([] { ops::squeeze_shape({1, 1}, std::vector<int64_t>{0, -2}); }), ErrorKind::Value);
  EXPECT_EQ(ops::squeeze(ops::ones({1, 2}, DType::Float32), std::vector<int64_t>{}).shape(), (Shape{1, 2}));
}

TEST(ShapeRules, BroadcastToTakesTheTargetAndKnownLengths) {
  EXPECT_EQ(ops::broadcast_to_shape({3}, {2, 3}, "broadcast_to"), (Shape{2, 3}));
  EXPECT_EQ(ops::broadcast_to_shape({U, 1}, {2, 4}, "broadcast_to"), (Shape{2, 4}));
  EXPECT_EQ(ops::broadcast_to_shape({3, 1}, {U, U}, "broadcast_like"), (Shape{3, U}));
  EXPECT_EQ(error_message([] { ops::broadcast_to_shape({3}, {2, 4}, "broadcast_to"); }),
            "broadcast_to: cannot broadcast an array of shape (3,) to shape (2, 4)");
  EXPECT_EQ(error_message([] { ops::broadcast_to_shape({2, 3}, {3}, "broadcast_to"); }),
            "broadcast_to: cannot broadcast an array of shape (2, 3) to shape (3,)");
  EXPECT_EQ(testing::error_kind([] { ops::broadcast_to_shape({3}, {1}, "broadcast_like"); }), ErrorKind::Value);
}

TEST(ShapeRules, ConcatenateStackSegmentSplit) {
  const Shape a{2, U}, b{U, 3}, c{4, 3}, d{2, 4};
  const std::array<const Shape*, 2> ab{&a, &b}, ac{&a, &c}, cd{&c, &d};
  EXPECT_EQ(ops::concatenate_shape(ab, 0), (Shape{U, 3}));
  EXPECT_EQ(ops::concatenate_shape(ac, 0), (Shape{6, 3}));
  EXPECT_EQ(ops::concatenate_shape(ab, -1), (Shape{2, U}));  // an unknown length on the axis
  EXPECT_EQ(error_message([&] { ops::concatenate_shape(cd, 0); }),
            "concatenate: all the input array dimensions except for the concatenation axis must match exactly, but "
            "along dimension 1, the array at index 0 has size 3 and the array at index 1 has size 4");
  const Shape z{}, v{3};
  const std::array<const Shape*, 1> zz{&z};
  const std::array<const Shape*, 2> cv{&c, &v};
  EXPECT_EQ(testing::error_kind([&] { ops::concatenate_shape(zz, 0); }), ErrorKind::Value);
  EXPECT_EQ(testing::error_kind([&] { ops::concatenate_shape(cv, 0); }), ErrorKind::Value);
  EXPECT_EQ(testing::error_kind([&] { ops::concatenate_shape(ac, 2); }), ErrorKind::Axis);
  EXPECT_EQ(testing::error_kind([] { ops::concatenate_shape({}, 0); }), ErrorKind::Value);
  EXPECT_EQ(ops::stack_shape(ab, 1), (Shape{2, 2, 3}));  // the known lengths of either
  EXPECT_EQ(ops::stack_shape(ab, -1), (Shape{2, 3, 2}));
  EXPECT_EQ(error_message([&] { ops::stack_shape(cd, 0); }),
            "stack: all input arrays must have the same shape, got (4, 3) (2, 4)");
  EXPECT_EQ(testing::error_kind([&] { ops::stack_shape(ab, 3); }), ErrorKind::Axis);
  EXPECT_EQ(ops::segment_shape({U, 3}, ac, 0, 1), (Shape{4, 3}));
  EXPECT_EQ(testing::error_kind([&] { ops::segment_shape({5, 3}, ac, 0, 1); }), ErrorKind::Value);
  EXPECT_EQ(ops::split_points({2, 6}, 3, 1), (std::vector<int64_t>{2, 4}));
  EXPECT_EQ(testing::error_kind([] { ops::split_points({2, U}, 3, 1); }), ErrorKind::Value);
  EXPECT_EQ(testing::error_kind([] { ops::split_points({2, 6}, 4, 1); }), ErrorKind::Value);
  EXPECT_EQ(testing::error_kind([] { ops::split_points({2, 6}, 0, 1); }), ErrorKind::Value);
  // the eager ops have the rules' shapes and errors
  EXPECT_EQ(ops::stack({ops::ones({2}, DType::Float32), ops::ones({2}, DType::Float32)}, 1).shape(), (Shape{2, 2}));
  EXPECT_EQ(testing::error_kind([] { ops::split_sections(ops::ones({5}, DType::Float32), 2, 0); }), ErrorKind::Value);
}

TEST(ShapeRules, BasicIndexTakeAndMask) {
  auto sl = [](std::optional<int64_t> a, std::optional<int64_t> b, std::optional<int64_t> c) {
    IndexItem it;
    it.kind = IndexItem::Slice;
    it.start = a, it.stop = b, it.step = c;
    return it;
  };
  IndexItem i0, none, ell;
  i0.i = -1;
  none.kind = IndexItem::NewAxis;
  ell.kind = IndexItem::Ellipsis;
  EXPECT_EQ(ops::index_shape({5, U, 3}, {sl(1, std::nullopt, 2), i0}, "getitem"), (Shape{2, 3}));
  EXPECT_EQ(ops::index_shape({5, U, 3}, {none, ell, sl(std::nullopt, std::nullopt, -1)}, "getitem"), (Shape{1, 5, U, 3}));
  EXPECT_EQ(ops::index_shape({U}, {sl(0, 2, std::nullopt)}, "getitem"), (Shape{U}));
  EXPECT_EQ(ops::index_shape({U, U}, {sl(3, 1, std::nullopt), sl(-1, -4, 1)}, "getitem"), (Shape{0, 0}));
  EXPECT_EQ(ops::index_shape({U, U}, {sl(-1, 2, std::nullopt), sl(1, 3, -1)}, "getitem"), (Shape{U, 0}));
  IndexItem big;
  big.i = 5;
  EXPECT_EQ(ops::index_shape({U}, {big}, "getitem"), (Shape{}));  // unknown length: no bounds check
  EXPECT_EQ(error_message([&] { ops::index_shape({5}, {big}, "getitem"); }),
            "getitem: index 5 is out of bounds for axis 0 with size 5");
  EXPECT_EQ(testing::error_kind([&] { ops::index_shape({5}, {big, big}, "getitem"); }), ErrorKind::Index);
  EXPECT_EQ(testing::error_kind([&] { ops::index_shape({5, 2}, {ell, ell}, "getitem"); }), ErrorKind::Index);
  EXPECT_EQ(testing::error_kind([&] { ops::index_shape({U}, {sl(std::nullopt, std::nullopt, 0)}, "getitem"); }), ErrorKind::Value);
  EXPECT_EQ(ops::take_shape({4, U, 3}, {2, 5}, 1, "take"), (Shape{4, 2, 5, 3}));
  EXPECT_EQ(ops::take_shape({4, U, 3}, {2, 5}, std::nullopt, "take"), (Shape{2, 5}));
  EXPECT_EQ(testing::error_kind([] { ops::take_shape({4}, {2}, 1, "take"); }), ErrorKind::Axis);
  EXPECT_EQ(ops::mask_select_shape({4, U, 3}, {U, 2}, "getitem"), (Shape{U, 3}));
  EXPECT_EQ(error_message([] { ops::mask_select_shape({4, 3}, {5}, "getitem"); }),
            "getitem: boolean index did not match indexed array along axis 0; size of axis is 4 but size of "
            "corresponding boolean axis is 5");
  EXPECT_EQ(testing::error_kind([] { ops::mask_select_shape({4}, {}, "getitem"); }), ErrorKind::Index);
  EXPECT_EQ(testing::error_kind([] { ops::mask_select_shape({4}, {4, 1}, "getitem"); }), ErrorKind::Index);
  EXPECT_EQ(ops::embed_shape({2, U}, {U, 3}, {5, 3}, "getitem_grad"), (Shape{5, 3}));
  EXPECT_EQ(testing::error_kind([] { ops::embed_shape({2}, {3}, {5, 3}, "getitem_grad"); }), ErrorKind::Value);
  // the eager getitem has the rule's shape and errors
  Array x = ops::ones({5, 4, 3}, DType::Float32);
  EXPECT_EQ(ops::getitem(x, {sl(1, std::nullopt, 2), i0}).shape(), (Shape{2, 3}));
  EXPECT_EQ(error_message([&] { ops::getitem(x, {big}); }), "getitem: index 5 is out of bounds for axis 0 with size 5");
}

TEST(ShapeRules, LinalgAndNnHelpers) {
  EXPECT_EQ(ops::outer_shape({2, 3}, {U}), (Shape{6, U}));
  EXPECT_EQ(ops::outer_shape({0, U}, {4}), (Shape{0, 4}));
  EXPECT_EQ(ops::diagonal_shape({3, 5, 2}, 1, 0, 1), (Shape{2, 3}));
  EXPECT_EQ(ops::diagonal_shape({3, 5, 2}, -1, 1, 0), (Shape{2, 3}));
  EXPECT_EQ(ops::diagonal_shape({U, 4}, 0, 0, 1), (Shape{U}));
  EXPECT_EQ(ops::diagonal_shape({U, 4}, 4, 0, 1), (Shape{0}));  // decided by the known length
  EXPECT_EQ(ops::diagonal_shape({3, 4}, INT64_MIN, 0, 1), (Shape{0}));
  EXPECT_EQ(error_message([] { ops::diagonal_shape({3}, 0, 0, 1); }),
            "diagonal: the array must have at least two dimensions, got shape (3,)");
  EXPECT_EQ(error_message([] { ops::diagonal_shape({3, 3}, 0, 1, -1); }),
            "diagonal: axis1 and axis2 cannot be the same (both are 1)");
  EXPECT_EQ(error_message([] { ops::diagonal_shape({3}, 0, 0, 1, "trace"); }),
            "trace: the array must have at least two dimensions, got shape (3,)");
  EXPECT_EQ(ops::diag_shape({3}, -2), (Shape{5, 5}));
  EXPECT_EQ(ops::diag_shape({U}, 1), (Shape{U, U}));
  EXPECT_EQ(ops::diag_shape({2, 4}, 1), (Shape{2}));
  EXPECT_EQ(testing::error_kind([] { ops::diag_shape({2, 2, 2}, 0); }), ErrorKind::Value);
  EXPECT_EQ(testing::error_kind([] { ops::diag_shape({3}, INT64_MAX); }), ErrorKind::Value);
  EXPECT_EQ(ops::softmax_shape({2, U}, -1, "softmax"), (Shape{2, U}));
  EXPECT_EQ(error_message([] { ops::softmax_shape({}, 0, "log_softmax"); }), "log_softmax: needs at least 1 dimension");
  EXPECT_EQ(testing::error_kind([] { ops::softmax_shape({2}, 1, "softmax"); }), ErrorKind::Axis);
  EXPECT_EQ(ops::softmax_cross_entropy_shape({U, 5}, {7}, "softmax_cross_entropy"), (Shape{7}));
  EXPECT_EQ(error_message([] { ops::softmax_cross_entropy_shape({3, 5}, {4}, "softmax_cross_entropy"); }),
            "softmax_cross_entropy: labels must have shape (3,) to match logits (3, 5), got (4,)");
  EXPECT_EQ(testing::error_kind([] { ops::softmax_cross_entropy_shape({3}, {3}, "softmax_cross_entropy"); }), ErrorKind::Value);
  EXPECT_EQ(ops::softmax_cross_entropy_grad_shape({1}, {U, 5}, {7}), (Shape{7, 5}));
  EXPECT_EQ(ops::softmax_cross_entropy_grad_shape({}, {3, 5}, {3}), (Shape{3, 5}));
  EXPECT_EQ(testing::error_kind([] { ops::softmax_cross_entropy_grad_shape({2}, {3, 5}, {3}); }), ErrorKind::Value);
  EXPECT_EQ(ops::one_hot_shape({2, U}, 4), (Shape{2, U, 4}));
  EXPECT_EQ(testing::error_kind([] { ops::one_hot_shape({2}, -1); }), ErrorKind::Value);
  // the eager ops have the rules' shapes
  EXPECT_EQ(ops::diagonal(ops::ones({3, 5, 2}, DType::Float32), 1, 0, 1).shape(), (Shape{2, 3}));
  EXPECT_EQ(ops::diag(ops::ones({3}, DType::Float32), -2).shape(), (Shape{5, 5}));
  EXPECT_EQ(ops::outer(ops::ones({2, 3}, DType::Float32), ops::ones({4}, DType::Float32)).shape(), (Shape{6, 4}));
}

TEST(Shape, ReshapeTransposeBroadcastAreViews) {
  Array a = ops::arange(Scalar::from_int(0), Scalar::from_int(6), Scalar::from_int(1), DType::Float64);
  Array r = ops::reshape(a, {2, -1});
  EXPECT_EQ(r.shape(), (Shape{2, 3}));
  EXPECT_EQ(r.storage(), a.storage());
  Array t = ops::transpose(r);
  EXPECT_EQ(t.shape(), (Shape{3, 2}));
  EXPECT_EQ(t.storage(), a.storage());
  EXPECT_EQ(values<double>(t), (std::vector<double>{0, 3, 1, 4, 2, 5}));
  Array bc = ops::broadcast_to(make<double>({1, 2}, {2}), {3, 2});
  EXPECT_FALSE(bc.writable());  // as NumPy
  EXPECT_EQ(values<double>(bc), (std::vector<double>{1, 2, 1, 2, 1, 2}));
  // reshape of a non-contiguous view copies, with the right values
  Array rt = ops::reshape(t, {6});
  EXPECT_EQ(values<double>(rt), (std::vector<double>{0, 3, 1, 4, 2, 5}));
  EXPECT_EQ(testing::error_kind([&] { ops::reshape(a, {4}); }), ErrorKind::Value);
}

TEST(Shape, ConcatenateStackExpandSqueeze) {
  Array a = make<int32_t>({1, 2}, {1, 2});
  Array b = make<int32_t>({3, 4, 5, 6}, {2, 2});
  Array c = ops::concatenate({a, b}, 0);
  EXPECT_EQ(c.shape(), (Shape{3, 2}));
  EXPECT_EQ(values<int32_t>(c), (std::vector<int32_t>{1, 2, 3, 4, 5, 6}));
  Array s = ops::stack({make<int32_t>({1, 2}, {2}), make<int32_t>({3, 4}, {2})}, 1);
  EXPECT_EQ(s.shape(), (Shape{2, 2}));
  EXPECT_EQ(values<int32_t>(s), (std::vector<int32_t>{1, 3, 2, 4}));
  EXPECT_EQ(ops::expand_dims(a, 0).shape(), (Shape{1, 1, 2}));
  EXPECT_EQ(ops::squeeze(a, {}).shape(), (Shape{2}));
}

TEST(Indexing, BasicIndexIsAView) {
  Array a = ops::reshape(ops::arange(Scalar::from_int(0), Scalar::from_int(12), Scalar::from_int(1), DType::Int64), {3, 4});
  IndexItem all_rows;
  all_rows.kind = IndexItem::Slice;
  IndexItem rev2;
  rev2.kind = IndexItem::Slice;
  rev2.step = -2;
  Array v = ops::getitem(a, {all_rows, rev2});  // a[:, ::-2]
  EXPECT_EQ(v.shape(), (Shape{3, 2}));
  EXPECT_EQ(v.storage(), a.storage());
  EXPECT_EQ(values<int64_t>(v), (std::vector<int64_t>{3, 1, 7, 5, 11, 9}));
  IndexItem one;
  one.kind = IndexItem::Int;
  one.i = -1;
  IndexItem newaxis;
  newaxis.kind = IndexItem::NewAxis;
  Array row = ops::getitem(a, {one, newaxis});  // a[-1, None]
  EXPECT_EQ(row.shape(), (Shape{1, 4}));
  EXPECT_EQ(values<int64_t>(row), (std::vector<int64_t>{8, 9, 10, 11}));
  IndexItem bad;
  bad.kind = IndexItem::Int;
  bad.i = 3;
  EXPECT_EQ(testing::error_kind([&] { ops::getitem(a, {bad}); }), ErrorKind::Index);
}

TEST(Memory, OpsReturnTheirBytes) {
  int64_t before = memory_stats(Device::cpu()).active_bytes;
  {
    Array a = ops::ones({64, 64}, DType::Float64);
    Array b = ops::matmul(a, a);
    Array c = ops::reduce(ReduceOp::Sum, ops::binary(BinaryOp::Add, b, a), std::nullopt, false);
    EXPECT_EQ(values<double>(c), (std::vector<double>{64.0 * 64 * 64 + 64 * 64}));
  }
  EXPECT_EQ(memory_stats(Device::cpu()).active_bytes, before);
}

// ---- reductions, linear algebra and indexing on every dtype -----------------------------------

TEST(ReduceAllDtypes, SmallIntSumsToInt64AndUnsignedToUInt64) {
  Array a = make<int8_t>({100, 100, 100, -1}, {2, 2});
  EXPECT_EQ(values<int64_t>(ops::reduce(ReduceOp::Sum, a, std::vector<int64_t>{0}, false)),
            (std::vector<int64_t>{200, 99}));
  Array u = make<uint16_t>({65535, 1}, {2});
  EXPECT_EQ(values<uint64_t>(ops::reduce(ReduceOp::Sum, u, std::nullopt, false)), (std::vector<uint64_t>{65536}));
  EXPECT_EQ(ops::reduce(ReduceOp::Mean, u, std::nullopt, false).dtype(), DType::Float64);
}

TEST(ReduceAllDtypes, ComplexMaxIsLexicographicAndNaNPropagates) {
  Array c = make<complex128>({{1, 5}, {2, -1}, {2, 0}}, {3});
  EXPECT_EQ(values<complex128>(ops::reduce(ReduceOp::Max, c, std::nullopt, false))[0], complex128(2, 0));
  EXPECT_EQ(values<int64_t>(ops::reduce(ReduceOp::ArgMin, c, std::nullopt, false))[0], 0);
  Array h = make<float16>({float16(1), float16(NAN), float16(3)}, {3});
  EXPECT_TRUE(std::isnan(static_cast<float>(values<float16>(ops::reduce(ReduceOp::Max, h, std::nullopt, false))[0])));
  EXPECT_EQ(testing::error_kind([] { ops::reduce(ReduceOp::Max, Array::empty({0}, DType::Int8), std::nullopt, false); }),
            ErrorKind::Value);
}

TEST(ReduceAllDtypes, VarStdLogsumexpCumsum) {
  Array a = make<int32_t>({1, 2, 3, 4}, {4});
  EXPECT_DOUBLE_EQ(values<double>(ops::var(a, std::nullopt, 1, false))[0], 5.0 / 3.0);
  EXPECT_DOUBLE_EQ(values<double>(ops::std_dev(a, std::nullopt, 0, false))[0], std::sqrt(1.25));
  Array f = make<float>({0, 0}, {2});
  EXPECT_FLOAT_EQ(values<float>(ops::logsumexp(f, std::nullopt, false))[0], std::log(2.0f));
  Array b = make<bool>({true, true, false, true}, {2, 2});
  EXPECT_EQ(values<int64_t>(ops::cumsum(b, std::nullopt)), (std::vector<int64_t>{1, 2, 2, 3}));
  EXPECT_EQ(values<int64_t>(ops::cumsum(b, 0)), (std::vector<int64_t>{1, 1, 1, 2}));
}

TEST(LinalgAllDtypes, MatmulComplexIntAndHalf) {
  Array c = make<complex64>({{0, 1}, {1, 0}}, {1, 2});
  Array d = make<complex64>({{0, 1}, {2, 0}}, {2, 1});
  EXPECT_EQ(values<complex64>(ops::matmul(c, d))[0], complex64(1, 0));  // i*i + 1*2
  Array i8 = make<int8_t>({100, 100}, {1, 2});
  EXPECT_EQ(values<int8_t>(ops::matmul(i8, ops::transpose(i8)))[0], static_cast<int8_t>(20000 % 256));
  Array h = make<float16>({float16(1.5), float16(2)}, {2});
  Array r = ops::matmul(h, h);
  EXPECT_EQ(r.dtype(), DType::Float16);
  EXPECT_EQ(static_cast<float>(values<float16>(r)[0]), 6.25f);
}

TEST(LinalgAllDtypes, OuterDiagTrace) {
  Array v = make<uint8_t>({1, 2}, {2});
  EXPECT_EQ(values<uint8_t>(ops::outer(v, v)), (std::vector<uint8_t>{1, 2, 2, 4}));
  EXPECT_EQ(values<uint8_t>(ops::diag(v, 1)), (std::vector<uint8_t>{0, 1, 0, 0, 0, 2, 0, 0, 0}));
  Array m = make<int16_t>({1, 2, 3, 4, 5, 6}, {2, 3});
  EXPECT_EQ(values<int16_t>(ops::diag(m, 1)), (std::vector<int16_t>{2, 6}));
  EXPECT_EQ(values<int64_t>(ops::trace(m, 0, 0, 1)), (std::vector<int64_t>{6}));
  EXPECT_EQ(testing::error_kind([&] { ops::diagonal(m, 0, 1, -1); }), ErrorKind::Value);
}

TEST(IndexingAllDtypes, TakeMaskAndUpdates) {
  Array a = make<bfloat16>({bfloat16::from_float(1), bfloat16::from_float(2), bfloat16::from_float(3)}, {3});
  Array idx = make<int64_t>({2, -3, 2}, {3});
  Array t = ops::take(a, idx, std::nullopt);
  EXPECT_EQ(values<bfloat16>(t)[0].to_float(), 3.0f);
  EXPECT_EQ(values<bfloat16>(t)[1].to_float(), 1.0f);
  EXPECT_EQ(testing::error_kind([&] { ops::take(a, make<int64_t>({3}, {1}), 0); }), ErrorKind::Index);
  Array mask = make<bool>({true, false, true}, {3});
  EXPECT_EQ(ops::mask_select(a, mask).shape(), (Shape{2}));
  EXPECT_EQ(testing::error_kind([&] { ops::mask_select(a, make<bool>({true}, {1})); }), ErrorKind::Index);
  Array x = make<int32_t>({0, 0, 0}, {3});
  Array inc = ops::update_take(x, make<int64_t>({1, 1, 2}, {3}), 0, make<int32_t>({5}, {1}), true);
  EXPECT_EQ(values<int32_t>(inc), (std::vector<int32_t>{0, 10, 5}));  // repeated indices accumulate
  EXPECT_EQ(values<int32_t>(x), (std::vector<int32_t>{0, 0, 0}));     // x itself unchanged
  Array set = ops::update_mask(x, mask, make<int32_t>({7}, {1}), false);
  EXPECT_EQ(values<int32_t>(set), (std::vector<int32_t>{7, 0, 7}));
  EXPECT_EQ(testing::error_kind([&] { ops::update_take(x, idx, 0, make<double>({1.5}, {1}), false); }), ErrorKind::Type);
}

// A bool array over a uint8 buffer (adopted memory, as a uint8 view of shared memory gives):
// any byte other than 0 is true, NumPy's rule. Every kernel reads the bytes as byte != 0 (a
// load of 2 or 0x80 through a C++ bool is undefined: UBSAN's "not a valid value for type
// 'bool'"), and results are written as 0 or 1.
TEST(BoolBytes, EveryOpReadsAByteAsNonZero) {
  std::vector<uint8_t> bytes = {2, 0x80, 1, 0, 0xff, 0};
  auto st = std::make_shared<Storage>(adopt(bytes.data(), bytes.size(), Device::cpu(), &no_delete, nullptr));
  Array a(st, bytes.data(), {6}, {1}, DType::Bool, true);
  const std::vector<bool> truth = {true, true, true, false, true, false};
  const std::vector<int64_t> ints = {1, 1, 1, 0, 1, 0};

  EXPECT_EQ(values<int64_t>(ops::reduce(ReduceOp::Sum, a, std::nullopt, false)), (std::vector<int64_t>{4}));
  EXPECT_EQ(values<int64_t>(ops::reduce(ReduceOp::Prod, a, std::nullopt, false)), (std::vector<int64_t>{0}));
  EXPECT_EQ(values<double>(ops::reduce(ReduceOp::Mean, a, std::nullopt, false)), (std::vector<double>{4.0 / 6}));
  EXPECT_EQ(values<bool>(ops::reduce(ReduceOp::Any, a, std::nullopt, false)), (std::vector<bool>{true}));
  EXPECT_EQ(values<bool>(ops::reduce(ReduceOp::All, ops::getitem(a, {IndexItem{IndexItem::Slice, 0, 0, 3, 1}}),
                                     std::nullopt, false)),
            (std::vector<bool>{true}));
  EXPECT_EQ(values<bool>(ops::reduce(ReduceOp::Max, a, std::nullopt, false)), (std::vector<bool>{true}));
  EXPECT_EQ(values<int64_t>(ops::cumsum(a, 0)), (std::vector<int64_t>{1, 2, 3, 3, 4, 4}));

  EXPECT_EQ(values<int64_t>(ops::astype(a, DType::Int64)), ints);
  EXPECT_EQ(values<double>(ops::astype(a, DType::Float64)), (std::vector<double>{1, 1, 1, 0, 1, 0}));
  EXPECT_EQ(values<bool>(ops::astype(ops::astype(a, DType::UInt8), DType::Bool)), truth);

  Array n = ops::unary(UnaryOp::LogicalNot, a);
  EXPECT_EQ(values<bool>(n), (std::vector<bool>{false, false, false, true, false, true}));
  for (int64_t i = 0; i < n.size(); ++i) EXPECT_EQ(n.data_as<uint8_t>()[i], truth[i] ? 0 : 1) << i;  // 0 or 1
  Array t = make<bool>({true}, {1});
  EXPECT_EQ(values<bool>(ops::binary(BinaryOp::Equal, a, t)), truth);
  EXPECT_EQ(values<bool>(ops::binary(BinaryOp::LogicalAnd, a, a)), truth);
  EXPECT_EQ(values<bool>(ops::binary(BinaryOp::LogicalXor, a, t)),
            (std::vector<bool>{false, false, false, true, false, true}));
  EXPECT_EQ(values<int64_t>(ops::where(a, make<int64_t>({1}, {1}), make<int64_t>({0}, {1}))), ints);
  EXPECT_EQ(values<int64_t>(ops::mask_select(ops::astype(a, DType::Int64), a)), (std::vector<int64_t>{1, 1, 1, 1}));
  Array m = ops::matmul(ops::reshape(a, {2, 3}), make<bool>({false, true, false, false, true, true}, {3, 2}));
  EXPECT_EQ(values<bool>(m), (std::vector<bool>{true, true, false, false}));
  EXPECT_EQ(bytes, (std::vector<uint8_t>{2, 0x80, 1, 0, 0xff, 0}));  // read, never written
}

TEST(ShapeAllDtypes, SplitSectionsAndPoints) {
  Array a = make<uint64_t>({1, 2, 3, 4, 5, 6}, {6});
  auto parts = ops::split_sections(a, 3, 0);
  ASSERT_EQ(parts.size(), 3u);
  EXPECT_EQ(values<uint64_t>(parts[2]), (std::vector<uint64_t>{5, 6}));
  auto pts = ops::split_at(a, {1, 10}, -1);
  ASSERT_EQ(pts.size(), 3u);
  EXPECT_EQ(pts[1].size(), 5);
  EXPECT_EQ(pts[2].size(), 0);
  EXPECT_EQ(testing::error_kind([&] { ops::split_sections(a, 4, 0); }), ErrorKind::Value);
}


// The one-element fast path of fused_elementwise (every input holds one element on the host)
// gives the general path's values bitwise and the broadcast shape (the longest input's).
TEST(FusedElementwise, OneElementInputsMatchTheUnfusedOps) {
  const std::vector<FusedInstr> code = {
      {true, static_cast<int>(BinaryOp::Multiply), 0, 1},  // r3 = x * y
      {false, static_cast<int>(UnaryOp::Exp), 3, 0},       // r4 = exp(r3)
      {true, static_cast<int>(BinaryOp::Add), 4, 2},       // r5 = r4 + z
  };
  auto full1 = [](const Shape& s, double v) { return ops::full(s, Scalar::from_float(v), DType::Float64); };
  for (const Shape& zs : {Shape{}, Shape{1}, Shape{1, 1}}) {
    Array x = full1({}, 0.3), y = full1({1}, -1.7), z = full1(zs, 2.25);
    Array got = ops::fused_elementwise({x, y, z}, code, DType::Float64);
    Array want = ops::binary(BinaryOp::Add, ops::unary(UnaryOp::Exp, ops::binary(BinaryOp::Multiply, x, y)), z);
    EXPECT_EQ(got.shape(), want.shape());
    EXPECT_EQ(*got.data_as<double>(), *want.data_as<double>());
    // The same values broadcast against a longer operand take the general path: equal too.
    Array big = ops::fused_elementwise({x, y, full1({5}, 2.25)}, code, DType::Float64);
    for (int i = 0; i < 5; ++i) EXPECT_EQ(big.data_as<double>()[i], *want.data_as<double>());
  }
  // The checks still run on the fast path: a dtype mismatch and an unfusable op are TypeErrors.
  Array i32 = ops::full({}, Scalar::from_int(1), DType::Int32);
  EXPECT_THROW(ops::fused_elementwise({i32, full1({}, 1.0), full1({}, 1.0)}, code, DType::Float64), Error);
  const std::vector<FusedInstr> cmp = {{true, static_cast<int>(BinaryOp::Less), 0, 1}};
  EXPECT_THROW(ops::fused_elementwise({full1({}, 1.0), full1({}, 2.0)}, cmp, DType::Float64), Error);
}

}  // namespace
}  // namespace uma
