// uma::ops::linalg (LAPACK through OpenBLAS) on small hand-computed cases: the C++ API, the
// shape rules and the error kinds. The comparison with numpy.linalg on random stacks of every
// dtype is tests/python/test_linalg.py.
#include <gtest/gtest.h>

#include <cmath>
#include <complex>
#include <initializer_list>
#include <vector>

#include "uma/array.h"
#include "uma/error.h"
#include "error_kind.h"
#include "uma/ops.h"

namespace uma {
namespace {

template <class T> Array make(std::initializer_list<T> values, Shape shape) {
  Array a = Array::empty(shape, dtype_of<T>::value);
  EXPECT_EQ(static_cast<std::size_t>(a.size()), values.size());
  T* p = a.data_as<T>();
  for (T v : values) *p++ = v;
  return a;
}

template <class T> std::vector<T> values(const Array& a) {
  const Array c = ops::contiguous(a);
  const T* p = c.data_as<T>();
  return std::vector<T>(p, p + c.size());
}

TEST(Linalg, InvOfAStack) {
  // [[2, 1], [1, 1]]^-1 = [[1, -1], [-1, 2]]; diag(4, 0.5)^-1 = diag(0.25, 2)
  const Array a = make<double>({2, 1, 1, 1, 4, 0, 0, 0.5}, {2, 2, 2});
  const Array r = ops::linalg::inv(a);
  EXPECT_EQ(r.shape(), (Shape{2, 2, 2}));
  const std::vector<double> want{1, -1, -1, 2, 0.25, 0, 0, 2};
  const std::vector<double> got = values<double>(r);
  for (std::size_t i = 0; i < want.size(); ++i) EXPECT_NEAR(got[i], want[i], 1e-14) << i;
}

TEST(Linalg, SolveVectorAndMatrixRightHandSides) {
  const Array a = make<double>({3, 1, 1, 2}, {2, 2});  // 3x + y = 9, x + 2y = 8 -> (2, 3)
  const std::vector<double> x = values<double>(ops::linalg::solve(a, make<double>({9, 8}, {2})));
  ASSERT_EQ(x.size(), 2u);
  EXPECT_NEAR(x[0], 2, 1e-14);
  EXPECT_NEAR(x[1], 3, 1e-14);
  const Array xm = ops::linalg::solve(a, make<double>({9, 3, 8, 1}, {2, 2}));  // columns (9, 8) and (3, 1)
  EXPECT_EQ(xm.shape(), (Shape{2, 2}));
  const std::vector<double> m = values<double>(xm);
  EXPECT_NEAR(m[0], 2, 1e-14);
  EXPECT_NEAR(m[2], 3, 1e-14);
  EXPECT_NEAR(m[1], 1, 1e-14);
  EXPECT_NEAR(m[3], 0, 1e-14);
}

TEST(Linalg, DetAndSlogdetWithPivoting) {
  // [[0, 1], [1, 0]] needs a row swap: det = -1
  const Array a = make<double>({0, 1, 1, 0, 2, 0, 0, 3}, {2, 2, 2});
  const std::vector<double> d = values<double>(ops::linalg::det(a));
  EXPECT_NEAR(d[0], -1, 1e-15);
  EXPECT_NEAR(d[1], 6, 1e-14);
  auto [sign, logabs] = ops::linalg::slogdet(a);
  EXPECT_EQ(values<double>(sign), (std::vector<double>{-1, 1}));
  EXPECT_NEAR(values<double>(logabs)[1], std::log(6.0), 1e-15);
  auto [s0, l0] = ops::linalg::slogdet(make<double>({1, 2, 2, 4}, {2, 2}));  // singular
  EXPECT_EQ(values<double>(s0)[0], 0);
  EXPECT_EQ(values<double>(l0)[0], -INFINITY);
}

TEST(Linalg, ComplexDetHasAUnitSign) {
  using C = std::complex<double>;
  const Array a = make<C>({C(0, 2)}, {1, 1});
  auto [sign, logabs] = ops::linalg::slogdet(a);
  EXPECT_EQ(sign.dtype(), DType::Complex128);
  EXPECT_EQ(logabs.dtype(), DType::Float64);
  EXPECT_NEAR(std::abs(values<C>(sign)[0] - C(0, 1)), 0, 1e-15);
  EXPECT_NEAR(values<double>(logabs)[0], std::log(2.0), 1e-15);
}

TEST(Linalg, CholeskyLowerAndUpper) {
  const Array a = make<float>({4, 2, 2, 5}, {2, 2});  // L = [[2, 0], [1, 2]]
  EXPECT_EQ(values<float>(ops::linalg::cholesky(a, false)), (std::vector<float>{2, 0, 1, 2}));
  EXPECT_EQ(values<float>(ops::linalg::cholesky(a, true)), (std::vector<float>{2, 1, 0, 2}));
  EXPECT_EQ(testing::error_kind([] { ops::linalg::cholesky(make<double>({1, 2, 2, 1}, {2, 2}), false); }), ErrorKind::LinAlg);
}

TEST(Linalg, EighSortsAscending) {
  const Array a = make<double>({2, 1, 1, 2}, {2, 2});  // eigenvalues 1, 3
  auto [w, v] = ops::linalg::eigh(a);
  const std::vector<double> ws = values<double>(w);
  EXPECT_NEAR(ws[0], 1, 1e-14);
  EXPECT_NEAR(ws[1], 3, 1e-14);
  const std::vector<double> q = values<double>(v);  // columns: (1, -1)/sqrt2 and (1, 1)/sqrt2 up to sign
  EXPECT_NEAR(std::abs(q[0]), std::sqrt(0.5), 1e-14);
  EXPECT_NEAR(q[0] * q[2], -0.5, 1e-14);
  EXPECT_NEAR(q[1] * q[3], 0.5, 1e-14);
  EXPECT_EQ(values<double>(ops::linalg::eigvalsh(a)).size(), 2u);
}

TEST(Linalg, SvdShapesAndValues) {
  const Array a = make<double>({3, 0, 0, 0, -2, 0}, {2, 3});  // singular values 3, 2
  auto [u, s, vh] = ops::linalg::svd(a, true);
  EXPECT_EQ(u.shape(), (Shape{2, 2}));
  EXPECT_EQ(vh.shape(), (Shape{3, 3}));
  const std::vector<double> sv = values<double>(s);
  EXPECT_NEAR(sv[0], 3, 1e-14);
  EXPECT_NEAR(sv[1], 2, 1e-14);
  auto [ur, sr, vr] = ops::linalg::svd(a, false);
  EXPECT_EQ(vr.shape(), (Shape{2, 3}));
  EXPECT_EQ(ops::linalg::svdvals(a).shape(), (Shape{2}));
}

TEST(Linalg, QrOfATallMatrix) {
  const Array a = make<double>({3, 1, 4, 2, 0, 0}, {3, 2});
  auto [q, r] = ops::linalg::qr(a, "reduced");
  EXPECT_EQ(q.shape(), (Shape{3, 2}));
  EXPECT_EQ(r.shape(), (Shape{2, 2}));
  EXPECT_NEAR(std::abs(values<double>(r)[0]), 5, 1e-14);  // |R00| = the first column's norm
  EXPECT_EQ(values<double>(r)[2], 0);
  auto [qc, rc] = ops::linalg::qr(a, "complete");
  EXPECT_EQ(qc.shape(), (Shape{3, 3}));
  EXPECT_EQ(rc.shape(), (Shape{3, 2}));
  EXPECT_EQ(testing::error_kind([&] { ops::linalg::qr(a, "full"); }), ErrorKind::Value);
}

TEST(Linalg, ShapeDtypeAndSingularErrors) {
  // shapes numpy.linalg refuses with its LinAlgError: uma's LinAlg kind (a ValueError in Python)
  EXPECT_EQ(testing::error_kind([] { ops::linalg::inv(make<double>({1, 2, 3}, {3})); }), ErrorKind::LinAlg);
  EXPECT_EQ(testing::error_kind([] { ops::linalg::inv(make<double>({1, 2, 3, 4, 5, 6}, {2, 3})); }), ErrorKind::LinAlg);
  EXPECT_EQ(testing::error_kind([] { ops::linalg::inv(make<double>({1, 2, 2, 4}, {2, 2})); }), ErrorKind::LinAlg);
  EXPECT_EQ(testing::error_kind([] { ops::linalg::solve(make<double>({1, 0, 0, 1}, {2, 2}), make<double>({1, 2, 3}, {3})); }),
            ErrorKind::Value);
  EXPECT_EQ(testing::error_kind([] { ops::linalg::det(ops::astype(make<float>({1}, {1, 1}), DType::Float16)); }), ErrorKind::Type);
  // integers compute in float64 (NumPy's rule)
  EXPECT_EQ(ops::linalg::inv(make<int64_t>({2}, {1, 1})).dtype(), DType::Float64);
  EXPECT_EQ(ops::linalg_dtype(DType::Bool, "inv"), DType::Float64);
  EXPECT_EQ(ops::linalg_dtype(DType::Complex64, "inv"), DType::Complex64);
}

TEST(Linalg, ShapeRulesOnStaticShapes) {
  const ops::SolveShapes s = ops::solve_shapes({2, 1, 3, 3}, {4, 3, 5});
  EXPECT_EQ(s.result, (Shape{2, 4, 3, 5}));
  EXPECT_FALSE(s.vector);
  EXPECT_EQ(ops::solve_shapes({2, 3, 3}, {3}).result, (Shape{2, 3}));
  const ops::SvdShapes v = ops::svd_shapes({7, 5, 3}, false);
  EXPECT_EQ(v.u, (Shape{7, 5, 3}));
  EXPECT_EQ(v.s, (Shape{7, 3}));
  EXPECT_EQ(v.vh, (Shape{7, 3, 3}));
  EXPECT_EQ(ops::qr_shapes({2, 5}, true).first, (Shape{2, 2}));
  EXPECT_EQ(ops::svd_shapes({ops::kUnknownLength, 4}, false).s, (Shape{ops::kUnknownLength}));
  EXPECT_EQ(ops::linalg_batch_shape({ops::kUnknownLength, 4}, true, "inv"), (Shape{}));
}

TEST(Linalg, EmptyStacksAndZeroByZero) {
  EXPECT_EQ(ops::linalg::inv(Array::empty({0, 3, 3}, DType::Float64)).shape(), (Shape{0, 3, 3}));
  EXPECT_EQ(values<double>(ops::linalg::det(Array::empty({2, 0, 0}, DType::Float64))), (std::vector<double>{1, 1}));
  auto [u, s, vh] = ops::linalg::svd(Array::empty({3, 0}, DType::Float32), true);
  EXPECT_EQ(values<float>(u), (std::vector<float>{1, 0, 0, 0, 1, 0, 0, 0, 1}));
}

}  // namespace
}  // namespace uma
