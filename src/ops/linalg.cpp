// matmul with NumPy semantics: 1-D operands are promoted to matrices and the added axis
// removed from the result; leading (batch) axes broadcast.
#include "kernels/kernels.h"
#include "ops/common.h"

namespace uma::ops {

Array matmul(const Array& a00, const Array& b00) {
  Array a0 = a00, b0 = b00;
  const Device dev = detail::common_device("matmul", {&a0, &b0});
  UMA_CHECK(a0.ndim() > 0 && b0.ndim() > 0, Value, "matmul: input operand ", a0.ndim() == 0 ? 0 : 1,
            " does not have enough dimensions (has 0, requires at least 1)");
  const DType t = promote_types(a0.dtype(), b0.dtype());
  if (dev.is_cpu() || (t != DType::Float16 && t != DType::BFloat16)) detail::check_compute("matmul", t);
  Array a = a0.dtype() == t ? a0 : astype(a0, t);
  Array b = b0.dtype() == t ? b0 : astype(b0, t);
  const bool a1 = a.ndim() == 1, b1 = b.ndim() == 1;
  if (a1) a = a.view(a.data(), {1, a.shape()[0]}, {0, a.strides()[0]});
  if (b1) b = b.view(b.data(), {b.shape()[0], 1}, {b.strides()[0], 0});
  const int64_t M = a.shape()[a.ndim() - 2], K = a.shape()[a.ndim() - 1];
  const int64_t K2 = b.shape()[b.ndim() - 2], N = b.shape()[b.ndim() - 1];
  UMA_CHECK(K == K2, Value, "matmul: Input operand 1 has a mismatch in its core dimension 0 (size ", K2,
            " is different from ", K, "); shapes ", shape_str(a0.shape()), " and ", shape_str(b0.shape()));
  Shape ba(a.shape().begin(), a.shape().end() - 2), bb(b.shape().begin(), b.shape().end() - 2);
  Shape batch = broadcast_shapes(ba, bb, "matmul");
  Shape full = batch;
  full.push_back(M);
  full.push_back(N);
  Array out = Array::empty(full, t, dev);
  Shape sa = batch, sb = batch;
  sa.push_back(M); sa.push_back(K);
  sb.push_back(K); sb.push_back(N);
  Array A = detail::broadcast_view(a, sa), B = detail::broadcast_view(b, sb);
  if (!dev.is_cpu()) kernels::cuda::matmul(A, B, out);  // one strided-batched cuBLAS call
  const int64_t nb = dev.is_cpu() ? checked_size(batch) : 0, nbd = static_cast<int64_t>(batch.size());
  Strides bc = contiguous_strides(batch);
  const int64_t isz = static_cast<int64_t>(itemsize(t));
  for (int64_t i = 0; i < nb; ++i) {
    int64_t oa = 0, ob = 0;
    for (int64_t d = 0; d < nbd; ++d) {
      int64_t idx = (i / bc[d]) % batch[d];
      oa += idx * A.strides()[d];
      ob += idx * B.strides()[d];
    }
    Array am = A.view(static_cast<char*>(A.data()) + oa * isz, {M, K}, {A.strides()[nbd], A.strides()[nbd + 1]});
    Array bm = B.view(static_cast<char*>(B.data()) + ob * isz, {K, N}, {B.strides()[nbd], B.strides()[nbd + 1]});
    Array om = out.view(static_cast<char*>(out.data()) + i * M * N * isz, {M, N}, {N, 1});
    kernels::cpu::gemm(am, bm, om);
  }
  Shape res = batch;
  if (!a1) res.push_back(M);
  if (!b1) res.push_back(N);
  return out.view(out.data(), res, contiguous_strides(res));
}

}  // namespace uma::ops
