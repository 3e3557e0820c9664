// src/kernels/cpu/loops.h — strided N-d iteration shared by the CPU kernels.
//
// A Loop<K> describes K operands of one shape in byte strides, with size-1 dims dropped and
// adjacent dims merged where every operand allows it (stride[d] == stride[d+1]*shape[d+1]).
// run_loop calls inner(ptrs, inner_strides, n) for each innermost run, splitting the
// element range across OpenMP threads when the work is large.
#pragma once
#include <omp.h>

#include <array>
#include <cstdint>
#include <vector>

#include "uma/array.h"
#include "uma/threads.h"

namespace uma::kernels::cpu {

// The elements each thread of a kernel's team gets at least (uma/threads.h, for_work): a
// parallel region costs a few microseconds, so smaller kernels run on one thread.
constexpr int64_t kGrain = 1 << 16;

template <std::size_t K>
struct Loop {
  std::vector<int64_t> shape;
  std::array<std::vector<int64_t>, K> strides;  // bytes
  int64_t size = 1;
};

/// Builds a collapsed loop from a shape and K operands' element strides and itemsizes.
template <std::size_t K>
Loop<K> make_loop(const Shape& shape, const std::array<const Array*, K>& ops) {
  Loop<K> L;
  // An empty array's strides are never used and may be anything (a producer's (0, 2**60)
  // tensor with huge strides is valid): size 0, nothing to build, no stride arithmetic.
  for (int64_t d : shape)
    if (d == 0) {
      L.size = 0;
      return L;
    }
  for (std::size_t d = 0; d < shape.size(); ++d) {
    L.size *= shape[d];
    if (shape[d] == 1) continue;
    bool merge = !L.shape.empty();
    for (std::size_t k = 0; k < K && merge; ++k) {
      int64_t s = ops[k]->strides()[d] * static_cast<int64_t>(ops[k]->itemsize());
      merge = L.strides[k].back() == s * shape[d];
    }
    if (merge) {
      L.shape.back() *= shape[d];
      for (std::size_t k = 0; k < K; ++k)
        L.strides[k].back() = ops[k]->strides()[d] * static_cast<int64_t>(ops[k]->itemsize());
    } else {
      L.shape.push_back(shape[d]);
      for (std::size_t k = 0; k < K; ++k)
        L.strides[k].push_back(ops[k]->strides()[d] * static_cast<int64_t>(ops[k]->itemsize()));
    }
  }
  return L;
}

template <std::size_t K, class Inner>
void run_range(const Loop<K>& L, const std::array<char*, K>& base, int64_t begin, int64_t end, Inner& inner) {
  if (begin >= end) return;
  const int nd = static_cast<int>(L.shape.size());
  std::array<int64_t, K> in_str{};
  if (nd == 0) {
    if (begin < end) inner(base, in_str, int64_t(1));
    return;
  }
  for (std::size_t k = 0; k < K; ++k) in_str[k] = L.strides[k][nd - 1];
  // The multi-index lives on the stack for the usual ranks (no allocation per call: small
  // reductions call this once per output element).
  int64_t idx_small[16];
  std::vector<int64_t> idx_big(nd > 16 ? nd : 0);
  int64_t* idx = nd > 16 ? idx_big.data() : idx_small;
  int64_t rem = begin;
  for (int d = nd - 1; d >= 0; --d) {
    idx[d] = rem % L.shape[d];
    rem /= L.shape[d];
  }
  std::array<char*, K> p = base;
  for (std::size_t k = 0; k < K; ++k)
    for (int d = 0; d < nd; ++d) p[k] += idx[d] * L.strides[k][d];
  const int64_t inner_n = L.shape[nd - 1];
  int64_t pos = begin;
  while (pos < end) {
    int64_t n = inner_n - idx[nd - 1];
    if (end - pos < n) n = end - pos;
    inner(p, in_str, n);
    pos += n;
    if (pos >= end) break;
    for (std::size_t k = 0; k < K; ++k) p[k] += n * in_str[k];
    idx[nd - 1] += n;
    for (int d = nd - 1; d > 0 && idx[d] == L.shape[d]; --d) {
      idx[d] = 0;
      idx[d - 1] += 1;
      for (std::size_t k = 0; k < K; ++k) p[k] += L.strides[k][d - 1] - L.shape[d] * L.strides[k][d];
    }
  }
}

/// Runs `inner` over every element of the loop, in parallel when large.
template <std::size_t K, class Inner>
void run_loop(const Loop<K>& L, const std::array<char*, K>& base, Inner inner) {
  const int64_t total = L.size;
  if (total == 0) return;
  const int nt = omp_in_parallel() ? 1 : threads::for_work(total, kGrain);
  if (nt <= 1) {
    run_range(L, base, 0, total, inner);
    return;
  }
#pragma omp parallel num_threads(nt)
  {
    int t = omp_get_thread_num(), T = omp_get_num_threads();
    int64_t chunk = (total + T - 1) / T;
    int64_t b = t * chunk, e = b + chunk < total ? b + chunk : total;
    Inner local = inner;
    if (b < e) run_range(L, base, b, e, local);
  }
}

template <std::size_t K>
std::array<char*, K> bases(const std::array<const Array*, K>& ops) {
  std::array<char*, K> b;
  for (std::size_t k = 0; k < K; ++k) b[k] = static_cast<char*>(ops[k]->data());
  return b;
}

}  // namespace uma::kernels::cpu
