// fuzz_safetensors — .safetensors header parsing and loading. The input is the whole file.
//
// Checks, beyond "no crash, no sanitizer report, only uma::Error":
//   * safetensors_header_end / parse_safetensors_header never read past `avail` (a heap copy
//     of exactly those bytes) and refuse a prefix shorter than the header;
//   * an accepted header's tensors tile the data section exactly, in order, each holding
//     prod(shape) * itemsize bytes;
//   * the header the writer produces for the same tensors and metadata (plan_safetensors +
//     safetensors_header_bytes) parses back to the same names, dtypes, shapes and metadata;
//   * load_safetensors on the same bytes as a file (a memfd) agrees with the parser, its
//     arrays lie inside their storage, and mmap=True (when it can share) gives the same bytes.
#include <algorithm>
#include <map>
#include <memory>
#include <optional>

#include "fuzz_common.h"
#include "uma/interop/files.h"

using namespace uma;
using namespace uma::files;

namespace {

std::unique_ptr<unsigned char[]> exact_copy(const uint8_t* data, std::size_t n) {
  std::unique_ptr<unsigned char[]> p(new unsigned char[n ? n : 1]);
  if (n) std::memcpy(p.get(), data, n);
  return p;
}

std::map<std::string, std::pair<DType, Shape>> by_name(const SafetensorsHeader& h) {
  std::map<std::string, std::pair<DType, Shape>> m;
  for (const auto& t : h.tensors) m[t.name] = {t.dtype, t.shape};
  return m;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, std::size_t size) {
  fuzz::init_once();
  uint64_t end = 0;
  {
    auto pre = exact_copy(data, std::min<std::size_t>(size, 8));
    if (!fuzz::accepts([&] { end = safetensors_header_end(pre.get(), std::min<std::size_t>(size, 8), size); })) {
      fuzz::accepts([&] { load_safetensors(fuzz::MemFile(data, size).path(), false); });
      return 0;
    }
  }
  FUZZ_CHECK(end >= 8 && end <= size);
  if (end > 8) {
    auto shorter = exact_copy(data, end - 1);
    FUZZ_CHECK(!fuzz::accepts([&] { parse_safetensors_header(shorter.get(), end - 1, size); }));
  }
  auto hdr = exact_copy(data, end);
  std::optional<SafetensorsHeader> h;
  fuzz::accepts([&] { h = parse_safetensors_header(hdr.get(), end, size); });

  if (h) {
    FUZZ_CHECK(h->data_offset == end);
    uint64_t pos = 0;
    for (const auto& t : h->tensors) {
      FUZZ_CHECK(t.begin == pos && t.end >= t.begin);
      FUZZ_CHECK(t.end - t.begin == static_cast<uint64_t>(checked_size(t.shape)) * itemsize(t.dtype));
      pos = t.end;
    }
    FUZZ_CHECK(end + pos == size);
    // Round trip through the writer (complex128 cannot come out of a header, so plan accepts).
    std::vector<SafetensorsTensor> ts = h->tensors;
    SafetensorsHeader p = plan_safetensors(ts, h->metadata);
    const std::string w = safetensors_header_bytes(p);
    FUZZ_CHECK(w.size() % 8 == 0);
    uint64_t total = p.tensors.empty() ? 0 : p.tensors.back().end;
    FUZZ_CHECK(total == pos);
    auto wp = exact_copy(reinterpret_cast<const uint8_t*>(w.data()), w.size());
    SafetensorsHeader g = parse_safetensors_header(wp.get(), w.size(), w.size() + total);
    FUZZ_CHECK(by_name(g) == by_name(*h));
    FUZZ_CHECK(g.metadata == h->metadata);
  }

  fuzz::MemFile file(data, size);
  std::optional<SafetensorsFile> a, m;
  fuzz::accepts([&] { a = load_safetensors(file.path(), false); });
  fuzz::accepts([&] { m = load_safetensors(file.path(), true); });
  if (!h) {
    FUZZ_CHECK(!a && !m);
    return 0;
  }
  for (const auto* x : {&a, &m}) {
    if (!*x) continue;
    FUZZ_CHECK((*x)->tensors.size() == h->tensors.size() && (*x)->metadata == h->metadata);
    for (std::size_t i = 0; i < h->tensors.size(); ++i) {
      const Array& arr = (*x)->tensors[i].second;
      FUZZ_CHECK((*x)->tensors[i].first == h->tensors[i].name);
      FUZZ_CHECK(arr.shape() == h->tensors[i].shape && arr.dtype() == h->tensors[i].dtype);
      fuzz::check_inside_storage(arr);
      fuzz::touch(arr);
    }
  }
  if (a && m) {
    for (std::size_t i = 0; i < h->tensors.size(); ++i) {
      const Array &x = a->tensors[i].second, &y = m->tensors[i].second;
      if (x.size() == 0) continue;
      FUZZ_CHECK(std::memcmp(x.data(), y.data(), static_cast<std::size_t>(x.nbytes())) == 0);
      FUZZ_CHECK(!y.writable() && y.is_adopted());
    }
  }
  if (m) FUZZ_CHECK(a.has_value());
  return 0;
}
