// Tests of uma.linalg on cuda devices (ops/linalg.cpp, kernels/cuda/cusolver.cpp): each
// factorisation on the device against the host's LAPACK result (values that are unique: inverse,
// solution, determinant, Cholesky factor, eigenvalues, singular values, |R| of QR) and the
// LinAlgErrors of singular and indefinite matrices. Without a usable GPU they skip with the reason.
#include <gtest/gtest.h>

#include <cmath>
#include <complex>
#include <cstdint>
#include <string>
#include <vector>

#include "uma/array.h"
#include "uma/error.h"
#include "uma/memory/cuda.h"
#include "uma/ops.h"
#include "uma/transfer.h"

namespace uma {
namespace {

const Device kGpu{DeviceType::CUDA, 0};

#define NEED_GPU() \
  if (!cuda::is_available()) GTEST_SKIP() << "no usable CUDA GPU: " << cuda::unavailable_reason()

// A (count, n, n) stack of well-conditioned matrices: a dominant diagonal; hermitian positive
// definite when `hpd` (a a^H + n I).
Array matrices(int64_t count, int64_t n, DType t, bool hpd) {
  Array a = Array::empty({count, n, n}, DType::Complex128);
  auto* p = static_cast<std::complex<double>*>(a.data());
  for (int64_t i = 0; i < a.size(); ++i)
    p[i] = {std::sin(0.7 * static_cast<double>(i) + 0.3), std::cos(1.3 * static_cast<double>(i))};
  if (hpd) a = ops::matmul(a, ops::unary(UnaryOp::Conj, ops::transpose(a, {0, 2, 1})));
  a = ops::binary(BinaryOp::Add, a, ops::binary(BinaryOp::Multiply, ops::eye(n, n, 0, DType::Complex128),
                                                 ops::full({}, Scalar::from_float(4.0 * static_cast<double>(n)),
                                                           DType::Complex128)));
  if (t == DType::Float32 || t == DType::Float64) a = ops::unary(UnaryOp::Real, a);
  return ops::astype(a, t);
}

// max |g - c| <= tol * (1 + max |c|), g moved back from the device.
void expect_close(const Array& g, const Array& c, double tol) {
  ASSERT_EQ(g.device(), kGpu);
  ASSERT_EQ(g.shape(), c.shape());
  ASSERT_EQ(g.dtype(), c.dtype());
  Array gh = ops::astype(to_host(g), DType::Complex128), ch = ops::astype(c, DType::Complex128);
  const auto* gp = static_cast<const std::complex<double>*>(gh.data());
  const auto* cp = static_cast<const std::complex<double>*>(ch.data());
  double err = 0, scale = 0;
  for (int64_t i = 0; i < ch.size(); ++i) {
    err = std::max(err, std::abs(gp[i] - cp[i]));
    scale = std::max(scale, std::abs(cp[i]));
  }
  EXPECT_LE(err, tol * (1 + scale));
}

double tol_of(DType t) { return t == DType::Float32 || t == DType::Complex64 ? 1e-3 : 1e-9; }

const DType kTypes[] = {DType::Float32, DType::Float64, DType::Complex64, DType::Complex128};

TEST(CudaLinalg, FactorisationsEqualTheHost) {
  NEED_GPU();
  for (DType t : kTypes) {
    SCOPED_TRACE(dtype_name(t));
    const double tol = tol_of(t);
    Array a = matrices(3, 5, t, false), h = matrices(3, 5, t, true);
    Array ga = to_device(a, kGpu), gh = to_device(h, kGpu);
    expect_close(ops::linalg::inv(ga), ops::linalg::inv(a), tol);
    Array b = ops::astype(matrices(3, 5, t, false), t);
    expect_close(ops::linalg::solve(ga, to_device(b, kGpu)), ops::linalg::solve(a, b), tol);
    expect_close(ops::linalg::det(ga), ops::linalg::det(a), tol);
    auto [gs, gl] = ops::linalg::slogdet(ga);
    auto [cs, cl] = ops::linalg::slogdet(a);
    expect_close(gs, cs, tol);
    expect_close(gl, cl, tol);
    for (bool upper : {false, true}) expect_close(ops::linalg::cholesky(gh, upper), ops::linalg::cholesky(h, upper), tol);
    expect_close(ops::linalg::eigvalsh(gh), ops::linalg::eigvalsh(h), tol);
    for (const Shape& s : {Shape{2, 6, 4}, Shape{2, 4, 6}, Shape{3, 3}}) {
      Array x = ops::astype(ops::reshape(matrices(1, 12, t, false), {-1}), t);
      int64_t need = 1;
      for (int64_t d : s) need *= d;
      Array m = ops::reshape(ops::getitem(x, {IndexItem{IndexItem::Slice, 0, 0, need, {}}}), s);
      Array gm = to_device(m, kGpu);
      expect_close(ops::linalg::svdvals(gm), ops::linalg::svdvals(m), tol);
      for (std::string_view mode : {"reduced", "complete"}) {
        auto [gq, gr] = ops::linalg::qr(gm, mode);
        auto [cq, cr] = ops::linalg::qr(m, mode);
        expect_close(ops::unary(UnaryOp::Abs, gr), ops::unary(UnaryOp::Abs, cr), tol);
        expect_close(ops::matmul(gq, gr), m, tol);
      }
      for (bool full : {false, true}) {
        auto [u, sv, vh] = ops::linalg::svd(gm, full);
        const int64_t k = std::min(s[s.size() - 1], s[s.size() - 2]);
        Array uk = ops::getitem(u, {IndexItem{IndexItem::Ellipsis, 0, {}, {}, {}}, IndexItem{IndexItem::Slice, 0, 0, k, {}}});
        Array vk = ops::getitem(vh, {IndexItem{IndexItem::Ellipsis, 0, {}, {}, {}}, IndexItem{IndexItem::Slice, 0, 0, k, {}},
                                     IndexItem{IndexItem::Slice, 0, {}, {}, {}}});
        Array us = ops::binary(BinaryOp::Multiply, uk, ops::astype(ops::expand_dims(sv, -2), t));
        expect_close(ops::matmul(us, vk), m, tol);
      }
    }
  }
}

TEST(CudaLinalg, SingularAndIndefiniteMatricesAreLinAlgErrorsNamingTheMatrix) {
  NEED_GPU();
  Array a = ops::astype(matrices(2, 3, DType::Float64, false), DType::Float64);
  Array z = ops::zeros({3, 3}, DType::Float64);
  // matrix 1 of the stack: all zeros (singular, not positive definite)
  Array s = ops::stack({ops::getitem(a, {IndexItem{IndexItem::Int, 0, {}, {}, {}}}), z}, 0);
  Array gs = to_device(s, kGpu);
  for (int which = 0; which < 3; ++which) {
    try {
      if (which == 0) ops::linalg::inv(gs);
      else if (which == 1) ops::linalg::solve(gs, gs);
      else ops::linalg::cholesky(gs, false);
      ADD_FAILURE() << "no error";
    } catch (const Error& e) {
      EXPECT_EQ(e.kind(), ErrorKind::LinAlg);
      EXPECT_NE(std::string(e.what()).find("matrix 1 of the stack"), std::string::npos) << e.what();
    }
  }
  // slogdet of a singular matrix is (0, -inf), no error
  auto [sign, logabs] = ops::linalg::slogdet(gs);
  Array sh = to_host(sign), lh = to_host(logabs);
  EXPECT_EQ(sh.data_as<double>()[1], 0.0);
  EXPECT_TRUE(std::isinf(lh.data_as<double>()[1]) && lh.data_as<double>()[1] < 0);
}

}  // namespace
}  // namespace uma
