// The LAPACK functions of uma.linalg (uma._core.linalg_*): argument conversion only; the rules
// (shapes, dtypes, errors) are uma::ops::linalg's. python/uma/linalg.py wraps them in the Array
// API standard's signatures and named tuples.
#include <nanobind/stl/pair.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/tuple.h>

#include <string>

#include "common.h"

namespace uma::py {

void bind_linalg(nb::module_& m) {
  m.def("linalg_inv", [](nb::handle x) { return ops::linalg::inv(operand(x, nullptr, "inv")); }, param("x"),
        "The inverse of each (..., M, M) matrix (LAPACK gesv against the identity).");
  m.def("linalg_solve", [](nb::handle a, nb::handle b) {
        return ops::linalg::solve(operand(a, nullptr, "solve"), operand(b, nullptr, "solve"));
      }, param("x1"), param("x2"), "The solution X of x1 X = x2 (LAPACK gesv).");
  m.def("linalg_slogdet", [](nb::handle x) { return ops::linalg::slogdet(operand(x, nullptr, "slogdet")); },
        param("x"), "(sign, logabsdet) of each (..., M, M) matrix (LAPACK getrf).");
  m.def("linalg_det", [](nb::handle x) { return ops::linalg::det(operand(x, nullptr, "det")); }, param("x"),
        "The determinant sign * exp(logabsdet) of each (..., M, M) matrix.");
  m.def("linalg_cholesky", [](nb::handle x, bool upper) {
        return ops::linalg::cholesky(operand(x, nullptr, "cholesky"), upper);
      }, param("x"), nb::arg("upper") = false, "The Cholesky factor of each matrix (LAPACK potrf).");
  m.def("linalg_eigh", [](nb::handle x) { return ops::linalg::eigh(operand(x, nullptr, "eigh")); }, param("x"),
        "(eigenvalues, eigenvectors) of each Hermitian matrix (LAPACK syevd/heevd).");
  m.def("linalg_eigvalsh", [](nb::handle x) { return ops::linalg::eigvalsh(operand(x, nullptr, "eigvalsh")); },
        param("x"), "The eigenvalues of each Hermitian matrix (LAPACK syevd/heevd).");
  m.def("linalg_eig", [](nb::handle x) { return ops::linalg::eig(operand(x, nullptr, "eig")); }, param("x"),
        "(eigenvalues, eigenvectors) of each general square matrix, complex (LAPACK cgeev/zgeev).");
  m.def("linalg_eigvals", [](nb::handle x) { return ops::linalg::eigvals(operand(x, nullptr, "eigvals")); },
        param("x"), "The eigenvalues of each general square matrix, complex (LAPACK cgeev/zgeev).");
  m.def("linalg_svd", [](nb::handle x, bool full_matrices) {
        return ops::linalg::svd(operand(x, nullptr, "svd"), full_matrices);
      }, param("x"), nb::arg("full_matrices") = true, "(U, S, Vh) of each matrix (LAPACK gesdd).");
  m.def("linalg_svdvals", [](nb::handle x) { return ops::linalg::svdvals(operand(x, nullptr, "svdvals")); },
        param("x"), "The singular values of each matrix (LAPACK gesdd).");
  m.def("linalg_qr", [](nb::handle x, const std::string& mode) {
        return ops::linalg::qr(operand(x, nullptr, "qr"), mode);
      }, param("x"), nb::arg("mode") = "reduced", "(Q, R) of each matrix (LAPACK geqrf, orgqr/ungqr).");
}

}  // namespace uma::py
