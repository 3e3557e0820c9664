// fuzz_arrow — Arrow C Data Interface import from a random schema + array
// (interop::import_arrow, the path of uma.asarray on __arrow_c_array__ producers), or from a
// stream handing out that schema and 0-3 copies of that array (interop::import_arrow_stream,
// the path of __arrow_c_stream__ producers), optionally failing in get_next.
//
// Input: the schema (format string, n_children, dictionary flag, whether it is released),
// the array (length, null_count, offset, n_buffers, NULL buffers/values/validity flags,
// n_children, dictionary flag), the copy mode and dtype asked for, then the bytes split into
// a validity bitmap and a values buffer (heap copies of exactly their sizes; the buffers
// array itself has exactly n_buffers entries, so reading a buffer that is not there is an
// ASAN report too). An ArrowArray carries no buffer sizes, so data is imported only when the
// descriptor, were it well formed, would fit its buffers; a malformed descriptor (negative
// length, n_buffers != 2, ...) must be refused before anything is read. Checks: every release
// callback runs exactly once (schema and array) on every path, the result has the column's
// length, a shared result is a read-only view of values + offset, and adopted_bytes returns
// to its baseline.
#include <memory>
#include <optional>
#include <string>

#include "fuzz_common.h"
#include "uma/interop/arrow.h"

using namespace uma;
using namespace uma::interop;
using uma::arrow::ArrowArray;
using uma::arrow::ArrowArrayOwner;
using uma::arrow::ArrowArrayStream;
using uma::arrow::ArrowArrayStreamOwner;
using uma::arrow::ArrowSchema;
using uma::arrow::ArrowSchemaOwner;

namespace {

int g_schema_releases = 0, g_array_releases = 0;
void release_schema(ArrowSchema* s) {
  ++g_schema_releases;
  s->release = nullptr;
}
void release_array(ArrowArray* a) {
  ++g_array_releases;
  a->release = nullptr;
}

// A stream over copies of one schema and one array (each copy released on its own, counted
// by the callbacks above); get_next fails with EIO when `fail_at` arrays were handed out.
struct Stream {
  ArrowSchema schema;
  ArrowArray array;
  int copies = 1, fail_at = -1, handed = 0, schema_calls = 0, releases = 0;
};
int stream_get_schema(ArrowArrayStream* st, ArrowSchema* out) {
  auto* self = static_cast<Stream*>(st->private_data);
  ++self->schema_calls;
  *out = self->schema;
  return 0;
}
int stream_get_next(ArrowArrayStream* st, ArrowArray* out) {
  auto* self = static_cast<Stream*>(st->private_data);
  if (self->handed == self->fail_at) return 5;
  if (self->handed == self->copies) {
    out->release = nullptr;
    return 0;
  }
  ++self->handed;
  *out = self->array;
  return 0;
}
const char* stream_last_error(ArrowArrayStream*) { return "fuzz stream error"; }
void stream_release(ArrowArrayStream* st) {
  ++static_cast<Stream*>(st->private_data)->releases;
  st->release = nullptr;
}

int64_t field(fuzz::Reader& r) {  // small (often 0..15, sometimes -1..-8) or raw
  const uint8_t b = r.u8();
  if (b < 0xa0) return b & 15;
  if (b < 0xe0) return -static_cast<int64_t>((b & 7) + 1);
  return r.i64();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, std::size_t size) {
  fuzz::init_once();
  fuzz::Reader r{data, size};
  // Schema.
  std::string format(r.u8() % 5, '\0');
  for (auto& c : format) c = static_cast<char>(r.u8());
  const uint8_t sflags = r.u8();
  ArrowSchema dict_schema{};
  ArrowSchema s{};
  s.format = (sflags & 1) ? nullptr : format.c_str();
  s.name = nullptr;
  s.metadata = nullptr;
  s.flags = 0;
  s.n_children = (sflags & 2) ? 1 : 0;
  s.children = nullptr;
  s.dictionary = (sflags & 4) ? &dict_schema : nullptr;
  s.release = (sflags & 8) ? nullptr : &release_schema;
  // Array.
  ArrowArray a{};
  a.length = field(r);
  a.null_count = field(r);
  a.offset = field(r);
  const uint8_t nb = r.u8();
  a.n_buffers = nb < 0xf0 ? (nb % 8 == 0 ? 1 : nb % 8 == 1 ? 3 : 2) : static_cast<int64_t>(nb & 7) - 4;
  const uint8_t aflags = r.u8();
  a.n_children = (aflags & 1) ? 1 : 0;
  ArrowArray dict_array{};
  a.dictionary = (aflags & 2) ? &dict_array : nullptr;
  a.release = (aflags & 4) ? nullptr : &release_array;
  const bool null_buffers = aflags & 8, null_validity = aflags & 16, null_values = aflags & 32;
  const uint8_t cb = r.u8();
  const CopyMode copy = cb % 3 == 0 ? CopyMode::IfNeeded : cb % 3 == 1 ? CopyMode::Never : CopyMode::Always;
  const std::optional<DType> asked = (cb & 0x80) ? std::optional<DType>(fuzz::dtype_at(r.u8())) : std::nullopt;
  const std::size_t bitmap_len = r.u8() % 33;
  std::vector<uint8_t> rest = r.rest();
  const std::size_t vb = std::min(bitmap_len, rest.size());
  std::unique_ptr<uint8_t[]> bitmap(new uint8_t[vb]), values(new uint8_t[rest.size() - vb]);
  if (vb) std::memcpy(bitmap.get(), rest.data(), vb);
  if (rest.size() > vb) std::memcpy(values.get(), rest.data() + vb, rest.size() - vb);
  const std::size_t values_len = rest.size() - vb;

  const std::size_t nbuf = a.n_buffers > 0 ? static_cast<std::size_t>(a.n_buffers) : 0;
  std::unique_ptr<const void*[]> buffers(new const void*[nbuf ? nbuf : 1]());
  if (nbuf > 0) buffers[0] = null_validity ? nullptr : bitmap.get();
  if (nbuf > 1) buffers[1] = null_values ? nullptr : values.get();
  if (nbuf > 2) buffers[2] = values.get();
  a.buffers = null_buffers ? nullptr : buffers.get();

  // What a well-formed descriptor of this shape would read: skip descriptors that lie about
  // their buffers' sizes (the importer cannot know them).
  const std::optional<DType> t = s.format ? dtype_from_arrow_format(std::string_view(s.format, strnlen(s.format, 64)))
                                          : std::nullopt;
  if (t && a.length >= 0 && a.offset >= 0 && a.offset <= INT64_MAX - a.length && a.length > 0) {
    const __int128 end = static_cast<__int128>(a.offset) + a.length;  // elements [0, end)
    const __int128 need_values = *t == DType::Bool ? (end + 7) / 8 : end * static_cast<__int128>(itemsize(*t));
    const __int128 need_bitmap = (end + 7) / 8;
    if (!null_values && need_values > static_cast<__int128>(values_len)) return 0;
    if (!null_validity && a.null_count == -1 && need_bitmap > static_cast<__int128>(vb)) return 0;
  }

  const bool schema_live = s.release != nullptr, array_live = a.release != nullptr;
  g_schema_releases = g_array_releases = 0;
  const int64_t adopted0 = memory_stats(Device::cpu()).adopted_bytes;
  if (sflags & 0x10) {  // the same schema and array through a stream
    Stream fs;
    fs.schema = s;
    fs.array = a;
    fs.copies = (sflags >> 5) & 3;
    fs.fail_at = (aflags & 0x40) ? fs.copies / 2 : -1;
    ArrowArrayStream st{&stream_get_schema, &stream_get_next, &stream_last_error, &stream_release, &fs};
    {
      std::optional<Array> out;
      fuzz::accepts([&] {
        out = import_arrow_stream(ArrowArrayStreamOwner::take(&st), asked, std::nullopt, copy, "fuzz");
      });
      FUZZ_CHECK(st.release == nullptr && fs.releases == 1);  // moved in, released once
      FUZZ_CHECK(g_schema_releases == (schema_live ? fs.schema_calls : 0));
      // A released array from get_next ends the stream (the spec's end marker).
      const int arrays = array_live ? fs.copies : 0;
      const bool fails = fs.fail_at >= 0 && (array_live || fs.fail_at == 0);
      if (out) {
        FUZZ_CHECK(!fails && schema_live && t.has_value());
        FUZZ_CHECK(out->shape() == Shape{arrays * a.length});
        if (out->is_adopted()) FUZZ_CHECK(arrays == 1 && !out->writable() && t == out->dtype());
        fuzz::check_inside_storage(*out);
        fuzz::touch(*out);
      }
    }
    FUZZ_CHECK(g_array_releases == (array_live ? fs.handed : 0));  // each array handed out, once
    FUZZ_CHECK(memory_stats(Device::cpu()).adopted_bytes == adopted0);
    return 0;
  }
  {
    std::optional<Array> out;
    fuzz::accepts([&] {
      out = import_arrow(ArrowSchemaOwner::take(&s), ArrowArrayOwner::take(&a), asked, std::nullopt, copy, "fuzz");
    });
    FUZZ_CHECK(s.release == nullptr && a.release == nullptr);  // both moved in
    FUZZ_CHECK(g_schema_releases == (schema_live ? 1 : 0));     // the schema is done with
    if (out) {
      FUZZ_CHECK(schema_live && array_live && t.has_value());
      FUZZ_CHECK(out->shape() == Shape{a.length});
      if (out->is_adopted()) {
        FUZZ_CHECK(!out->writable() && t == out->dtype());
        if (a.length > 0)
          FUZZ_CHECK(out->data() == static_cast<const char*>(static_cast<const void*>(values.get())) +
                                        a.offset * static_cast<int64_t>(itemsize(*t)));
      } else {
        FUZZ_CHECK(g_array_releases == 1);
      }
      fuzz::check_inside_storage(*out);
      fuzz::touch(*out);
    }
  }
  FUZZ_CHECK(g_array_releases == (array_live ? 1 : 0));  // exactly once, also after the last view died
  FUZZ_CHECK(memory_stats(Device::cpu()).adopted_bytes == adopted0);
  return 0;
}
