// .npy files: a strict parser of the header np.save writes, the writer, and the loader
// (Note [Mapped files] in include/uma/interop/files.h). Format: REFERENCE.md "File formats"
// and numpy.lib.format (NEP 1): magic "\x93NUMPY", version (1.0: 2-byte little-endian header
// length; 2.0/3.0: 4-byte), then a Python-literal dict {'descr', 'fortran_order', 'shape'}
// padded with spaces and '\n' so that the data starts at a multiple of 64 bytes.
#include <algorithm>
#include <cctype>
#include <cstdio>
#include <cstring>

#include "file_io.h"
#include "uma/error.h"
#include "uma/interop/files.h"
#include "uma/ops.h"

namespace uma::files {

namespace {

constexpr unsigned char kMagic[6] = {0x93, 'N', 'U', 'M', 'P', 'Y'};
constexpr uint64_t kNpyAlign = 64;             // numpy.lib.format.ARRAY_ALIGN
constexpr std::size_t kGrowthAxisDigits = 21;  // numpy.lib.format.GROWTH_AXIS_MAX_DIGITS

std::string describe_byte(const unsigned char* p, const unsigned char* end) {
  if (p >= end) return "the end of the header";
  if (*p >= 0x20 && *p < 0x7f) return std::string("'") + static_cast<char>(*p) + "'";
  char buf[16];
  std::snprintf(buf, sizeof buf, "byte 0x%02x", *p);
  return buf;
}

// A cursor over the header dict; `base` is the file offset of `begin` (for messages).
struct Cursor {
  const unsigned char* begin;
  const unsigned char* p;
  const unsigned char* end;
  uint64_t base;

  uint64_t offset() const { return base + static_cast<uint64_t>(p - begin); }
  int peek() const { return p < end ? *p : -1; }
  [[noreturn]] void fail(const std::string& msg) const {
    UMA_FAIL(Value, "invalid .npy header: ", msg, " at byte ", offset());
  }
  void ws() {
    while (p < end && (*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r' || *p == '\f' || *p == '\v')) ++p;
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
  // A quoted Python string of printable ASCII without escapes (all np.save writes).
  std::string str(const char* what) {
    int q = peek();
    if (q != '\'' && q != '"') fail(std::string("expected a quoted string for ") + what + ", found " + describe_byte(p, end));
    ++p;
    const unsigned char* s = p;
    while (p < end && *p != q) {
      if (*p < 0x20 || *p >= 0x7f || *p == '\\') fail(std::string("unsupported character ") + describe_byte(p, end) + " in " + what);
      ++p;
    }
    if (p >= end) fail(std::string("unterminated string in ") + what);
    std::string r(reinterpret_cast<const char*>(s), static_cast<std::size_t>(p - s));
    ++p;
    return r;
  }
  // A non-negative decimal int (Python 3 syntax without '_'; a Python 2 'L' suffix is allowed).
  int64_t integer(const char* what) {
    if (peek() == '-') fail(std::string("expected a non-negative integer for ") + what + ", found '-'");
    if (peek() < '0' || peek() > '9') fail(std::string("expected an integer for ") + what + ", found " + describe_byte(p, end));
    const unsigned char* s = p;
    uint64_t v = 0;
    while (p < end && *p >= '0' && *p <= '9') {
      if (v > (uint64_t(INT64_MAX) - (*p - '0')) / 10) fail(std::string(what) + " does not fit in 64 bits");
      v = v * 10 + (*p - '0');
      ++p;
    }
    if (p - s > 1 && *s == '0') fail(std::string("leading zero in ") + what);
    if (p < end && (*p == 'L' || *p == 'l')) ++p;
    if (p < end && (std::isalnum(*p) || *p == '_' || *p == '.'))
      fail(std::string("expected an integer for ") + what + ", found " + describe_byte(p, end));
    return static_cast<int64_t>(v);
  }
  std::string word() {
    const unsigned char* s = p;
    while (p < end && (std::isalnum(*p) || *p == '_')) ++p;
    return std::string(reinterpret_cast<const char*>(s), static_cast<std::size_t>(p - s));
  }
};

// A NumPy type string as numpy.dtype reads it: an optional byte order ('<' '>' '|' '=', none
// meaning native, which is little-endian on every host uma builds for) and either kind + size
// ('<f8', 'i4') or a one-character type code ('<d', '?', 'l', 'p': LP64 sizes). The dtype and
// whether its bytes are swapped; ValueError for malformed strings, TypeError for NumPy types
// uma lacks.
std::pair<DType, bool> parse_descr(const std::string& s, const Cursor& c) {
  const bool has_order = !s.empty() && std::strchr("<>|=", s[0]) && s[0] != '\0';
  const std::string body = has_order ? s.substr(1) : s;
  if (body.empty()) c.fail("descr '" + s + "' is not a NumPy type string like '<f8'");
  const char kind = body[0];
  if (kind != '\0' && std::strchr("USaVOMm", kind))
    UMA_FAIL(Type, "unsupported .npy dtype: descr '", s, "' (uma has bool, integers, floats and complex)");
  std::optional<DType> t;
  if (body.size() == 1) {  // a type code
    if (kind == 'g' || kind == 'G')
      UMA_FAIL(Type, "unsupported .npy dtype: descr '", s, "' (", kind == 'g' ? "long double" : "complex long double", ")");
    if (kind == 'c') UMA_FAIL(Type, "unsupported .npy dtype: descr '", s, "' (a one-byte string, 'S1')");
    switch (kind) {
      case '?': t = DType::Bool; break;
      case 'b': t = DType::Int8; break;
      case 'B': t = DType::UInt8; break;
      case 'h': t = DType::Int16; break;
      case 'H': t = DType::UInt16; break;
      case 'i': t = DType::Int32; break;
      case 'I': t = DType::UInt32; break;
      case 'l': case 'q': case 'p': case 'n': t = DType::Int64; break;
      case 'L': case 'Q': case 'P': case 'N': t = DType::UInt64; break;
      case 'e': t = DType::Float16; break;
      case 'f': t = DType::Float32; break;
      case 'd': t = DType::Float64; break;
      case 'F': t = DType::Complex64; break;
      case 'D': t = DType::Complex128; break;
      default: break;
    }
    if (!t) c.fail("unknown descr '" + s + "'");
    return {*t, s[0] == '>' && itemsize(*t) > 1};
  }
  const std::string digits = body.substr(1);
  bool ok = digits.size() <= 3;
  for (char d : digits) ok = ok && d >= '0' && d <= '9';
  if (!ok) c.fail("descr '" + s + "' is not a NumPy type string like '<f8'");
  const int n = std::stoi(digits);
  switch (kind) {
    case 'b': if (n == 1) t = DType::Bool; break;
    case 'i': t = n == 1 ? DType::Int8 : n == 2 ? DType::Int16 : n == 4 ? DType::Int32 : n == 8 ? DType::Int64 : t; break;
    case 'u': t = n == 1 ? DType::UInt8 : n == 2 ? DType::UInt16 : n == 4 ? DType::UInt32 : n == 8 ? DType::UInt64 : t; break;
    case 'f':
      if (n == 12 || n == 16) UMA_FAIL(Type, "unsupported .npy dtype: descr '", s, "' (long double)");
      t = n == 2 ? DType::Float16 : n == 4 ? DType::Float32 : n == 8 ? DType::Float64 : t;
      break;
    case 'c':
      if (n == 24 || n == 32) UMA_FAIL(Type, "unsupported .npy dtype: descr '", s, "' (complex long double)");
      t = n == 8 ? DType::Complex64 : n == 16 ? DType::Complex128 : t;
      break;
    default: break;
  }
  if (!t) c.fail("unknown descr '" + s + "'");
  return {*t, s[0] == '>' && n > 1};
}

Strides fortran_strides(const Shape& shape) {
  Strides s(shape.size());
  int64_t acc = 1;
  for (std::size_t i = 0; i < shape.size(); ++i) {
    s[i] = acc;
    acc *= shape[i] > 0 ? shape[i] : 1;
  }
  return s;
}

std::string context(const std::string& path) { return "uma.load('" + path + "'): "; }

}  // namespace

uint64_t npy_header_end(const unsigned char* p, std::size_t avail, uint64_t file_size) {
  const uint64_t have = std::min<uint64_t>(avail, file_size);
  UMA_CHECK(have >= 6 && std::memcmp(p, kMagic, 6) == 0, Value,
            "not a .npy file: bad magic (expected \\x93NUMPY in the first 6 bytes of a ", file_size, "-byte file)");
  UMA_CHECK(have >= 8, Value, "invalid .npy file: truncated before the version bytes (file size ", file_size, ")");
  const int major = p[6], minor = p[7];
  UMA_CHECK((major == 1 || major == 2 || major == 3) && minor == 0, Value, "unsupported .npy format version ", major,
            ".", minor, " (uma reads 1.0, 2.0 and 3.0)");
  const uint64_t pre = major == 1 ? 10 : 12;
  UMA_CHECK(have >= pre, Value, "invalid .npy file: truncated inside the header length (file size ", file_size, ")");
  uint64_t hlen = major == 1 ? (uint64_t(p[8]) | uint64_t(p[9]) << 8)
                             : (uint64_t(p[8]) | uint64_t(p[9]) << 8 | uint64_t(p[10]) << 16 | uint64_t(p[11]) << 24);
  UMA_CHECK(hlen <= kMaxNpyHeaderBytes, Value, "invalid .npy header length ", hlen, " (limit ", kMaxNpyHeaderBytes, ")");
  UMA_CHECK(pre + hlen <= file_size, Value, "invalid .npy header length ", hlen, " at byte 8: the header would end at byte ",
            pre + hlen, " but the file has ", file_size, " bytes (truncated header or lying length)");
  return pre + hlen;
}

NpyHeader parse_npy_header(const unsigned char* p, std::size_t avail, uint64_t file_size) {
  const uint64_t end = npy_header_end(p, avail, file_size);
  UMA_CHECK(avail >= end, Value, "invalid .npy file: truncated header (", avail, " of ", end, " bytes)");
  NpyHeader h;
  h.major = p[6];
  h.minor = p[7];
  const uint64_t pre = h.major == 1 ? 10 : 12;
  Cursor c{p + pre, p + pre, p + end, pre};
  c.ws();
  c.expect('{', "at the start of the header dict");
  bool have_descr = false, have_fortran = false, have_shape = false;
  for (;;) {
    c.ws();
    if (c.eat('}')) break;
    const uint64_t key_at = c.offset();
    std::string key = c.str("a key");
    c.ws();
    c.expect(':', "after a key");
    c.ws();
    if (key == "descr") {
      if (have_descr) c.fail("duplicate key 'descr'");
      have_descr = true;
      if (c.peek() == '[') UMA_FAIL(Type, "unsupported .npy dtype: structured (record) descr lists are not supported");
      auto [t, swapped] = parse_descr(c.str("'descr'"), c);
      h.dtype = t;
      h.byteswapped = swapped;
    } else if (key == "fortran_order") {
      if (have_fortran) c.fail("duplicate key 'fortran_order'");
      have_fortran = true;
      std::string w = c.word();
      if (w.empty() && (c.peek() == '\'' || c.peek() == '"')) {
        const unsigned char* at = c.p;
        const std::string v = c.str("'fortran_order'");
        c.p = at;  // the message names the value's offset
        c.fail("'fortran_order' must be True or False, found the string '" + v + "'");
      }
      if (w != "True" && w != "False")
        c.fail("'fortran_order' must be True or False, found " + (w.empty() ? describe_byte(c.p, c.end) : "'" + w + "'"));
      h.fortran_order = w == "True";
    } else if (key == "shape") {
      if (have_shape) c.fail("duplicate key 'shape'");
      have_shape = true;
      c.expect('(', "('shape' must be a tuple)");
      c.ws();
      bool comma_after_last = false;
      while (!c.eat(')')) {
        if (h.shape.size() == kMaxFileNdim) c.fail("'shape' has more than 64 dimensions");
        h.shape.push_back(c.integer("a 'shape' entry"));
        c.ws();
        comma_after_last = c.eat(',');
        c.ws();
        if (!comma_after_last && c.peek() != ')') c.fail("expected ',' or ')' in 'shape', found " + describe_byte(c.p, c.end));
      }
      if (h.shape.size() == 1 && !comma_after_last) c.fail("'shape' (n) is an int, not a tuple: write (n,)");
    } else {
      UMA_FAIL(Value, "invalid .npy header: unexpected key '", key, "' at byte ", key_at,
               " (the keys are exactly 'descr', 'fortran_order', 'shape')");
    }
    c.ws();
    if (c.eat('}')) break;
    c.expect(',', "or '}' after a value");
  }
  c.ws();
  if (c.p != c.end) c.fail("unexpected " + describe_byte(c.p, c.end) + " after the header dict");
  if (!have_descr || !have_fortran || !have_shape)
    UMA_FAIL(Value, "invalid .npy header: missing key '", !have_descr ? "descr" : !have_fortran ? "fortran_order" : "shape", "'");
  detail::check_shape_fits(h.shape, h.dtype, "invalid .npy header:");
  h.data_offset = end;
  h.data_nbytes = static_cast<uint64_t>(checked_size(h.shape)) * itemsize(h.dtype);  // fits: check_shape_fits
  const uint64_t avail_data = file_size - end;
  UMA_CHECK(h.data_nbytes <= avail_data, Value, "invalid .npy file: shape ", shape_str(h.shape), " of ", dtype_name(h.dtype),
            " needs ", h.data_nbytes, " data bytes but only ", avail_data, " follow the header at byte ", end,
            " (truncated data or lying header)");
  UMA_CHECK(h.data_nbytes == avail_data, Value, "invalid .npy file: ", avail_data, " data bytes follow the header at byte ",
            end, " but shape ", shape_str(h.shape), " of ", dtype_name(h.dtype), " needs only ", h.data_nbytes,
            " (trailing bytes or lying header)");
  return h;
}

std::string npy_descr(DType t) {
  switch (t) {
    case DType::Bool: return "|b1";
    case DType::Int8: return "|i1";
    case DType::UInt8: return "|u1";
    case DType::BFloat16:
      UMA_FAIL(Type, "uma.save: .npy has no bfloat16 type (save as .safetensors, or convert with astype(float32))");
    default: break;
  }
  return std::string("<") + dtype_kind(t) + std::to_string(itemsize(t));
}

std::string npy_header_bytes(DType dtype, const Shape& shape, bool fortran_order) {
  // As numpy.lib.format._write_array_header and _wrap_header write it (byte for byte).
  std::string d = "{'descr': '" + npy_descr(dtype) + "', 'fortran_order': " + (fortran_order ? "True" : "False") +
                  ", 'shape': " + shape_str(shape) + ", }";
  if (!shape.empty()) {
    std::size_t digits = std::to_string(shape[fortran_order ? shape.size() - 1 : 0]).size();
    if (digits < kGrowthAxisDigits) d.append(kGrowthAxisDigits - digits, ' ');
  }
  for (int major : {1, 2}) {
    const uint64_t pre = major == 1 ? 10 : 12;
    const uint64_t hlen = d.size() + 1;
    const uint64_t pad = kNpyAlign - (pre + hlen) % kNpyAlign;
    const uint64_t total = hlen + pad;
    if (major == 1 && total > 0xffff) continue;
    std::string out(reinterpret_cast<const char*>(kMagic), 6);
    out.push_back(static_cast<char>(major));
    out.push_back(0);
    for (uint64_t b = 0; b < pre - 8; ++b) out.push_back(static_cast<char>((total >> (8 * b)) & 0xff));
    out += d;
    out.append(pad, ' ');
    out.push_back('\n');
    return out;
  }
  UMA_ASSERT(false);
}

FileFormat sniff_format(const std::string& path) {
  detail::InputFile f = detail::with_context(context(path), [&] { return detail::InputFile(path); });
  std::string s = f.read_prefix(9);
  if (s.size() >= 6 && std::memcmp(s.data(), kMagic, 6) == 0) return FileFormat::Npy;
  if (s.size() >= 9 && s[8] == '{') return FileFormat::Safetensors;
  return FileFormat::Unknown;
}

Array load_npy(const std::string& path, std::optional<bool> mmap) {
  return detail::with_context(context(path), [&] {
    detail::InputFile f(path);
    std::string pre = f.read_prefix(12);
    const uint64_t end = npy_header_end(reinterpret_cast<const unsigned char*>(pre.data()), pre.size(), f.size());
    std::string hdr = f.read_prefix(end);
    const NpyHeader h = parse_npy_header(reinterpret_cast<const unsigned char*>(hdr.data()), hdr.size(), f.size());
    const Strides strides = h.fortran_order ? fortran_strides(h.shape) : contiguous_strides(h.shape);
    const uint64_t n = h.data_nbytes / itemsize(h.dtype);
    const bool shareable = n == 0 || (!h.byteswapped && h.data_offset % itemsize(h.dtype) == 0);
    if (mmap.value_or(shareable)) {
      const std::string descr = std::string(h.byteswapped ? ">" : "<") + dtype_kind(h.dtype) + std::to_string(itemsize(h.dtype));
      UMA_CHECK(!(h.byteswapped && n > 0), Copy, "mmap=True cannot share big-endian data (descr '", descr,
                "'): it needs a byte-swapped copy; load with mmap=False");
      UMA_CHECK(n == 0 || h.data_offset % itemsize(h.dtype) == 0, Copy, "mmap=True cannot share the data: it starts at byte ",
                h.data_offset, ", not a multiple of the itemsize ", itemsize(h.dtype), "; load with mmap=False");
      std::shared_ptr<Storage> st = f.map();
      char* data = static_cast<char*>(st->data.get()) + h.data_offset;
      return Array(std::move(st), data, h.shape, strides, h.dtype, /*writable=*/false);
    }
    Array a = Array::empty(h.shape, h.dtype);
    if (n > 0) f.read_at(a.data(), h.data_nbytes, h.data_offset);
    if (h.byteswapped) detail::byteswap(a.data(), n, h.dtype);
    return h.fortran_order ? a.view(a.data(), h.shape, strides) : a;
  });
}

void save_npy(const std::string& path, const Array& a) {
  UMA_CHECK(a.device().is_cpu(), Value, "uma.save: the array is on ", a.device().str(), "; only host arrays can be saved");
  const bool fortran = !a.is_c_contiguous() && a.is_f_contiguous();
  const std::string hdr = npy_header_bytes(a.dtype(), a.shape(), fortran);
  const Array src = fortran ? a : ops::contiguous(a);
  detail::OutputFile out(path);
  out.write(hdr.data(), hdr.size());
  if (src.nbytes() > 0) out.write(src.data(), static_cast<uint64_t>(src.nbytes()));
  out.commit();
}

}  // namespace uma::files
