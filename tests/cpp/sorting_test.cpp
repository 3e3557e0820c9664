// Small hand-computed cases of sort, argsort, unique, nonzero and searchsorted (uma/ops.h): they
// pin the C++ API and NumPy's order (Note [Sort order]) under the sanitizers without Python. The
// comparison with NumPy on every dtype lives in tests/python/test_sorting.py.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <initializer_list>
#include <limits>
#include <vector>

#include "uma/array.h"
#include "uma/error.h"
#include "error_kind.h"
#include "uma/ops.h"

namespace uma {
namespace {

template <class T>
Array make(std::initializer_list<T> values, Shape shape) {
  Array a = Array::empty(shape, dtype_of<T>::value);
  T* p = a.data_as<T>();
  for (T v : values) *p++ = v;
  return a;
}

template <class T>
std::vector<T> values(const Array& a) {
  EXPECT_EQ(a.dtype(), dtype_of<T>::value);
  EXPECT_TRUE(a.is_c_contiguous());
  return std::vector<T>(a.data_as<T>(), a.data_as<T>() + a.size());
}

const double kNaN = std::numeric_limits<double>::quiet_NaN();

TEST(Sorting, SortAlongEachAxis) {
  Array a = make<int32_t>({3, 1, 2, 0, 5, 4}, {2, 3});
  EXPECT_EQ(values<int32_t>(ops::sort(a, -1, false, true)), (std::vector<int32_t>{1, 2, 3, 0, 4, 5}));
  EXPECT_EQ(values<int32_t>(ops::sort(a, 0, false, true)), (std::vector<int32_t>{0, 1, 2, 3, 5, 4}));
  EXPECT_EQ(values<int32_t>(ops::sort(a, 1, true, false)), (std::vector<int32_t>{3, 2, 1, 5, 4, 0}));
  EXPECT_EQ(values<int64_t>(ops::argsort(a, 0, false, true)), (std::vector<int64_t>{1, 0, 0, 0, 1, 1}));
}

TEST(Sorting, NaNLastAscendingFirstDescendingAndStableTies) {
  Array a = make<double>({2.0, kNaN, -0.0, 1.0, 0.0, kNaN, 1.0}, {7});
  // Ascending: -0.0 and 0.0 tie (original order), NaNs last in original order.
  EXPECT_EQ(values<int64_t>(ops::argsort(a, 0, false, true)), (std::vector<int64_t>{2, 4, 3, 6, 0, 1, 5}));
  // Descending: NaNs first, ties still in original order.
  EXPECT_EQ(values<int64_t>(ops::argsort(a, 0, true, true)), (std::vector<int64_t>{1, 5, 0, 3, 6, 2, 4}));
  std::vector<double> s = values<double>(ops::sort(a, 0, false, true));
  EXPECT_TRUE(std::signbit(s[0]) && !std::signbit(s[1]));
  EXPECT_TRUE(std::isnan(s[5]) && std::isnan(s[6]));
}

TEST(Sorting, ComplexLexicographicWithNaNClasses) {
  using C = std::complex<double>;
  Array a = make<C>({C(kNaN, 0), C(1, kNaN), C(1, 2), C(0, 5), C(1, 1)}, {5});
  // NumPy: [R + Rj, R + nanj, nan + Rj]
  EXPECT_EQ(values<int64_t>(ops::argsort(a, 0, false, true)), (std::vector<int64_t>{3, 4, 2, 1, 0}));
}

TEST(Sorting, BadAxisAndZeroDAreAxisErrors) {
  Array a = make<float>({1.f, 2.f}, {2});
  EXPECT_EQ(testing::error_kind([&] { ops::sort(a, 1, false, true); }), ErrorKind::Axis);
  EXPECT_EQ(testing::error_kind([&] { ops::argsort(make<float>({1.f}, {}), -1, false, true); }), ErrorKind::Axis);
}

TEST(Sets, UniqueAllNaNsDistinctSignedZerosOne) {
  Array a = make<double>({kNaN, 1.0, -0.0, 0.0, kNaN, 2.0, 1.0}, {7});
  ops::UniqueResult r = ops::unique(a, true, true, true);
  std::vector<double> v = values<double>(r.values);
  ASSERT_EQ(v.size(), 5u);
  EXPECT_TRUE(v[0] == 0.0 && std::signbit(v[0]));  // the first occurrence, -0.0
  EXPECT_EQ(v[1], 1.0);
  EXPECT_EQ(v[2], 2.0);
  EXPECT_TRUE(std::isnan(v[3]) && std::isnan(v[4]));
  EXPECT_EQ(values<int64_t>(r.indices), (std::vector<int64_t>{2, 1, 5, 0, 4}));
  EXPECT_EQ(values<int64_t>(r.inverse_indices), (std::vector<int64_t>{3, 1, 0, 0, 4, 2, 1}));
  EXPECT_EQ(values<int64_t>(r.counts), (std::vector<int64_t>{2, 2, 1, 1, 1}));
}

TEST(Sets, UniqueFlattensAndShapesTheInverse) {
  Array a = make<uint8_t>({5, 3, 5, 3, 3, 0}, {2, 3});
  ops::UniqueResult r = ops::unique(a, false, true, false);
  EXPECT_EQ(values<uint8_t>(r.values), (std::vector<uint8_t>{0, 3, 5}));
  EXPECT_EQ(r.inverse_indices.shape(), (Shape{2, 3}));
  EXPECT_EQ(values<int64_t>(r.inverse_indices), (std::vector<int64_t>{2, 1, 2, 1, 1, 0}));
}

TEST(Searching, NonzeroInCOrder) {
  Array a = make<float>({0.f, 1.f, 0.f, std::nanf(""), 2.f, 0.f}, {2, 3});
  std::vector<Array> nz = ops::nonzero(a);
  ASSERT_EQ(nz.size(), 2u);
  EXPECT_EQ(values<int64_t>(nz[0]), (std::vector<int64_t>{0, 1, 1}));
  EXPECT_EQ(values<int64_t>(nz[1]), (std::vector<int64_t>{1, 0, 1}));
  EXPECT_EQ(testing::error_kind([&] { ops::nonzero(make<float>({1.f}, {})); }), ErrorKind::Value);
}

TEST(Searching, SearchsortedSidesSorterAndErrors) {
  Array x = make<double>({1.0, 2.0, 2.0, 3.0, kNaN}, {5});
  Array v = make<double>({2.0, 0.0, 4.0, kNaN}, {4});
  EXPECT_EQ(values<int64_t>(ops::searchsorted(x, v, false, std::nullopt)), (std::vector<int64_t>{1, 0, 4, 4}));
  EXPECT_EQ(values<int64_t>(ops::searchsorted(x, v, true, std::nullopt)), (std::vector<int64_t>{3, 0, 4, 5}));
  Array u = make<int32_t>({30, 10, 20}, {3});
  Array sorter = make<int64_t>({1, 2, 0}, {3});
  Array w = make<int32_t>({15, 30}, {2});
  EXPECT_EQ(values<int64_t>(ops::searchsorted(u, w, false, sorter)), (std::vector<int64_t>{1, 2}));
  EXPECT_EQ(testing::error_kind([&] { ops::searchsorted(make<int32_t>({1, 2}, {1, 2}), w, false, std::nullopt); }),
            ErrorKind::Value);
  EXPECT_EQ(testing::error_kind([&] { ops::searchsorted(u, w, false, make<int64_t>({0, 1, 3}, {3})); }), ErrorKind::Value);
}

}  // namespace
}  // namespace uma
