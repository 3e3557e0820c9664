// fuzz_dlpack — DLPack import from random descriptors (interop::layout_of + import_foreign,
// the path of uma.from_dlpack).
//
// Input: a DLTensor description (dtype code/bits/lanes, device, ndim, shape, strides or NULL,
// data position, byte_offset, flags) followed by the bytes of the producer's buffer. A data
// position with its top bit set is followed by an arbitrary 64-bit data address instead (the
// class "pointer plus byte_offset or strides wraps the address space": only arithmetic). The
// tensor points into a heap copy of exactly those bytes, so ASAN flags any read outside it.
// A DLTensor carries no buffer size, so the importer cannot detect a descriptor that lies
// about its memory; the target therefore imports data only when its own 128-bit reference
// extent says the descriptor stays inside the buffer, and then checks that uma agrees:
//   * layout_of accepts a tensor of size > 0 only with a non-NULL data pointer;
//   * the accepted layout's ptr is data + byte_offset and byte_extent equals the reference;
//   * a copy (copy=Always) reads every element (ASAN), a shared import is a view inside the
//     buffer whose deleter runs exactly once, and adopted_bytes returns to its baseline;
//   * exporting the result and describing it again gives the same layout;
//   * bool bytes: a bool tensor's bytes are anything (a producer's uint8 seen as bool), and
//     sum, any, all, logical_not, astype and a mask read of the import (shared or copied)
//     give NumPy's values, byte != 0, computed from the producer's bytes.
// Descriptors that do not fit the buffer still go through layout_of and byte_extent (pure
// arithmetic: overflow checks) but their data is never touched.
#include <memory>
#include <optional>

#include "fuzz_common.h"
#include "uma/interop/dlpack_io.h"

using namespace uma;
using namespace uma::interop;
namespace dl = uma::dlpack;

namespace {

struct Producer {
  int deleted = 0;
};
void producer_deleter(void* ctx, void*, std::size_t) noexcept { ++static_cast<Producer*>(ctx)->deleted; }

// The elements of a host layout in C order, each 1 when its byte is not 0 (NumPy's value of a
// bool byte); the layout lies inside its buffer.
std::vector<uint8_t> bool_values(const ForeignLayout& f) {
  const int64_t n = checked_size(f.shape);
  std::vector<uint8_t> v;
  v.reserve(static_cast<std::size_t>(n));
  std::vector<int64_t> idx(f.shape.size(), 0);
  const auto* p = static_cast<const uint8_t*>(f.ptr);
  int64_t off = 0;
  for (int64_t i = 0; i < n; ++i) {
    v.push_back(p[off] != 0 ? 1 : 0);
    for (std::size_t k = f.shape.size(); k-- > 0;) {  // odometer over the C-order index
      off += f.byte_strides[k];
      if (++idx[k] < f.shape[k]) break;
      off -= f.byte_strides[k] * f.shape[k];
      idx[k] = 0;
    }
  }
  return v;
}

// Ops on a bool array `a` whose C-order values are `truth` (0/1) give those values.
void check_bool_ops(const Array& a, const std::vector<uint8_t>& truth) {
  int64_t count = 0;
  for (uint8_t t : truth) count += t;
  const int64_t n = static_cast<int64_t>(truth.size());
  FUZZ_CHECK(a.size() == n);
  FUZZ_CHECK(ops::reduce(ReduceOp::Sum, a, std::nullopt, false).data_as<int64_t>()[0] == count);
  FUZZ_CHECK(ops::reduce(ReduceOp::Any, a, std::nullopt, false).data_as<uint8_t>()[0] == (count > 0 ? 1 : 0));
  FUZZ_CHECK(ops::reduce(ReduceOp::All, a, std::nullopt, false).data_as<uint8_t>()[0] == (count == n ? 1 : 0));
  const Array nots = ops::contiguous(ops::unary(UnaryOp::LogicalNot, a));
  const Array ints = ops::contiguous(ops::astype(a, DType::Int64));
  for (int64_t i = 0; i < n; ++i) {
    FUZZ_CHECK(nots.data_as<uint8_t>()[i] == 1 - truth[i]);
    FUZZ_CHECK(ints.data_as<int64_t>()[i] == truth[i]);
  }
  if (a.ndim() > 0) {
    const Array picked = ops::mask_select(ints, a);  // the ones of `ints`, count of them
    FUZZ_CHECK(picked.ndim() == 1 && picked.shape()[0] == count);
    const Array sum = ops::reduce(ReduceOp::Sum, picked, std::nullopt, false);
    FUZZ_CHECK(sum.data_as<int64_t>()[0] == count);
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, std::size_t size) {
  fuzz::init_once();
  fuzz::Reader r{data, size};
  dl::DLTensor t{};
  t.dtype.code = r.u8();
  t.dtype.bits = r.u8();
  t.dtype.lanes = r.u16();
  const uint8_t dev = r.u8();
  t.device.device_type = dev < 0x80 ? (dev % 4 == 0 ? dl::kCPU : dev % 4 == 1 ? dl::kCUDAHost : dev % 4 == 2 ? dl::kCUDA : dev)
                                    : static_cast<int32_t>(r.u32());
  t.device.device_id = 0;
  const int8_t nd_raw = static_cast<int8_t>(r.u8());
  t.ndim = nd_raw >= 0 && nd_raw < 96 ? nd_raw % 9 : nd_raw;  // mostly 0..8; also 96..127 and negative
  const uint8_t flags = r.u8();
  const bool null_strides = flags & 1, null_data = flags & 2, readonly = flags & 4;
  const CopyMode copy = (flags >> 3) % 3 == 0 ? CopyMode::IfNeeded : (flags >> 3) % 3 == 1 ? CopyMode::Never : CopyMode::Always;
  const bool want_dtype = flags & 0x20;
  const bool huge_offset = flags & 0x40;  // (flags & 0x80: NULL shape, below)
  const std::size_t nd = t.ndim > 0 ? static_cast<std::size_t>(t.ndim) : 0;
  std::vector<int64_t> shape(nd), strides(nd);
  for (auto& d : shape) d = r.dim();
  for (auto& s : strides) s = r.stride();
  const uint32_t pos_raw = r.u32();
  const bool raw_address = pos_raw & 0x80000000u;  // data: any 64-bit address, never read
  const uint64_t raw = raw_address ? r.u64() : 0;
  t.byte_offset = huge_offset ? r.u64() : r.u16() % 64;
  const DType asked = fuzz::dtype_at(r.u8());
  const std::vector<uint8_t> bytes = r.rest();

  // The producer's buffer: exactly bytes.size() bytes on the heap.
  std::unique_ptr<uint8_t[]> buf(new uint8_t[bytes.size()]);
  if (!bytes.empty()) std::memcpy(buf.get(), bytes.data(), bytes.size());
  const uint64_t pos = bytes.empty() ? 0 : pos_raw % (bytes.size() + 1);
  t.data = null_data ? nullptr : raw_address ? reinterpret_cast<void*>(raw) : buf.get() + pos;
  t.shape = (flags & 0x80) ? nullptr : shape.data();  // NULL shape: must be refused when ndim > 0
  t.strides = null_strides ? nullptr : strides.data();

  ForeignLayout f;
  if (!fuzz::accepts([&] { f = layout_of(t, readonly); })) return 0;
  if (raw_address) {
    // Any address: an accepted layout's first element, data + byte_offset, is an address in
    // [0, 2**63), and address_extent accepts exactly the descriptors whose every element's
    // address lies there (the reference computed in 128-bit arithmetic).
    const __int128 first = static_cast<__int128>(reinterpret_cast<uintptr_t>(t.data)) + t.byte_offset;
    FUZZ_CHECK(first <= static_cast<__int128>(INT64_MAX));
    if (t.data) FUZZ_CHECK(reinterpret_cast<uintptr_t>(f.ptr) == static_cast<uintptr_t>(first));
    bool bounded = true;
    std::vector<__int128> rs(f.shape.size());
    for (std::size_t k = 0; k < f.shape.size(); ++k) {
      rs[k] = f.byte_strides[k];
      bounded = bounded && f.shape[k] < (int64_t(1) << 40);
    }
    std::pair<int64_t, int64_t> ext{0, 0};
    const bool ok = fuzz::accepts([&] { ext = address_extent(f, "fuzz"); });
    if (bounded && fuzz::accepts([&] { byte_extent(f.shape, f.byte_strides, itemsize(f.dtype)); })) {
      const fuzz::Extent e = fuzz::reference_extent(f.shape, rs, itemsize(f.dtype));
      const __int128 base = static_cast<__int128>(reinterpret_cast<uintptr_t>(f.ptr));
      FUZZ_CHECK(ok == (e.empty || (base + e.lo >= 0 && base + e.hi <= static_cast<__int128>(INT64_MAX))));
    }
    return 0;
  }

  // ---- the reference: what the descriptor addresses, in 128-bit arithmetic ----
  const std::size_t isz = itemsize(f.dtype);
  FUZZ_CHECK(f.shape == shape);
  bool zero = false;
  for (int64_t d : shape) zero = zero || d == 0;
  std::vector<__int128> bs(nd);
  if (null_strides) {  // C-contiguous
    __int128 acc = isz;
    for (std::size_t k = nd; k-- > 0;) {
      bs[k] = acc;
      if (shape[k] > 0 && acc < (static_cast<__int128>(1) << 100)) acc *= shape[k];
    }
  } else {
    for (std::size_t k = 0; k < nd; ++k) bs[k] = static_cast<__int128>(strides[k]) * isz;
  }
  bool fits = true;  // every addressed byte lies inside buf
  fuzz::Extent ref;
  if (!zero) {
    FUZZ_CHECK(t.data != nullptr);  // layout_of refuses size > 0 with NULL data
    for (std::size_t k = 0; k < nd; ++k)  // bounded magnitudes keep the reference exact
      if (shape[k] > 1 && (bs[k] > static_cast<__int128>(1) << 40 || bs[k] < -(static_cast<__int128>(1) << 40) ||
                           shape[k] > (int64_t(1) << 40)))
        fits = false;
    if (fits) {
      ref = fuzz::reference_extent(shape, bs, isz);
      const __int128 at = static_cast<__int128>(pos) + t.byte_offset;
      fits = at + ref.lo >= 0 && at + ref.hi <= static_cast<__int128>(bytes.size());
    }
  }

  std::pair<int64_t, int64_t> ext{0, 0};
  const bool ext_ok = fuzz::accepts([&] { ext = byte_extent(f.shape, f.byte_strides, isz); });
  if (!fits) {
    // Not inside the buffer: arithmetic only (decide_copy never reads data).
    fuzz::accepts([&] { decide_copy(f, want_dtype ? std::optional<DType>(asked) : std::nullopt, std::nullopt, copy, "fuzz"); });
    return 0;
  }
  FUZZ_CHECK(ext_ok);
  if (!zero) {
    FUZZ_CHECK(f.ptr == static_cast<char*>(t.data) + t.byte_offset);
    FUZZ_CHECK(ext.first == static_cast<int64_t>(ref.lo) && ext.second == static_cast<int64_t>(ref.hi));
  } else {
    FUZZ_CHECK(ext.first == 0 && ext.second == 0);
  }

  if (!fuzz::small_enough_to_copy(f)) return 0;
  const int64_t adopted0 = memory_stats(Device::cpu()).adopted_bytes;
  // Bool bytes: NumPy's values of the producer's bytes, for tensors small enough to check.
  int64_t n_elements = -1;
  fuzz::accepts([&] { n_elements = checked_size(f.shape); });
  const bool check_bools = f.dtype == DType::Bool && f.device.is_cpu() && n_elements >= 0 && n_elements <= (int64_t(1) << 16);
  const std::vector<uint8_t> truth = check_bools ? bool_values(f) : std::vector<uint8_t>{};
  // copy=Always: a fresh writable array; reads every element of the source.
  fuzz::accepts([&] {
    Array a = import_foreign(f, [&]() -> DataPtr { std::abort(); }, std::nullopt, std::nullopt, CopyMode::Always, "fuzz");
    FUZZ_CHECK(a.shape() == shape && a.writable() && !a.is_adopted() && a.is_c_contiguous());
    if (check_bools) check_bool_ops(a, truth);
  });

  // The fuzzed copy mode and dtype, with an adopt callback like the binding's.
  Producer prod;
  int adopted = 0;
  fuzz::accepts([&] {
    Array a = import_foreign(
        f,
        [&]() {
          ++adopted;
          return adopt(f.ptr, static_cast<std::size_t>(ext.second - ext.first), Device::cpu(), &producer_deleter, &prod);
        },
        want_dtype ? std::optional<DType>(asked) : std::nullopt, std::nullopt, copy, "fuzz");
    FUZZ_CHECK(a.shape() == shape);
    if (a.is_adopted()) {
      FUZZ_CHECK(a.data() == f.ptr && a.writable() == !readonly && a.dtype() == f.dtype);
      if (a.size() > 0) {  // the view's elements are exactly the descriptor's
        fuzz::Extent e;
        std::vector<__int128> vs;
        for (int64_t s : a.strides()) vs.push_back(static_cast<__int128>(s) * isz);
        e = fuzz::reference_extent(a.shape(), vs, isz);
        FUZZ_CHECK(e.lo == ref.lo && e.hi == ref.hi);
      }
    } else {
      FUZZ_CHECK(a.writable() && a.is_c_contiguous());
    }
    fuzz::touch(a);
    if (check_bools && a.dtype() == DType::Bool) check_bool_ops(a, truth);
    // Export and describe again: the same layout.
    dl::DLManagedTensorVersioned* m = export_versioned(a, false, dlpack_device_code(a));
    fuzz::accepts([&] {
      ForeignLayout g = layout_of(m->dl_tensor, (m->flags & dl::kFlagReadOnly) != 0);
      FUZZ_CHECK(g.shape == a.shape() && g.dtype == a.dtype() && g.readonly == !a.writable());
      if (a.size() > 0) FUZZ_CHECK(g.ptr == a.data());
    });
    m->deleter(m);
  });
  FUZZ_CHECK(adopted <= 1 && prod.deleted == adopted);
  FUZZ_CHECK(memory_stats(Device::cpu()).adopted_bytes == adopted0);
  return 0;
}
