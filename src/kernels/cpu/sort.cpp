// CPU kernels of sorting, sets and searching: sort / argsort along an axis, the unique values
// of a flattened array with their first positions, inverse and counts, and binary search into
// a sorted 1-d array, on every dtype.
//
// Note [Sort order]
// Every kernel here orders elements by one relation, `before(a, b)`, NumPy's sort order:
//  * bool: false before true (the byte read as byte != 0); integers by value;
//  * floats (float16 and bfloat16 compared as float32, exactly): by value, -0.0 and 0.0 equal
//    (ties), NaN after everything, NaNs equal to each other;
//  * complex: lexicographic (real part, then imaginary part), NumPy's extended order for NaNs
//    [R + Rj, R + nanj, nan + Rj, nan + nanj], values in one NaN class ordered by their other
//    part.
// Descending order is `before(b, a)`: the reverse order, NaN first, and a stable descending sort
// keeps equal elements in their original order (the standard's wording; array-api-strict's
// flip(argsort(flip(x))) gives the same).
// unique groups neighbours of the sorted order that compare equal under `==` (the standard's
// value equality): -0.0 and 0.0 are one value, each NaN (each complex with a NaN part) its own.
#include <omp.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <numeric>
#include <vector>

#include "kernels/axis_blocks.h"
#include "kernels/cpu/loops.h"
#include "kernels/kernels.h"
#include "uma/threads.h"

namespace uma::kernels::cpu {

namespace {

// The value an element is compared by (Note [Sort order]).
template <class T>
auto key(const T& v) {
  if constexpr (std::is_same_v<T, bool8>) return static_cast<int>(static_cast<bool>(v));
  else if constexpr (std::is_same_v<T, bfloat16>) return v.to_float();
  else if constexpr (std::is_same_v<T, float16>) return static_cast<float>(v);
  else return v;
}

template <class F>
bool real_before(F a, F b) {
  return a < b || (b != b && a == a);
}

// NumPy's CLT: the lexicographic order with its NaN classes.
template <class F>
bool complex_before(const std::complex<F>& a, const std::complex<F>& b) {
  const F ar = a.real(), ai = a.imag(), br = b.real(), bi = b.imag();
  if (ar < br) return ai == ai || bi != bi;
  if (ar > br) return bi != bi && ai == ai;
  if (ar == br || (ar != ar && br != br)) return ai < bi || (bi != bi && ai == ai);
  return br != br;
}

template <class T>
bool before(const T& a, const T& b) {
  if constexpr (std::is_same_v<T, complex64> || std::is_same_v<T, complex128>) return complex_before(a, b);
  else if constexpr (std::is_floating_point_v<decltype(key(a))>) return real_before(key(a), key(b));
  else return key(a) < key(b);
}

// The standard's value equality (`==`).
template <class T>
bool same(const T& a, const T& b) {
  return key(a) == key(b);
}

// The element as it is written to a result: bool as 0 or 1, others as they are.
template <class T>
T stored(const T& v) {
  if constexpr (std::is_same_v<T, bool8>) return bool8(static_cast<bool>(v));
  else return v;
}

// One row of `n` elements, `step` elements apart: sorted values into `vals`' order, or positions.
template <class T>
void sort_rows(const Array& a, int64_t axis, bool descending, bool stable, bool indices, const Array& out) {
  const AxisBlocks b = blocks_of(a.shape(), axis);
  const int64_t n = a.shape()[axis], rows = b.outer * b.inner, step = b.inner;
  if (n == 0 || rows == 0) return;
  const T* src = a.data_as<T>();
  const int nt = omp_in_parallel() ? 1 : threads::for_work(rows * n, kGrain);
#pragma omp parallel num_threads(nt)
  {
    std::vector<T> vals(static_cast<std::size_t>(n));
    std::vector<int64_t> order(indices ? static_cast<std::size_t>(n) : 0);
    auto asc = [](const T& x, const T& y) { return before(x, y); };
    auto desc = [](const T& x, const T& y) { return before(y, x); };
#pragma omp for schedule(static)
    for (int64_t r = 0; r < rows; ++r) {
      const int64_t base = (r / b.inner) * n * b.inner + r % b.inner;
      for (int64_t j = 0; j < n; ++j) vals[j] = src[base + j * step];
      if (indices) {
        std::iota(order.begin(), order.end(), int64_t{0});
        auto by = [&](auto cmp) {
          return [&vals, cmp](int64_t i, int64_t k) { return cmp(vals[i], vals[k]); };
        };
        if (descending) {
          if (stable) std::stable_sort(order.begin(), order.end(), by(desc));
          else std::sort(order.begin(), order.end(), by(desc));
        } else {
          if (stable) std::stable_sort(order.begin(), order.end(), by(asc));
          else std::sort(order.begin(), order.end(), by(asc));
        }
        int64_t* dst = out.data_as<int64_t>();
        for (int64_t j = 0; j < n; ++j) dst[base + j * step] = order[j];
      } else {
        if (descending) {
          if (stable) std::stable_sort(vals.begin(), vals.end(), desc);
          else std::sort(vals.begin(), vals.end(), desc);
        } else {
          if (stable) std::stable_sort(vals.begin(), vals.end(), asc);
          else std::sort(vals.begin(), vals.end(), asc);
        }
        T* dst = out.data_as<T>();
        for (int64_t j = 0; j < n; ++j) dst[base + j * step] = stored(vals[j]);
      }
    }
  }
}

template <class T>
UniqueParts unique_of(const Array& a, bool want_indices, bool want_inverse, bool want_counts) {
  const int64_t n = a.size();
  const T* v = a.data_as<T>();
  std::vector<int64_t> order(static_cast<std::size_t>(n));
  std::iota(order.begin(), order.end(), int64_t{0});
  // Stable: the first element of each group of equal values is its first occurrence.
  std::stable_sort(order.begin(), order.end(), [v](int64_t i, int64_t k) { return before(v[i], v[k]); });
  std::vector<int64_t> starts;  // positions in `order` where a group begins
  for (int64_t k = 0; k < n; ++k)
    if (k == 0 || !same(v[order[k - 1]], v[order[k]])) starts.push_back(k);
  const int64_t m = static_cast<int64_t>(starts.size());
  UniqueParts p;
  p.values = Array::empty({m}, a.dtype());
  T* vals = p.values.data_as<T>();
  for (int64_t g = 0; g < m; ++g) vals[g] = stored(v[order[starts[g]]]);
  if (want_indices) {
    p.indices = Array::empty({m}, DType::Int64);
    int64_t* ix = p.indices.data_as<int64_t>();
    for (int64_t g = 0; g < m; ++g) ix[g] = order[starts[g]];
  }
  if (want_counts) {
    p.counts = Array::empty({m}, DType::Int64);
    int64_t* c = p.counts.data_as<int64_t>();
    for (int64_t g = 0; g < m; ++g) c[g] = (g + 1 < m ? starts[g + 1] : n) - starts[g];
  }
  if (want_inverse) {
    p.inverse = Array::empty({n}, DType::Int64);
    int64_t* inv = p.inverse.data_as<int64_t>();
    for (int64_t g = 0, k = 0; g < m; ++g)
      for (const int64_t end = g + 1 < m ? starts[g + 1] : n; k < end; ++k) inv[order[k]] = g;
  }
  return p;
}

template <class T>
void search(const Array& sorted, const Array* sorter, const Array& v, bool right, const Array& out) {
  const int64_t n = sorted.size(), m = v.size();
  const T* s = sorted.data_as<T>();
  const int64_t* perm = sorter ? sorter->data_as<int64_t>() : nullptr;
  const T* q = v.data_as<T>();
  int64_t* o = out.data_as<int64_t>();
  auto at = [s, perm](int64_t i) -> const T& { return s[perm ? perm[i] : i]; };
  const int nt = omp_in_parallel() ? 1 : threads::for_work(m, kGrain);
#pragma omp parallel for num_threads(nt) schedule(static)
  for (int64_t j = 0; j < m; ++j) {
    // left: the first i with !(x1[i] < v); right: the first i with v < x1[i].
    int64_t lo = 0, hi = n;
    const T& x = q[j];
    while (lo < hi) {
      const int64_t mid = lo + (hi - lo) / 2;
      const bool go_right = right ? !before(x, at(mid)) : before(at(mid), x);
      if (go_right) lo = mid + 1;
      else hi = mid;
    }
    o[j] = lo;
  }
}

}  // namespace

void sort(const Array& a, int64_t axis, bool descending, bool stable, bool indices, const Array& out) {
  UMA_ASSERT(a.is_c_contiguous() && out.is_c_contiguous() && out.shape() == a.shape() &&
             out.dtype() == (indices ? DType::Int64 : a.dtype()));
  visit_dtype(a.dtype(), [&](auto t) { sort_rows<decltype(t)>(a, axis, descending, stable, indices, out); });
}

UniqueParts unique(const Array& a, bool want_indices, bool want_inverse, bool want_counts) {
  UMA_ASSERT(a.is_c_contiguous() && a.ndim() == 1);
  return visit_dtype(a.dtype(), [&](auto t) { return unique_of<decltype(t)>(a, want_indices, want_inverse, want_counts); });
}

void searchsorted(const Array& sorted, const Array* sorter, const Array& v, bool right, const Array& out) {
  UMA_ASSERT(sorted.is_c_contiguous() && sorted.ndim() == 1 && v.is_c_contiguous() && v.dtype() == sorted.dtype() &&
             out.is_c_contiguous() && out.dtype() == DType::Int64 && out.size() == v.size());
  UMA_ASSERT(!sorter || (sorter->is_c_contiguous() && sorter->dtype() == DType::Int64 && sorter->size() == sorted.size()));
  visit_dtype(sorted.dtype(), [&](auto t) { search<decltype(t)>(sorted, sorter, v, right, out); });
}

}  // namespace uma::kernels::cpu
