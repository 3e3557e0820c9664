// fuzz_npy — .npy header parsing and loading. The input is the whole file.
//
// Checks, beyond "no crash, no sanitizer report, only uma::Error":
//   * npy_header_end / parse_npy_header never read past `avail` (the parser gets a heap copy
//     of exactly the bytes it may read) and refuse a prefix shorter than the header;
//   * an accepted header satisfies its invariant data_offset + data_nbytes == file size, with
//     data_nbytes == prod(shape) * itemsize;
//   * the header np.save would write for it (npy_header_bytes) parses back to the same dtype,
//     shape and order;
//   * load_npy on the same bytes as a file (a memfd) agrees with the parser: it succeeds for
//     mmap=False exactly when the header is valid and the data are (bools 0/1), the arrays
//     have the header's shape and dtype, lie inside their storage, and mmap=True (when it
//     can share) gives the same bytes.
#include <memory>
#include <optional>

#include "fuzz_common.h"
#include "uma/interop/files.h"

using namespace uma;
using namespace uma::files;

namespace {

// A heap copy of data[0, n): reading past n is an ASAN report.
std::unique_ptr<unsigned char[]> exact_copy(const uint8_t* data, std::size_t n) {
  std::unique_ptr<unsigned char[]> p(new unsigned char[n ? n : 1]);
  if (n) std::memcpy(p.get(), data, n);
  return p;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, std::size_t size) {
  fuzz::init_once();
  uint64_t end = 0;
  {
    auto pre = exact_copy(data, std::min<std::size_t>(size, 12));
    if (!fuzz::accepts([&] { end = npy_header_end(pre.get(), std::min<std::size_t>(size, 12), size); })) {
      fuzz::accepts([&] { load_npy(fuzz::MemFile(data, size).path(), false); });
      return 0;
    }
  }
  FUZZ_CHECK(end >= 10 && end <= size);

  // A prefix shorter than the header is refused, not over-read.
  if (end > 0) {
    auto shorter = exact_copy(data, end - 1);
    FUZZ_CHECK(!fuzz::accepts([&] { parse_npy_header(shorter.get(), end - 1, size); }));
  }
  auto hdr = exact_copy(data, end);
  std::optional<NpyHeader> h;
  fuzz::accepts([&] { h = parse_npy_header(hdr.get(), end, size); });

  if (h) {
    const uint64_t n = static_cast<uint64_t>(checked_size(h->shape));
    FUZZ_CHECK(h->data_offset == end);
    FUZZ_CHECK(h->data_nbytes == n * itemsize(h->dtype));
    FUZZ_CHECK(h->data_offset + h->data_nbytes == size);
    // Round trip through the writer's header.
    const std::string w = npy_header_bytes(h->dtype, h->shape, h->fortran_order);
    FUZZ_CHECK(w.size() % 64 == 0);
    auto wp = exact_copy(reinterpret_cast<const uint8_t*>(w.data()), w.size());
    NpyHeader g = parse_npy_header(wp.get(), w.size(), w.size() + h->data_nbytes);
    FUZZ_CHECK(g.dtype == h->dtype && g.shape == h->shape && g.fortran_order == h->fortran_order && !g.byteswapped);
  }

  // The real loader on the same bytes.
  fuzz::MemFile file(data, size);
  std::optional<Array> a, m;
  fuzz::accepts([&] { a = load_npy(file.path(), false); });
  fuzz::accepts([&] { m = load_npy(file.path(), true); });
  if (!h) {
    FUZZ_CHECK(!a && !m);
    return 0;
  }
  for (const auto* x : {&a, &m}) {
    if (!*x) continue;
    const Array& arr = **x;
    FUZZ_CHECK(arr.shape() == h->shape && arr.dtype() == h->dtype);
    fuzz::check_inside_storage(arr);
    fuzz::touch(arr);
  }
  if (a && m && a->size() > 0 && !h->byteswapped) {
    Array ca = ops::contiguous(*a), cm = ops::contiguous(*m);
    FUZZ_CHECK(std::memcmp(ca.data(), cm.data(), static_cast<std::size_t>(ca.nbytes())) == 0);
  }
  if (m) FUZZ_CHECK(a.has_value() && !m->writable() && m->is_adopted());
  return 0;
}
