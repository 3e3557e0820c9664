// Host side of sorting, searching and unique on cuda devices (kernels/cuda_kernels.h): the
// sort's keys and segments (Note [Radix keys] in kernels/cuda/sort_launch.h), workspaces from
// the stream-ordered cache, and the one read-back unique needs (its number of values).
#include <limits>

#include "kernels/cuda/sort_launch.h"
#include "kernels/cuda/host_launch.h"
#include "kernels/cuda_kernels.h"
#include "memory/cuda/cuda_check.h"
#include "uma/error.h"
#include "uma/memory/cuda.h"

namespace uma::kernels::cuda {

using host::check;
using host::Launch;
using host::read_back;
using host::workspace;

namespace L = cuda_launch;

namespace {





int64_t* i64(const Array& a) { return static_cast<int64_t*>(a.data()); }

// perm (int64, a's size) = the positions along the last axis (rows of n) that sort each row of
// the C-contiguous `a` stably (Note [Radix keys]).
void sort_positions(const Array& a, int64_t n, bool descending, const Array& perm, const Launch& l) {
  const Device dev = a.device();
  const int64_t total = a.size(), rows = total / n;
  const int dt = static_cast<int>(a.dtype());
  const int bits = L::radix_key_bits(dt);
  const DType kt = bits == 64 ? DType::UInt64 : DType::UInt32;
  Array offsets = Array::empty({rows + 1}, DType::Int64, dev), iota = Array::empty({total}, DType::Int64, dev);
  Array keys = Array::empty({total}, kt, dev), sorted_keys = Array::empty({total}, kt, dev);
  check(L::row_setup(i64(offsets), rows, n, i64(iota), l.stream), "row_setup<<<...>>>");
  std::size_t bytes = 0;
  check(L::segmented_sort(nullptr, &bytes, bits, descending, keys.data(), sorted_keys.data(), i64(iota), i64(perm),
                          total, rows, i64(offsets), l.stream),
        "cub::DeviceSegmentedSort::StableSortPairs (size query)");
  Array ws = workspace(bytes, dev);
  const char* what = "cub::DeviceSegmentedSort::StableSortPairs";
  if (a.dtype() == DType::Complex128) {
    // Three stable passes, each reading the elements through the previous pass's order: by the
    // imaginary parts, by the real parts, by the NaN classes (NumPy's order: the classes, then
    // lexicographic).
    Array first = Array::empty({total}, DType::Int64, dev), second = Array::empty({total}, DType::Int64, dev);
    const Array* in = &iota;
    const Array* out[] = {&first, &second, &perm};
    const int parts[] = {2, 1, 3};
    for (int k = 0; k < 3; ++k) {
      check(L::radix_keys(dt, a.data(), k == 0 ? nullptr : i64(*in), n, keys.data(), total, parts[k], l.stream),
            "radix_keys<<<...>>>");
      check(L::segmented_sort(ws.data(), &bytes, bits, descending, keys.data(), sorted_keys.data(), i64(*in),
                              i64(*out[k]), total, rows, i64(offsets), l.stream),
            what);
      in = out[k];
    }
    return;
  }
  check(L::radix_keys(dt, a.data(), nullptr, n, keys.data(), total, 0, l.stream), "radix_keys<<<...>>>");
  check(L::segmented_sort(ws.data(), &bytes, bits, descending, keys.data(), sorted_keys.data(), i64(iota), i64(perm),
                          total, rows, i64(offsets), l.stream),
        what);
}

}  // namespace

void sort(const Array& a, int64_t axis, bool descending, bool, bool indices, const Array& out) {
  UMA_ASSERT(a.is_c_contiguous() && out.is_c_contiguous() && out.shape() == a.shape() && axis == a.ndim() - 1 &&
             out.dtype() == (indices ? DType::Int64 : a.dtype()));
  const int64_t n = a.shape()[axis], total = a.size();
  if (total == 0) return;
  Launch l(out);
  // Stable in every case (a stable sort is a valid unstable one).
  Array perm = indices ? out : Array::empty({total}, DType::Int64, a.device());
  sort_positions(a, n, descending, perm, l);
  if (!indices)
    check(L::gather_rows(a.data(), i64(perm), out.data(), total, n, static_cast<int>(a.itemsize()),
                         a.dtype() == DType::Bool, l.stream),
          "gather_rows<<<...>>>");
}

UniqueParts unique(const Array& a, bool want_indices, bool want_inverse, bool want_counts) {
  UMA_ASSERT(a.is_c_contiguous() && a.ndim() == 1);
  const Device dev = a.device();
  const int64_t n = a.size();
  UniqueParts p;
  if (n == 0) {
    p.values = Array::empty({0}, a.dtype(), dev);
    if (want_indices) p.indices = Array::empty({0}, DType::Int64, dev);
    if (want_inverse) p.inverse = Array::empty({0}, DType::Int64, dev);
    if (want_counts) p.counts = Array::empty({0}, DType::Int64, dev);
    return p;
  }
  Launch l(a);
  // Stable: the first element of each group of equal values is its first occurrence.
  Array perm = Array::empty({n}, DType::Int64, dev), sorted = Array::empty({n}, a.dtype(), dev);
  sort_positions(a, n, false, perm, l);
  check(L::gather_rows(a.data(), i64(perm), sorted.data(), n, n, static_cast<int>(a.itemsize()), false, l.stream),
        "gather_rows<<<...>>>");
  Array gid = Array::empty({n}, DType::Int64, dev);
  check(L::group_starts(static_cast<int>(a.dtype()), sorted.data(), i64(gid), n, l.stream), "group_starts<<<...>>>");
  std::size_t bytes = 0;
  check(L::inclusive_sum(nullptr, &bytes, i64(gid), n, l.stream), "cub::DeviceScan::InclusiveSum (size query)");
  Array ws = workspace(bytes, dev);
  check(L::inclusive_sum(ws.data(), &bytes, i64(gid), n, l.stream), "cub::DeviceScan::InclusiveSum");
  int64_t groups = 0;  // the one read-back: the result's length depends on the data
  read_back(&groups, i64(gid) + (n - 1), sizeof(groups), l);
  Array starts = Array::empty({groups}, DType::Int64, dev);
  if (want_inverse) p.inverse = Array::empty({n}, DType::Int64, dev);
  check(L::group_layout(i64(gid), i64(perm), n, i64(starts), want_inverse ? i64(p.inverse) : nullptr, l.stream),
        "group_layout<<<...>>>");
  p.values = Array::empty({groups}, a.dtype(), dev);
  if (want_indices) p.indices = Array::empty({groups}, DType::Int64, dev);
  if (want_counts) p.counts = Array::empty({groups}, DType::Int64, dev);
  check(L::group_outputs(sorted.data(), i64(perm), i64(starts), groups, n, p.values.data(),
                         static_cast<int>(a.itemsize()), a.dtype() == DType::Bool,
                         want_indices ? i64(p.indices) : nullptr, want_counts ? i64(p.counts) : nullptr, l.stream),
        "group_outputs<<<...>>>");
  return p;
}

void searchsorted(const Array& sorted, const Array* sorter, const Array& v, bool right, const Array& out) {
  UMA_ASSERT(sorted.is_c_contiguous() && sorted.ndim() == 1 && v.is_c_contiguous() && v.dtype() == sorted.dtype() &&
             out.is_c_contiguous() && out.dtype() == DType::Int64 && out.size() == v.size());
  UMA_ASSERT(!sorter || (sorter->is_c_contiguous() && sorter->dtype() == DType::Int64 && sorter->size() == sorted.size()));
  if (v.size() == 0) return;
  Launch l(out);
  check(L::search_sorted(static_cast<int>(sorted.dtype()), sorted.data(), sorter ? i64(*sorter) : nullptr,
                         sorted.size(), v.data(), v.size(), right, i64(out), l.stream),
        "search_sorted<<<...>>>");
}

int64_t first_out_of_range(const Array& idx, int64_t n, int64_t* value) {
  UMA_ASSERT(idx.is_c_contiguous() && idx.dtype() == DType::Int64);
  const int64_t m = idx.size();
  if (m == 0) return -1;
  Launch l(idx);
  Array flag = Array::empty({1}, DType::UInt64, idx.device());
  const unsigned long long none = std::numeric_limits<unsigned long long>::max();
  UMA_CUDA_CHECK(cudaMemsetAsync(flag.data(), 0xff, sizeof(none), l.st()));
  check(L::first_outside(i64(idx), m, n, static_cast<unsigned long long*>(flag.data()), l.stream),
        "first_outside<<<...>>>");
  unsigned long long first = none;
  read_back(&first, flag.data(), sizeof(first), l);
  if (first == none) return -1;
  read_back(value, i64(idx) + first, sizeof(*value), l);
  return static_cast<int64_t>(first);
}

}  // namespace uma::kernels::cuda
