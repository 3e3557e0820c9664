// fuzz_descriptor — buffer-protocol (PEP 3118) and __array_interface__ descriptors
// (interop::layout_of_buffer, layout_of_interface_buffer, dtype_from_buffer_format,
// dtype_from_typestr), then import_foreign, as uma.asarray runs them.
//
// Input: a mode byte, a format string or typestr, the geometry (ndim, shape or NULL, strides
// or NULL, itemsize, len, offset, flags), then the bytes of the exporter's buffer (a heap copy
// of exactly that size, so ASAN flags reads outside it).
//   * __array_interface__ with buffer data: the buffer's size is known, so every accepted
//     layout must lie inside it (checked against a 128-bit reference), and its data is then
//     read (copy=Always) and shared (the fuzzed copy mode; deleter exactly once).
//   * buffer protocol: an accepted C-contiguous view never needs more than `len` bytes; a
//     strided one (PEP 3118 cannot bound its strides) is imported only when the reference
//     says it stays inside the buffer.
#include <memory>
#include <optional>
#include <string>

#include "fuzz_common.h"
#include "uma/interop/buffer_desc.h"

using namespace uma;
using namespace uma::interop;

namespace {

struct Exporter {
  int released = 0;
};
void release_export(void* ctx, void*, std::size_t) noexcept { ++static_cast<Exporter*>(ctx)->released; }

std::string read_string(fuzz::Reader& r) {
  std::string s(r.u8() % 9, '\0');
  for (auto& c : s) c = static_cast<char>(r.u8());
  return s;
}

CopyMode copy_mode(uint8_t b) { return b % 3 == 0 ? CopyMode::IfNeeded : b % 3 == 1 ? CopyMode::Never : CopyMode::Always; }

// Imports `f` (inside [buf, buf + n)) twice: a copy, then under `copy` with a counted adoption.
void import_both(const ForeignLayout& f, CopyMode copy, std::optional<DType> asked) {
  if (!fuzz::small_enough_to_copy(f)) return;
  const int64_t adopted0 = memory_stats(Device::cpu()).adopted_bytes;
  fuzz::accepts([&] {
    Array a = import_foreign(f, [&]() -> DataPtr { std::abort(); }, std::nullopt, std::nullopt, CopyMode::Always, "fuzz");
    FUZZ_CHECK(a.shape() == f.shape && a.writable() && !a.is_adopted());
  });
  Exporter ex;
  int adopted = 0;
  fuzz::accepts([&] {
    Array a = import_foreign(
        f,
        [&]() {
          ++adopted;
          auto [lo, hi] = byte_extent(f.shape, f.byte_strides, itemsize(f.dtype));
          return adopt(f.ptr, static_cast<std::size_t>(hi - lo), Device::cpu(), &release_export, &ex);
        },
        asked, std::nullopt, copy, "fuzz");
    FUZZ_CHECK(a.shape() == f.shape);
    if (a.is_adopted()) FUZZ_CHECK(a.data() == f.ptr && a.writable() == !f.readonly);
    fuzz::touch(a);
  });
  FUZZ_CHECK(adopted <= 1 && ex.released == adopted);
  FUZZ_CHECK(memory_stats(Device::cpu()).adopted_bytes == adopted0);
}

// Whether every element of f lies inside [buf, buf + n) (128-bit reference).
bool inside(const ForeignLayout& f, const uint8_t* buf, std::size_t n) {
  std::vector<__int128> bs(f.byte_strides.begin(), f.byte_strides.end());
  fuzz::Extent e = fuzz::reference_extent(f.shape, bs, itemsize(f.dtype));
  if (e.empty) return true;
  const __int128 at = static_cast<const uint8_t*>(f.ptr) - buf;
  return at + e.lo >= 0 && at + e.hi <= static_cast<__int128>(n);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, std::size_t size) {
  fuzz::init_once();
  fuzz::Reader r{data, size};
  const uint8_t mode = r.u8();
  const std::string fmt = read_string(r);
  const uint8_t flags = r.u8();
  const int8_t nd_raw = static_cast<int8_t>(r.u8());
  const int ndim = nd_raw >= 0 && nd_raw < 96 ? nd_raw % 7 : nd_raw;
  const std::size_t nd = ndim > 0 ? static_cast<std::size_t>(ndim) : 0;
  std::vector<int64_t> shape(nd), strides(nd);
  for (auto& d : shape) d = r.dim();
  for (auto& s : strides) s = r.stride();
  const int64_t num = (flags & 0x80) ? r.i64() : static_cast<int64_t>(r.u16() % 128);  // itemsize / offset / len
  const uint32_t pos_raw = r.u32();
  const CopyMode copy = copy_mode(r.u8());
  const uint8_t asked_b = r.u8();
  const std::optional<DType> asked = asked_b & 0x80 ? std::optional<DType>(fuzz::dtype_at(asked_b)) : std::nullopt;
  const uint8_t isz_b = r.u8();  // buffer protocol: the itemsize (unless flags & 0x40)
  const std::vector<uint8_t> bytes = r.rest();
  std::unique_ptr<uint8_t[]> buf(new uint8_t[bytes.size()]);
  if (!bytes.empty()) std::memcpy(buf.get(), bytes.data(), bytes.size());
  const bool readonly = flags & 4;

  if (mode & 1) {
    // __array_interface__ with buffer data: {typestr, shape, strides?, offset}.
    std::pair<DType, bool> t;
    if (!fuzz::accepts([&] { t = dtype_from_typestr(fmt, [&] { return (flags & 8) != 0; }); })) return 0;
    std::optional<std::vector<int64_t>> st;
    if (!(flags & 1)) st = strides;  // byte strides, as the interface gives them
    const int64_t offset = num;
    ForeignLayout f;
    if (!fuzz::accepts([&] {
          f = layout_of_interface_buffer(t.first, t.second, shape, st, buf.get(), static_cast<int64_t>(bytes.size()),
                                         offset, readonly, "fuzz");
        }))
      return 0;
    FUZZ_CHECK(f.shape == shape && f.dtype == t.first && f.readonly == readonly);
    FUZZ_CHECK(inside(f, buf.get(), bytes.size()));  // the known buffer bounds every accepted view
    import_both(f, copy, asked);
    return 0;
  }

  // Buffer protocol: a Py_buffer.
  BufferView v;
  v.itemsize = (flags & 0x40) ? num : static_cast<int64_t>(isz_b % 17);
  const uint64_t pos = bytes.empty() ? 0 : pos_raw % (bytes.size() + 1);
  v.buf = buf.get() + pos;
  const int64_t avail = static_cast<int64_t>(bytes.size() - pos);
  v.len = (flags & 0x20) ? ((flags & 0x80) ? num : avail / 2) : avail;  // sometimes a lying len
  v.format = (flags & 0x10) ? nullptr : fmt.c_str();
  v.ndim = ndim;
  v.shape = (flags & 2) ? nullptr : shape.data();
  v.strides = (flags & 1) ? nullptr : strides.data();
  v.has_suboffsets = (flags & 8) != 0;
  v.readonly = readonly;
  ForeignLayout f;
  if (!fuzz::accepts([&] { f = layout_of_buffer(v, "fuzz"); })) return 0;
  FUZZ_CHECK(static_cast<int64_t>(itemsize(f.dtype)) == v.itemsize && f.ptr == v.buf && !v.has_suboffsets);
  FUZZ_CHECK(f.shape.size() == nd && f.byte_strides.size() == nd);
  const int64_t n = checked_size(f.shape);
  FUZZ_CHECK(v.len >= 0 && n <= v.len / v.itemsize);  // never more elements than len holds
  if (!v.strides && v.len <= avail) FUZZ_CHECK(inside(f, buf.get(), bytes.size()));
  if (inside(f, buf.get(), bytes.size())) import_both(f, copy, asked);
  return 0;
}
