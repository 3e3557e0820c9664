// Host side of the indexing, one_hot and assignment kernels on cuda devices
// (kernels/cuda_kernels.h): geometry, workspaces, and the read-backs that decide errors (a bad
// index, a mask's count), which wait for uma's stream of the device.
#include <cstring>
#include <limits>

#include "kernels/axis_blocks.h"
#include "kernels/cuda/index_launch.h"
#include "kernels/cuda/host_launch.h"
#include "kernels/cuda_kernels.h"
#include "kernels/kernels.h"
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






// The geometry of a strided view for the kernels: size-1 axes dropped, axes contiguous with
// the next one merged (the flat C-order position of an element is unchanged).
L::StridedGeometry geometry_of(const Array& v, const char* what) {
  L::StridedGeometry g{};
  const auto isz = static_cast<int64_t>(v.itemsize());
  int nd = 0;
  for (int64_t d = 0; d < v.ndim(); ++d) {
    const int64_t n = v.shape()[d], st = v.strides()[d] * isz;
    if (n == 1) continue;
    if (nd > 0 && g.byte_strides[nd - 1] == st * n) {
      g.shape[nd - 1] *= n;
      g.byte_strides[nd - 1] = st;
      continue;
    }
    UMA_CHECK(nd < L::kMaxDims, Runtime, what, ": views of more than ", L::kMaxDims,
              " non-mergeable dimensions are not supported on cuda");
    g.shape[nd] = n;
    g.byte_strides[nd] = st;
    ++nd;
  }
  g.ndim = nd;
  return g;
}

// Elements of rest's axes from `position` on (the inner block of gather and scatter_at).
int64_t inner_size(const Array& rest, int64_t position) {
  int64_t n = 1;
  for (auto d = static_cast<std::size_t>(position); d < rest.shape().size(); ++d) n *= rest.shape()[d];
  return n;
}

}  // namespace

void normalize_indices(const char* op, const Array& idx, int64_t n, int64_t axis, DType src_dtype) {
  UMA_ASSERT(idx.is_c_contiguous() && idx.dtype() == DType::Int64);
  const int64_t m = idx.size();
  if (m == 0) return;
  Launch l(idx);
  Array flag = Array::empty({1}, DType::UInt64, idx.device());
  const unsigned long long none = std::numeric_limits<unsigned long long>::max();
  // 0xff.. in every byte is UINT64_MAX: the "no bad index" value atomicMin lowers.
  UMA_CUDA_CHECK(cudaMemsetAsync(flag.data(), 0xff, sizeof(none), l.st()));
  check(L::normalize_indices(static_cast<int64_t*>(idx.data()), m, n, src_dtype == DType::UInt64,
                             static_cast<unsigned long long*>(flag.data()), l.stream),
        "normalize_indices<<<...>>>");
  unsigned long long first = none;
  read_back(&first, flag.data(), sizeof(first), l);
  if (first == none) return;
  int64_t v = 0;
  read_back(&v, static_cast<const int64_t*>(idx.data()) + first, sizeof(v), l);
  if (src_dtype == DType::UInt64 && v < 0)  // a uint64 index >= 2**63
    UMA_FAIL(Index, op, ": index ", static_cast<uint64_t>(v), " is out of bounds for axis ", axis, " with size ", n);
  UMA_FAIL(Index, op, ": index ", v, " is out of bounds for axis ", axis, " with size ", n);
}

void take(const Array& a, const Array& idx, int64_t axis, const Array& out) {
  UMA_ASSERT(a.is_c_contiguous() && out.is_c_contiguous() && idx.is_c_contiguous() && idx.dtype() == DType::Int64);
  const AxisBlocks b = blocks_of(a.shape(), axis);
  const int64_t n = a.shape()[axis], m = idx.size();
  if (b.outer == 0 || b.inner == 0 || m == 0) return;
  Launch l(out);
  check(L::gather(a.data(), static_cast<const int64_t*>(idx.data()), out.data(), b.outer, n, m, b.inner,
                  static_cast<int>(a.itemsize()), l.stream),
        "take<<<...>>>");
}

void scatter(const Array& dst, const Array& idx, int64_t axis, const Array& src, bool accumulate, bool sorted_unique) {
  UMA_ASSERT(dst.is_c_contiguous() && src.is_c_contiguous() && idx.is_c_contiguous() && idx.dtype() == DType::Int64 &&
             src.dtype() == dst.dtype());
  const AxisBlocks b = blocks_of(dst.shape(), axis);
  const int64_t n = dst.shape()[axis], m = idx.size();
  if (b.outer == 0 || b.inner == 0 || m == 0) return;
  Launch l(dst);
  const Device dev = dst.device();
  const auto* keys = static_cast<const uint64_t*>(idx.data());
  const int64_t* vals = nullptr;
  Array sorted_keys, sorted_vals, iota, ws;
  if (!sorted_unique) {
    // Group repeated destinations: a stable sort by index keeps each group's source rows in
    // order, so the last one wins (set) and the additions run in index order (accumulate).
    int bits = 1;
    while (bits < 63 && (int64_t{1} << bits) < n) ++bits;
    sorted_keys = Array::empty({m}, DType::UInt64, dev);
    sorted_vals = Array::empty({m}, DType::Int64, dev);
    iota = Array::empty({m}, DType::Int64, dev);
    check(L::iota(static_cast<int64_t*>(iota.data()), m, l.stream), "iota<<<...>>>");
    std::size_t bytes = 0;
    check(L::sort_pairs(nullptr, &bytes, keys, static_cast<uint64_t*>(sorted_keys.data()),
                        static_cast<const int64_t*>(iota.data()), static_cast<int64_t*>(sorted_vals.data()), m, bits,
                        l.stream),
          "cub::DeviceRadixSort::SortPairs (size query)");
    ws = workspace(bytes, dev);
    check(L::sort_pairs(ws.data(), &bytes, keys, static_cast<uint64_t*>(sorted_keys.data()),
                        static_cast<const int64_t*>(iota.data()), static_cast<int64_t*>(sorted_vals.data()), m, bits,
                        l.stream),
          "cub::DeviceRadixSort::SortPairs");
    keys = static_cast<const uint64_t*>(sorted_keys.data());
    vals = static_cast<const int64_t*>(sorted_vals.data());
  }
  check(L::scatter_segments(dst.data(), src.data(), keys, vals, b.outer, n, m, b.inner, static_cast<int>(dst.dtype()),
                            static_cast<int>(dst.itemsize()), accumulate, l.stream),
        accumulate ? "inc_subtensor<<<...>>>" : "set_subtensor<<<...>>>");
  // The temporaries return to the stream-ordered cache here: later work on the stream may reuse them.
}

void gather(const Array& rest, const Array& offsets, int64_t position, const Array& out) {
  UMA_ASSERT(out.is_c_contiguous() && offsets.is_c_contiguous() && offsets.dtype() == DType::Int64 &&
             out.dtype() == rest.dtype() && out.device() == rest.device() && offsets.device() == rest.device());
  if (out.size() == 0) return;
  const L::StridedGeometry g = geometry_of(rest, "getitem");
  Launch l(out);
  check(L::gather_picks(rest.data(), static_cast<const int64_t*>(offsets.data()), out.data(), g,
                        inner_size(rest, position), offsets.size(), static_cast<int>(rest.itemsize()), l.stream),
        "gather_picks<<<...>>>");
}

void scatter_at(const Array& rest, const Array& offsets, int64_t position, const Array& src, bool distinct) {
  UMA_ASSERT(src.is_c_contiguous() && offsets.is_c_contiguous() && offsets.dtype() == DType::Int64 &&
             src.dtype() == rest.dtype() && src.device() == rest.device() && offsets.device() == rest.device());
  if (src.size() == 0) return;
  const L::StridedGeometry g = geometry_of(rest, "setitem");
  const Device dev = rest.device();
  const int64_t m = offsets.size();
  const auto* off = static_cast<const int64_t*>(offsets.data());
  Launch l(src);
  Array keep;
  if (m > 1 && !distinct) {
    // Repeated offsets: a stable sort by offset groups them with their positions in order, and
    // only the last of each group writes (the cpu kernel's last write wins, no racing writes).
    Array keys = Array::empty({m}, DType::UInt64, dev), sorted_keys = Array::empty({m}, DType::UInt64, dev);
    Array iota = Array::empty({m}, DType::Int64, dev), sorted_vals = Array::empty({m}, DType::Int64, dev);
    auto* kp = static_cast<uint64_t*>(keys.data());
    auto* skp = static_cast<uint64_t*>(sorted_keys.data());
    auto* ip = static_cast<int64_t*>(iota.data());
    auto* svp = static_cast<int64_t*>(sorted_vals.data());
    check(L::order_keys(off, kp, m, l.stream), "order_keys<<<...>>>");
    check(L::iota(ip, m, l.stream), "iota<<<...>>>");
    std::size_t bytes = 0;
    check(L::sort_pairs(nullptr, &bytes, kp, skp, ip, svp, m, 64, l.stream),
          "cub::DeviceRadixSort::SortPairs (size query)");
    Array ws = workspace(bytes, dev);
    check(L::sort_pairs(ws.data(), &bytes, kp, skp, ip, svp, m, 64, l.stream), "cub::DeviceRadixSort::SortPairs");
    keep = Array::empty({m}, DType::Bool, dev);
    check(L::mark_last(skp, svp, static_cast<bool8*>(keep.data()), m, l.stream), "mark_last<<<...>>>");
  }
  check(L::scatter_picks(rest.data(), off, keep.defined() ? static_cast<const bool8*>(keep.data()) : nullptr,
                         src.data(), g, inner_size(rest, position), m, static_cast<int>(rest.itemsize()), l.stream),
        "scatter_picks<<<...>>>");
  // The temporaries return to the stream-ordered cache here: later work on the stream may reuse them.
}

Array mask_positions(const Array& mask) {
  UMA_ASSERT(mask.is_c_contiguous() && mask.dtype() == DType::Bool);
  const Device dev = mask.device();
  const int64_t n = mask.size();
  if (n == 0) return Array::empty({0}, DType::Int64, dev);
  Launch l(mask);
  Array counts = Array::empty({n}, DType::Int64, dev);
  const auto* mp = static_cast<const bool8*>(mask.data());
  auto* cp = static_cast<int64_t*>(counts.data());
  std::size_t bytes = 0;
  check(L::mask_count(nullptr, &bytes, mp, cp, n, l.stream), "cub::DeviceScan::InclusiveSum (size query)");
  Array ws = workspace(bytes, dev);
  check(L::mask_count(ws.data(), &bytes, mp, cp, n, l.stream), "cub::DeviceScan::InclusiveSum");
  int64_t count = 0;  // the one read-back: the result's length depends on the data
  read_back(&count, cp + (n - 1), sizeof(count), l);
  Array pos = Array::empty({count}, DType::Int64, dev);
  if (count > 0) check(L::mask_compact(mp, cp, static_cast<int64_t*>(pos.data()), n, l.stream), "mask_compact<<<...>>>");
  return pos;
}

void one_hot(const Array& idx, int64_t depth, const Array& out) {
  UMA_ASSERT(idx.is_c_contiguous() && idx.dtype() == DType::Int64 && out.is_c_contiguous() &&
             out.size() == idx.size() * depth);
  if (out.size() == 0) return;
  unsigned char one[16] = {};
  const Array h = cpu::one_of(out.dtype());
  std::memcpy(one, h.data(), out.itemsize());
  Launch l(out);
  check(L::one_hot(static_cast<const int64_t*>(idx.data()), idx.size(), depth, one, static_cast<int>(out.itemsize()),
                   out.data(), l.stream),
        "one_hot<<<...>>>");
}

}  // namespace uma::kernels::cuda
