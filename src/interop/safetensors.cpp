// .safetensors files: a strict, bounded parser of the JSON header, the writer, and the loader
// (Note [Mapped files] in include/uma/interop/files.h). Format: REFERENCE.md "File formats" and
// the reference implementation (huggingface/safetensors, safetensors/src/tensor.rs): an 8-byte
// little-endian header length N, N bytes of JSON starting with '{' (a map from tensor name to
// {"dtype", "shape", "data_offsets": [begin, end)} plus an optional "__metadata__" map of
// strings), padded with spaces; then the data, which the tensors tile without gaps or overlaps.
//
// The JSON grammar accepted is the schema's, nothing more (so the parser needs no recursion):
// RFC 8259 strings (escapes decoded, UTF-8 validated, lone surrogates rejected), non-negative
// integers up to 2^64-1 (no sign, fraction, exponent or leading zero), `null` only as the value
// of "__metadata__"; duplicate keys, unknown tensor fields and trailing commas are errors.
#include <algorithm>
#include <cstdio>
#include <cstring>
#include <numeric>
#include <unordered_map>
#include <unordered_set>

#include "file_io.h"
#include "uma/error.h"
#include "uma/interop/files.h"
#include "uma/ops.h"

namespace uma::files {

namespace {

// The reference implementation's Dtype enum, in its declaration order (`rank`): its writer
// sorts tensors by rank descending, which keeps every tensor aligned to its itemsize.
struct StDtype {
  const char* name;
  int rank;
  int bits;
  bool supported;
  DType dtype;
};
constexpr StDtype kStDtypes[] = {
    {"BOOL", 0, 8, true, DType::Bool},         {"F4", 1, 4, false, DType::UInt8},
    {"F6_E2M3", 2, 6, false, DType::UInt8},    {"F6_E3M2", 3, 6, false, DType::UInt8},
    {"U8", 4, 8, true, DType::UInt8},          {"I8", 5, 8, true, DType::Int8},
    {"F8_E5M2", 6, 8, false, DType::UInt8},    {"F8_E4M3", 7, 8, false, DType::UInt8},
    {"F8_E8M0", 8, 8, false, DType::UInt8},    {"I16", 9, 16, true, DType::Int16},
    {"U16", 10, 16, true, DType::UInt16},      {"F16", 11, 16, true, DType::Float16},
    {"BF16", 12, 16, true, DType::BFloat16},   {"I32", 13, 32, true, DType::Int32},
    {"U32", 14, 32, true, DType::UInt32},      {"F32", 15, 32, true, DType::Float32},
    {"C64", 16, 64, true, DType::Complex64},   {"F64", 17, 64, true, DType::Float64},
    {"I64", 18, 64, true, DType::Int64},       {"U64", 19, 64, true, DType::UInt64},
};

const StDtype* find_dtype(const std::string& name) {
  for (const StDtype& d : kStDtypes)
    if (name == d.name) return &d;
  return nullptr;
}

const StDtype& entry_of(DType t) {
  for (const StDtype& d : kStDtypes)
    if (d.supported && d.dtype == t) return d;
  UMA_FAIL(Type, "uma.save: safetensors has no ", dtype_name(t),
           " type (it has bool, 8-64-bit integers, float16, bfloat16, float32, float64 and complex64)");
}

std::string describe_byte(const unsigned char* p, const unsigned char* end) {
  if (p >= end) return "the end of the header";
  if (*p >= 0x20 && *p < 0x7f) return std::string("'") + static_cast<char>(*p) + "'";
  char buf[16];
  std::snprintf(buf, sizeof buf, "byte 0x%02x", *p);
  return buf;
}

// A cursor over the JSON header; `base` is the file offset of `begin` (8).
struct Json {
  const unsigned char* begin;
  const unsigned char* p;
  const unsigned char* end;
  uint64_t base;

  uint64_t offset() const { return base + static_cast<uint64_t>(p - begin); }
  int peek() const { return p < end ? *p : -1; }
  [[noreturn]] void fail(const std::string& msg) const {
    UMA_FAIL(Value, "invalid safetensors header: ", msg, " at byte ", offset());
  }
  void ws() {
    while (p < end && (*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r')) ++p;
  }
  void expect(char c, const char* context) {
    if (peek() != static_cast<unsigned char>(c))
      fail(std::string("expected '") + c + "' " + context + ", found " + describe_byte(p, end));
    ++p;
  }
  bool eat(char c) {
    if (peek() != static_cast<unsigned char>(c)) return false;
    ++p;
    return true;
  }
  bool literal(const char* w) {
    const std::size_t n = std::strlen(w);
    if (static_cast<std::size_t>(end - p) < n || std::memcmp(p, w, n) != 0) return false;
    p += n;
    return true;
  }
  static void put_utf8(std::string& s, uint32_t cp) {
    if (cp < 0x80) {
      s.push_back(static_cast<char>(cp));
    } else if (cp < 0x800) {
      s.push_back(static_cast<char>(0xc0 | (cp >> 6)));
      s.push_back(static_cast<char>(0x80 | (cp & 0x3f)));
    } else if (cp < 0x10000) {
      s.push_back(static_cast<char>(0xe0 | (cp >> 12)));
      s.push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3f)));
      s.push_back(static_cast<char>(0x80 | (cp & 0x3f)));
    } else {
      s.push_back(static_cast<char>(0xf0 | (cp >> 18)));
      s.push_back(static_cast<char>(0x80 | ((cp >> 12) & 0x3f)));
      s.push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3f)));
      s.push_back(static_cast<char>(0x80 | (cp & 0x3f)));
    }
  }
  uint32_t hex4() {
    if (end - p < 4) fail("truncated \\u escape");
    uint32_t v = 0;
    for (int i = 0; i < 4; ++i, ++p) {
      const unsigned char c = *p;
      const int d = c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : c >= 'A' && c <= 'F' ? c - 'A' + 10 : -1;
      if (d < 0) fail("bad hex digit " + describe_byte(p, end) + " in a \\u escape");
      v = v * 16 + static_cast<uint32_t>(d);
    }
    return v;
  }
  // One well-formed UTF-8 sequence (RFC 3629: no overlongs, no surrogates, <= U+10FFFF).
  void utf8(std::string& s) {
    const unsigned char c = *p;
    int n;
    unsigned char lo = 0x80, hi = 0xbf;
    if (c >= 0xc2 && c <= 0xdf) n = 1;
    else if (c >= 0xe0 && c <= 0xef) { n = 2; if (c == 0xe0) lo = 0xa0; if (c == 0xed) hi = 0x9f; }
    else if (c >= 0xf0 && c <= 0xf4) { n = 3; if (c == 0xf0) lo = 0x90; if (c == 0xf4) hi = 0x8f; }
    else fail("invalid UTF-8 " + describe_byte(p, end));
    if (end - p <= n) fail("truncated UTF-8 sequence");
    for (int i = 1; i <= n; ++i) {
      const unsigned char b = p[i];
      const unsigned char l = i == 1 ? lo : 0x80, h = i == 1 ? hi : 0xbf;
      if (b < l || b > h) {
        p += i;
        fail("invalid UTF-8 continuation " + describe_byte(p, end));
      }
    }
    s.append(reinterpret_cast<const char*>(p), static_cast<std::size_t>(n + 1));
    p += n + 1;
  }
  std::string string(const char* what) {
    if (peek() != '"') fail(std::string("expected a string for ") + what + ", found " + describe_byte(p, end));
    ++p;
    std::string s;
    for (;;) {
      if (p >= end) fail(std::string("unterminated string in ") + what);
      const unsigned char c = *p;
      if (c == '"') {
        ++p;
        return s;
      }
      if (c < 0x20) fail("unescaped control character " + describe_byte(p, end) + " in a string");
      if (c >= 0x80) {
        utf8(s);
        continue;
      }
      if (c != '\\') {
        s.push_back(static_cast<char>(c));
        ++p;
        continue;
      }
      ++p;
      if (p >= end) fail("truncated escape");
      const unsigned char e = *p++;
      switch (e) {
        case '"': s.push_back('"'); break;
        case '\\': s.push_back('\\'); break;
        case '/': s.push_back('/'); break;
        case 'b': s.push_back('\b'); break;
        case 'f': s.push_back('\f'); break;
        case 'n': s.push_back('\n'); break;
        case 'r': s.push_back('\r'); break;
        case 't': s.push_back('\t'); break;
        case 'u': {
          uint32_t cp = hex4();
          if (cp >= 0xdc00 && cp <= 0xdfff) fail("lone low surrogate in a \\u escape");
          if (cp >= 0xd800 && cp <= 0xdbff) {
            if (!(end - p >= 2 && p[0] == '\\' && p[1] == 'u')) fail("lone high surrogate in a \\u escape");
            p += 2;
            uint32_t lo = hex4();
            if (lo < 0xdc00 || lo > 0xdfff) fail("high surrogate not followed by a low surrogate");
            cp = 0x10000 + ((cp - 0xd800) << 10) + (lo - 0xdc00);
          }
          put_utf8(s, cp);
          break;
        }
        default: --p; fail("unknown escape \\" + describe_byte(p, end));
      }
    }
  }
  uint64_t uint(const std::string& what) {
    if (peek() == '-') fail("negative number for " + what);
    if (peek() < '0' || peek() > '9') fail("expected a non-negative integer for " + what + ", found " + describe_byte(p, end));
    const unsigned char* s = p;
    uint64_t v = 0;
    while (p < end && *p >= '0' && *p <= '9') {
      if (__builtin_mul_overflow(v, uint64_t(10), &v) || __builtin_add_overflow(v, uint64_t(*p - '0'), &v))
        fail(what + " does not fit in 64 bits");
      ++p;
    }
    if (p - s > 1 && *s == '0') fail("leading zero in " + what);
    if (p < end && (*p == '.' || *p == 'e' || *p == 'E')) fail(what + " must be an integer");
    return v;
  }
  // '[' uint (',' uint)* ']' with at most `max` entries.
  std::vector<uint64_t> uints(const std::string& what, std::size_t max) {
    expect('[', ("to start " + what).c_str());
    std::vector<uint64_t> v;
    ws();
    if (eat(']')) return v;
    for (;;) {
      ws();
      if (v.size() == max) fail(what + " has more than " + std::to_string(max) + " entries");
      v.push_back(uint(what));
      ws();
      if (eat(']')) return v;
      expect(',', ("or ']' in " + what).c_str());
    }
  }
};

// One member of the top-level object: a tensor's info.
SafetensorsTensor parse_tensor(Json& j, std::string name, const StDtype*& dt) {
  SafetensorsTensor t;
  t.name = std::move(name);
  const std::string who = "tensor '" + t.name + "'";
  j.expect('{', ("to start " + who).c_str());
  bool have_dtype = false, have_shape = false, have_offsets = false;
  j.ws();
  if (!j.eat('}')) {
    for (;;) {
      j.ws();
      const uint64_t key_at = j.offset();
      std::string key = j.string("a field name");
      j.ws();
      j.expect(':', "after a field name");
      j.ws();
      if (key == "dtype") {
        if (have_dtype) j.fail("duplicate field 'dtype' in " + who);
        have_dtype = true;
        const uint64_t at = j.offset();
        std::string name_ = j.string("'dtype'");
        dt = find_dtype(name_);
        if (!dt) UMA_FAIL(Value, "invalid safetensors header: unknown dtype '", name_, "' of ", who, " at byte ", at);
      } else if (key == "shape") {
        if (have_shape) j.fail("duplicate field 'shape' in " + who);
        have_shape = true;
        const uint64_t at = j.offset();
        for (uint64_t d : j.uints("the shape of " + who, kMaxFileNdim)) {
          if (d > uint64_t(INT64_MAX))
            UMA_FAIL(Value, "invalid safetensors header: dimension ", d, " of ", who, " at byte ", at, " exceeds 2^63-1");
          t.shape.push_back(static_cast<int64_t>(d));
        }
      } else if (key == "data_offsets") {
        if (have_offsets) j.fail("duplicate field 'data_offsets' in " + who);
        have_offsets = true;
        const uint64_t at = j.offset();
        std::vector<uint64_t> o = j.uints("the data_offsets of " + who, 2);
        if (o.size() != 2)
          UMA_FAIL(Value, "invalid safetensors header: data_offsets of ", who, " at byte ", at, " must be [begin, end]");
        t.begin = o[0];
        t.end = o[1];
      } else {
        UMA_FAIL(Value, "invalid safetensors header: unknown field '", key, "' in ", who, " at byte ", key_at,
                 " (the fields are dtype, shape, data_offsets)");
      }
      j.ws();
      if (j.eat('}')) break;
      j.expect(',', ("or '}' in " + who).c_str());
    }
  }
  if (!have_dtype || !have_shape || !have_offsets)
    j.fail(who + " lacks the field '" + (!have_dtype ? "dtype" : !have_shape ? "shape" : "data_offsets") + "'");
  return t;
}

std::string context(const std::string& path) { return "uma.load('" + path + "'): "; }

void json_string(std::string& out, const std::string& s) {
  // As serde_json writes it: '"' and '\\' escaped, \b \f \n \r \t, other controls \u00xx.
  static const char* hex = "0123456789abcdef";
  out.push_back('"');
  for (unsigned char c : s) {
    switch (c) {
      case '"': out += "\\\""; break;
      case '\\': out += "\\\\"; break;
      case '\b': out += "\\b"; break;
      case '\f': out += "\\f"; break;
      case '\n': out += "\\n"; break;
      case '\r': out += "\\r"; break;
      case '\t': out += "\\t"; break;
      default:
        if (c < 0x20) {
          out += "\\u00";
          out.push_back(hex[c >> 4]);
          out.push_back(hex[c & 15]);
        } else {
          out.push_back(static_cast<char>(c));
        }
    }
  }
  out.push_back('"');
}

}  // namespace

const char* safetensors_dtype_name(DType t) { return entry_of(t).name; }

uint64_t safetensors_header_end(const unsigned char* p, std::size_t avail, uint64_t file_size) {
  const uint64_t have = std::min<uint64_t>(avail, file_size);
  UMA_CHECK(have >= 8, Value, "invalid safetensors file: ", file_size, " bytes is too short for the 8-byte header length");
  uint64_t n = 0;
  for (int b = 7; b >= 0; --b) n = n << 8 | p[b];
  UMA_CHECK(n <= kMaxSafetensorsHeaderBytes, Value, "invalid safetensors header length ", n, " at byte 0 (limit ",
            kMaxSafetensorsHeaderBytes, ")");
  UMA_CHECK(n <= file_size - 8, Value, "invalid safetensors header length ", n,
            " at byte 0: the header would end at byte ", 8 + n, " but the file has ", file_size,
            " bytes (truncated header or lying length)");
  return 8 + n;
}

SafetensorsHeader parse_safetensors_header(const unsigned char* p, std::size_t avail, uint64_t file_size) {
  const uint64_t hend = safetensors_header_end(p, avail, file_size);
  UMA_CHECK(avail >= hend, Value, "invalid safetensors file: truncated header (", avail, " of ", hend, " bytes)");
  SafetensorsHeader h;
  h.data_offset = hend;
  Json j{p + 8, p + 8, p + hend, 8};
  if (j.peek() != '{') j.fail("the header must start with '{', found " + describe_byte(j.p, j.end));
  ++j.p;
  std::vector<const StDtype*> dts;
  std::unordered_set<std::string> names;
  bool have_metadata = false;
  j.ws();
  if (!j.eat('}')) {
    for (;;) {
      j.ws();
      const uint64_t key_at = j.offset();
      std::string key = j.string("a tensor name");
      j.ws();
      j.expect(':', "after a tensor name");
      j.ws();
      if (key == "__metadata__") {
        if (have_metadata) UMA_FAIL(Value, "invalid safetensors header: duplicate key '__metadata__' at byte ", key_at);
        have_metadata = true;
        if (!j.literal("null")) {
          j.expect('{', "to start __metadata__ (a map of strings)");
          h.metadata.emplace();
          std::unordered_set<std::string> mkeys;
          j.ws();
          if (!j.eat('}')) {
            for (;;) {
              j.ws();
              const uint64_t mat = j.offset();
              std::string k = j.string("a __metadata__ key");
              if (!mkeys.insert(k).second)
                UMA_FAIL(Value, "invalid safetensors header: duplicate __metadata__ key '", k, "' at byte ", mat);
              j.ws();
              j.expect(':', "after a __metadata__ key");
              j.ws();
              std::string v = j.string("a __metadata__ value (values must be strings)");
              h.metadata->emplace_back(std::move(k), std::move(v));
              j.ws();
              if (j.eat('}')) break;
              j.expect(',', "or '}' in __metadata__");
            }
          }
        }
      } else {
        if (!names.insert(key).second) UMA_FAIL(Value, "invalid safetensors header: duplicate tensor name '", key, "' at byte ", key_at);
        const StDtype* dt = nullptr;
        h.tensors.push_back(parse_tensor(j, std::move(key), dt));
        dts.push_back(dt);
      }
      j.ws();
      if (j.eat('}')) break;
      j.expect(',', "or '}' after a tensor");
    }
  }
  j.ws();
  if (j.p != j.end) j.fail("unexpected " + describe_byte(j.p, j.end) + " after the header object");

  // The tensors must tile the data section [0, file_size - hend) in offset order.
  std::vector<std::size_t> order(h.tensors.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
    const auto& x = h.tensors[a];
    const auto& y = h.tensors[b];
    return x.begin != y.begin ? x.begin < y.begin : x.end < y.end;
  });
  const uint64_t data_size = file_size - hend;
  uint64_t pos = 0;
  for (std::size_t i : order) {
    const SafetensorsTensor& t = h.tensors[i];
    const StDtype& d = *dts[i];
    const std::string who = "tensor '" + t.name + "'";
    UMA_CHECK(t.end >= t.begin, Value, "invalid safetensors header: ", who, " has data_offsets [", t.begin, ", ", t.end,
              "] that end before they begin");
    UMA_CHECK(t.begin <= pos, Value, "invalid safetensors header: gap in the data: ", who, " begins at ", t.begin,
              " but the data before it ends at ", pos);
    UMA_CHECK(t.begin >= pos, Value, "invalid safetensors header: ", who, " (data_offsets [", t.begin, ", ", t.end,
              "]) overlaps the data before it, which ends at ", pos);
    uint64_t nbits = static_cast<uint64_t>(d.bits);
    for (int64_t dim : t.shape)
      UMA_CHECK(!__builtin_mul_overflow(nbits, static_cast<uint64_t>(dim), &nbits), Value, "invalid safetensors header: ",
                who, " has shape ", shape_str(t.shape), " whose size overflows 64 bits");
    UMA_CHECK(nbits % 8 == 0, Value, "invalid safetensors header: ", who, " of ", d.name, " has shape ", shape_str(t.shape),
              " which is not a whole number of bytes");
    UMA_CHECK(t.end - t.begin == nbits / 8, Value, "invalid safetensors header: ", who, " of ", d.name, " with shape ",
              shape_str(t.shape), " needs ", nbits / 8, " bytes but its data_offsets [", t.begin, ", ", t.end, "] hold ",
              t.end - t.begin);
    UMA_CHECK(t.end <= data_size, Value, "invalid safetensors file: ", who, " ends at data offset ", t.end,
              " (file byte ", hend, " + ", t.end, ") past the end of the data section of ", data_size,
              " bytes (truncated data or lying offsets)");
    pos = t.end;
  }
  UMA_CHECK(pos == data_size, Value, "invalid safetensors file: the data section has ", data_size,
            " bytes but the tensors cover only ", pos, " (trailing bytes or lying offsets)");
  for (std::size_t i : order) {
    const StDtype& d = *dts[i];
    UMA_CHECK(d.supported, Type, "unsupported safetensors dtype ", d.name, " of tensor '", h.tensors[i].name,
              "' (uma has BOOL, U8-U64, I8-I64, F16, BF16, F32, F64, C64)");
    h.tensors[i].dtype = d.dtype;
    detail::check_shape_fits(h.tensors[i].shape, d.dtype, ("invalid safetensors header: tensor '" + h.tensors[i].name + "'").c_str());
  }
  std::vector<SafetensorsTensor> sorted;
  sorted.reserve(order.size());
  for (std::size_t i : order) sorted.push_back(std::move(h.tensors[i]));
  h.tensors = std::move(sorted);
  return h;
}

SafetensorsHeader plan_safetensors(std::vector<SafetensorsTensor> tensors,
                                   std::optional<std::vector<std::pair<std::string, std::string>>> metadata) {
  std::unordered_set<std::string> names;
  for (const SafetensorsTensor& t : tensors) {
    UMA_CHECK(t.name != "__metadata__", Value, "uma.save: '__metadata__' is reserved in safetensors and cannot name a tensor");
    UMA_CHECK(names.insert(t.name).second, Value, "uma.save: duplicate tensor name '", t.name, "'");
    entry_of(t.dtype);  // TypeError for complex128
  }
  if (metadata) {
    std::unordered_set<std::string> keys;
    for (const auto& kv : *metadata) UMA_CHECK(keys.insert(kv.first).second, Value, "uma.save: duplicate metadata key '", kv.first, "'");
  }
  std::stable_sort(tensors.begin(), tensors.end(), [](const SafetensorsTensor& a, const SafetensorsTensor& b) {
    const int ra = entry_of(a.dtype).rank, rb = entry_of(b.dtype).rank;
    return ra != rb ? ra > rb : a.name < b.name;
  });
  uint64_t pos = 0;
  for (SafetensorsTensor& t : tensors) {
    detail::check_shape_fits(t.shape, t.dtype, "uma.save:");
    t.begin = pos;
    pos = detail::checked_add(pos, static_cast<uint64_t>(checked_size(t.shape)) * itemsize(t.dtype), "uma.save: data size");
    t.end = pos;
  }
  SafetensorsHeader h;
  h.tensors = std::move(tensors);
  h.metadata = std::move(metadata);
  return h;
}

std::string safetensors_header_bytes(const SafetensorsHeader& h) {
  std::string j = "{";
  bool first = true;
  if (h.metadata) {
    j += "\"__metadata__\":{";
    bool f2 = true;
    for (const auto& [k, v] : *h.metadata) {
      if (!f2) j.push_back(',');
      f2 = false;
      json_string(j, k);
      j.push_back(':');
      json_string(j, v);
    }
    j.push_back('}');
    first = false;
  }
  for (const SafetensorsTensor& t : h.tensors) {
    if (!first) j.push_back(',');
    first = false;
    json_string(j, t.name);
    j += ":{\"dtype\":\"";
    j += safetensors_dtype_name(t.dtype);
    j += "\",\"shape\":[";
    for (std::size_t k = 0; k < t.shape.size(); ++k) {
      if (k) j.push_back(',');
      j += std::to_string(t.shape[k]);
    }
    j += "],\"data_offsets\":[" + std::to_string(t.begin) + "," + std::to_string(t.end) + "]}";
  }
  j.push_back('}');
  j.append((8 - j.size() % 8) % 8, ' ');
  std::string out(8, '\0');
  for (int b = 0; b < 8; ++b) out[b] = static_cast<char>((uint64_t(j.size()) >> (8 * b)) & 0xff);
  return out + j;
}

SafetensorsFile load_safetensors(const std::string& path, std::optional<bool> mmap) {
  return detail::with_context(context(path), [&] {
    detail::InputFile f(path);
    std::string pre = f.read_prefix(8);
    const uint64_t end = safetensors_header_end(reinterpret_cast<const unsigned char*>(pre.data()), pre.size(), f.size());
    std::string hdr = f.read_prefix(end);
    SafetensorsHeader h = parse_safetensors_header(reinterpret_cast<const unsigned char*>(hdr.data()), hdr.size(), f.size());
    SafetensorsFile out;
    out.metadata = std::move(h.metadata);
    out.tensors.reserve(h.tensors.size());
    bool shareable = true;
    for (const SafetensorsTensor& t : h.tensors)
      shareable = shareable && (t.end == t.begin || (h.data_offset + t.begin) % itemsize(t.dtype) == 0);
    if (mmap.value_or(shareable)) {
      for (const SafetensorsTensor& t : h.tensors) {
        const uint64_t at = h.data_offset + t.begin;
        UMA_CHECK(t.end == t.begin || at % itemsize(t.dtype) == 0, Copy, "mmap=True cannot share tensor '", t.name,
                  "': its data starts at byte ", at, ", not a multiple of its itemsize ", itemsize(t.dtype),
                  "; load with mmap=False");
      }
      if (h.tensors.empty()) return out;
      std::shared_ptr<Storage> st = f.map();  // one mapping, shared by every tensor
      char* base = static_cast<char*>(st->data.get()) + h.data_offset;
      for (SafetensorsTensor& t : h.tensors) {
        char* data = base + t.begin;
        Strides s = contiguous_strides(t.shape);
        out.tensors.emplace_back(std::move(t.name), Array(st, data, std::move(t.shape), std::move(s), t.dtype, false));
      }
      return out;
    }
    for (SafetensorsTensor& t : h.tensors) {
      Array a = Array::empty(t.shape, t.dtype);
      if (t.end > t.begin) f.read_at(a.data(), t.end - t.begin, h.data_offset + t.begin);
      out.tensors.emplace_back(std::move(t.name), std::move(a));
    }
    return out;
  });
}

void save_safetensors(const std::string& path, const std::vector<std::pair<std::string, Array>>& tensors,
                      const std::optional<std::vector<std::pair<std::string, std::string>>>& metadata) {
  std::vector<SafetensorsTensor> infos;
  std::unordered_map<std::string, const Array*> by_name;
  for (const auto& [name, a] : tensors) {
    UMA_CHECK(a.device().is_cpu(), Value, "uma.save: tensor '", name, "' is on ", a.device().str(),
              "; only host arrays can be saved");
    SafetensorsTensor t;
    t.name = name;
    t.dtype = a.dtype();
    t.shape = a.shape();
    infos.push_back(std::move(t));
    by_name[name] = &a;
  }
  const SafetensorsHeader h = plan_safetensors(std::move(infos), metadata);
  const std::string hdr = safetensors_header_bytes(h);
  detail::OutputFile out(path);
  out.write(hdr.data(), hdr.size());
  for (const SafetensorsTensor& t : h.tensors) {
    if (t.end == t.begin) continue;
    const Array src = ops::contiguous(*by_name.at(t.name));
    out.write(src.data(), t.end - t.begin);
  }
  out.commit();
}

}  // namespace uma::files
