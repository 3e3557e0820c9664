// Tests for .npy and .safetensors files (include/uma/interop/files.h, Note [Mapped files]):
// the header parsers on crafted byte strings (every malformation a clear ValueError/TypeError,
// nothing read past the given bytes), the writers (byte-exact headers), and load/save on
// temporary files with adoption and memory-stat checks.
#include <gtest/gtest.h>

#include <fcntl.h>
#include <unistd.h>

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <sstream>
#include <string>
#include <vector>

#include "uma/error.h"
#include "uma/interop/files.h"
#include "uma/memory/allocator.h"
#include "uma/ops.h"

namespace uma {
namespace {

using files::FileFormat;
using files::NpyHeader;
using files::SafetensorsHeader;
using files::SafetensorsTensor;

struct Caught {
  bool thrown = false;
  ErrorKind kind = ErrorKind::Runtime;
  std::string msg;
};
Caught catch_error(const std::function<void()>& f) {
  Caught c;
  try {
    f();
  } catch (const Error& e) {
    c.thrown = true;
    c.kind = e.kind();
    c.msg = e.what();
  }
  return c;
}
#define EXPECT_UMA_ERROR(stmt, Kind, substr)                                               \
  do {                                                                                     \
    Caught c_ = catch_error([&] { (void)(stmt); });                                        \
    EXPECT_TRUE(c_.thrown) << "no error from " #stmt;                                      \
    EXPECT_EQ(c_.kind, ErrorKind::Kind) << c_.msg;                                         \
    EXPECT_NE(c_.msg.find(substr), std::string::npos) << "message: " << c_.msg;           \
  } while (0)

// ---- .npy parser -----------------------------------------------------------------------

// magic + version + little-endian length + dict (exactly as given) + `data_bytes` zero bytes.
std::string npy(const std::string& dict, std::size_t data_bytes = 0, int major = 1) {
  std::string s("\x93NUMPY", 6);
  s.push_back(static_cast<char>(major));
  s.push_back(0);
  const int lenbytes = major == 1 ? 2 : 4;
  for (int b = 0; b < lenbytes; ++b) s.push_back(static_cast<char>((dict.size() >> (8 * b)) & 0xff));
  return s + dict + std::string(data_bytes, '\0');
}

NpyHeader parse_npy(const std::string& s) {
  return files::parse_npy_header(reinterpret_cast<const unsigned char*>(s.data()), s.size(), s.size());
}

TEST(NpyHeader, ParsesWhatNumpyWrites) {
  std::string f = npy("{'descr': '<f8', 'fortran_order': False, 'shape': (3, 4), }          \n", 96);
  NpyHeader h = parse_npy(f);
  EXPECT_EQ(h.dtype, DType::Float64);
  EXPECT_FALSE(h.byteswapped);
  EXPECT_FALSE(h.fortran_order);
  EXPECT_EQ(h.shape, (Shape{3, 4}));
  EXPECT_EQ(h.data_offset, f.size() - 96);
  EXPECT_EQ(h.data_nbytes, 96u);
}

TEST(NpyHeader, AllDescrs) {
  struct Case { const char* descr; DType t; bool swapped; };
  const Case cases[] = {
      {"|b1", DType::Bool, false},  {"|i1", DType::Int8, false},   {"<i2", DType::Int16, false},
      {"<i4", DType::Int32, false}, {"<i8", DType::Int64, false},  {"|u1", DType::UInt8, false},
      {"<u2", DType::UInt16, false}, {"<u4", DType::UInt32, false}, {"<u8", DType::UInt64, false},
      {"<f2", DType::Float16, false}, {"<f4", DType::Float32, false}, {"<f8", DType::Float64, false},
      {"<c8", DType::Complex64, false}, {"<c16", DType::Complex128, false}, {">f8", DType::Float64, true},
      {">i2", DType::Int16, true},  {">u1", DType::UInt8, false},  {"=i4", DType::Int32, false},
      {"|f8", DType::Float64, false}, {">c16", DType::Complex128, true},
  };
  for (const Case& c : cases) {
    std::string f = npy(std::string("{'descr': '") + c.descr + "', 'fortran_order': False, 'shape': (2,), }\n",
                        2 * itemsize(c.t));
    NpyHeader h = parse_npy(f);
    EXPECT_EQ(h.dtype, c.t) << c.descr;
    EXPECT_EQ(h.byteswapped, c.swapped) << c.descr;
  }
}

TEST(NpyHeader, LiteralVariants) {
  // Double quotes, no spaces, no trailing comma, key order, 0-d, size-0, Python 2 'L', version 2/3.
  EXPECT_EQ(parse_npy(npy("{\"shape\":(),\"fortran_order\":True,\"descr\":\"<i4\"}", 4)).shape, Shape{});
  EXPECT_TRUE(parse_npy(npy("{'descr':'<i4','fortran_order':True,'shape':(2,3)}", 24)).fortran_order);
  EXPECT_EQ(parse_npy(npy("{'descr': '<f4', 'fortran_order': False, 'shape': (0, 5), }\n")).shape, (Shape{0, 5}));
  EXPECT_EQ(parse_npy(npy("{'descr': '<f4', 'fortran_order': False, 'shape': (3L, 1L), }\n", 12)).shape, (Shape{3, 1}));
  EXPECT_EQ(parse_npy(npy("{'descr': '<f4', 'fortran_order': False, 'shape': (2,), }\n", 8, 2)).major, 2);
  EXPECT_EQ(parse_npy(npy("{'descr': '<f4', 'fortran_order': False, 'shape': (2,), }\n", 8, 3)).major, 3);
}

TEST(NpyHeader, MalformedIsValueError) {
  const std::string ok = "{'descr': '<f8', 'fortran_order': False, 'shape': (2,), }\n";
  EXPECT_UMA_ERROR(parse_npy(""), Value, "bad magic");
  EXPECT_UMA_ERROR(parse_npy("\x93NUMPZ\x01\x00\x00\x00"), Value, "bad magic");
  EXPECT_UMA_ERROR(parse_npy(std::string("\x93NUMPY\x01", 7)), Value, "truncated before the version");
  EXPECT_UMA_ERROR(parse_npy(std::string("\x93NUMPY\x01\x00\x05", 9)), Value, "truncated inside the header length");
  EXPECT_UMA_ERROR(parse_npy(std::string("\x93NUMPY\x04\x00", 8) + "\x10\x00"), Value, "version 4.0");
  EXPECT_UMA_ERROR(parse_npy(std::string("\x93NUMPY\x01\x01", 8) + "\x10\x00"), Value, "version 1.1");
  // Header length past the end of the file (truncated header or lying length).
  std::string f = npy(ok, 16);
  EXPECT_UMA_ERROR(parse_npy(f.substr(0, 30)), Value, "header length");
  std::string lie = f;
  lie[8] = static_cast<char>(0xff);
  lie[9] = static_cast<char>(0x7f);
  EXPECT_UMA_ERROR(parse_npy(lie), Value, "lying length");
  // Data: truncated, trailing, lying shape.
  EXPECT_UMA_ERROR(parse_npy(npy(ok, 15)), Value, "needs 16 data bytes but only 15");
  EXPECT_UMA_ERROR(parse_npy(npy(ok, 17)), Value, "trailing bytes");
  EXPECT_UMA_ERROR(parse_npy(npy("{'descr': '<f8', 'fortran_order': False, 'shape': (1000000000, 1000000000), }", 16)),
                   Value, "needs 8000000000000000000 data bytes");
  EXPECT_UMA_ERROR(parse_npy(npy("{'descr': '<f8', 'fortran_order': False, 'shape': (4294967296, 4294967296), }")),
                   Value, "too big");
  EXPECT_UMA_ERROR(parse_npy(npy("{'descr': '<f8', 'fortran_order': False, 'shape': (99999999999999999999,), }")),
                   Value, "64 bits");
  // The dict.
  const std::pair<std::string, std::string> bad[] = {
      {"", "expected '{'"},
      {"{'descr': '<f8', 'fortran_order': False, 'shape': (2,), ", "expected a quoted string"},
      {"{'descr': '<f8', 'fortran_order': False}", "missing key 'shape'"},
      {"{'descr': '<f8', 'fortran_order': False, 'shape': (2,), 'extra': 1}", "unexpected key 'extra'"},
      {"{'descr': '<f8', 'descr': '<f8', 'fortran_order': False, 'shape': (2,)}", "duplicate key 'descr'"},
      {"{'descr': '<f8', 'fortran_order': 0, 'shape': (2,)}", "must be True or False"},
      {"{'descr': '<f8', 'fortran_order': False, 'shape': [2]}", "must be a tuple"},
      {"{'descr': '<f8', 'fortran_order': False, 'shape': (2)}", "is an int, not a tuple"},
      {"{'descr': '<f8', 'fortran_order': False, 'shape': (-2,)}", "negative"},
      {"{'descr': '<f8', 'fortran_order': False, 'shape': (2.0,)}", "expected an integer"},
      {"{'descr': '<f8', 'fortran_order': False, 'shape': (02,)}", "leading zero"},
      {"{'descr': '<f8', 'fortran_order': False, 'shape': (2,), } x", "after the header dict"},
      {"{'descr': '<f8\\n', 'fortran_order': False, 'shape': (2,)}", "unsupported character"},
      {"{'descr': '<f8, 'fortran_order': False, 'shape': (2,)}", "is not a NumPy type string"},
      {"{'descr' '<f8', 'fortran_order': False, 'shape': (2,)}", "expected ':'"},
      {"{'descr': 'float64', 'fortran_order': False, 'shape': (2,)}", "not a NumPy type string"},
      {"{'descr': '<q8', 'fortran_order': False, 'shape': (2,)}", "unknown descr '<q8'"},
      {"{'descr': '<f3', 'fortran_order': False, 'shape': (2,)}", "unknown descr '<f3'"},
      {"{'descr': '<i8x', 'fortran_order': False, 'shape': (2,)}", "not a NumPy type string"},
      {"{'descr': '<f8' 'fortran_order': False, 'shape': (2,)}", "expected ','"},
  };
  for (const auto& [dict, what] : bad) EXPECT_UMA_ERROR(parse_npy(npy(dict, 16)), Value, what);
  std::string many = "{'descr': '<f8', 'fortran_order': False, 'shape': (";
  for (int i = 0; i < 65; ++i) many += "1, ";
  EXPECT_UMA_ERROR(parse_npy(npy(many + ")}", 8)), Value, "more than 64 dimensions");
}

TEST(NpyHeader, UnsupportedDtypeIsTypeError) {
  for (const char* d : {"<U3", "|S4", "|O", "<M8[ns]", "<m8[s]", "|V16", "<f16", "<c32"})
    EXPECT_UMA_ERROR(parse_npy(npy(std::string("{'descr': '") + d + "', 'fortran_order': False, 'shape': (0,)}")), Type,
                     "unsupported .npy dtype");
  EXPECT_UMA_ERROR(parse_npy(npy("{'descr': [('a', '<i4')], 'fortran_order': False, 'shape': (0,)}")), Type, "structured");
}

TEST(NpyHeader, NeverReadsPastTheGivenBytes) {
  // Every prefix of a valid file is rejected cleanly (run under ASAN in `make test`); the
  // parser is given exact-size heap copies so an over-read would be caught.
  std::string f = npy("{'descr': '<i2', 'fortran_order': False, 'shape': (3,), }\n", 6);
  for (std::size_t n = 0; n < f.size(); ++n) {
    std::vector<unsigned char> buf(f.begin(), f.begin() + static_cast<std::ptrdiff_t>(n));
    Caught c = catch_error([&] { files::parse_npy_header(buf.data(), buf.size(), buf.size()); });
    EXPECT_TRUE(c.thrown) << n;
    EXPECT_EQ(c.kind, ErrorKind::Value) << n;
  }
  // A prefix shorter than the header while the file is long enough: also a ValueError.
  EXPECT_UMA_ERROR(files::parse_npy_header(reinterpret_cast<const unsigned char*>(f.data()), 20, f.size()), Value, "truncated");
}

// ---- .npy writer -----------------------------------------------------------------------

TEST(NpyWriter, HeaderIsWhatNumpyWrites) {
  // np.save(np.zeros((3, 4))) header, byte for byte (numpy 2: 21-digit growth padding).
  std::string h = files::npy_header_bytes(DType::Float64, {3, 4}, false);
  std::string expect = std::string("\x93NUMPY\x01\x00\x76\x00", 10) +
                       "{'descr': '<f8', 'fortran_order': False, 'shape': (3, 4), }" + std::string(58, ' ') + "\n";
  EXPECT_EQ(h, expect);
  for (DType t : {DType::Bool, DType::Int8, DType::UInt64, DType::Float16, DType::Complex128}) {
    for (const Shape& s : {Shape{}, Shape{0}, Shape{7}, Shape{2, 3, 4}}) {
      for (bool fo : {false, true}) {
        std::string b = files::npy_header_bytes(t, s, fo);
        EXPECT_EQ(b.size() % 64, 0u);
        EXPECT_EQ(b.back(), '\n');
        std::string file = b + std::string(static_cast<std::size_t>(checked_size(s)) * itemsize(t), '\0');
        NpyHeader p = parse_npy(file);
        EXPECT_EQ(p.dtype, t);
        EXPECT_EQ(p.shape, s);
        EXPECT_EQ(p.fortran_order, fo);
        EXPECT_EQ(p.data_offset, b.size());
      }
    }
  }
  EXPECT_EQ(files::npy_descr(DType::Bool), "|b1");
  EXPECT_EQ(files::npy_descr(DType::Complex64), "<c8");
  EXPECT_UMA_ERROR(files::npy_header_bytes(DType::BFloat16, {2}, false), Type, "bfloat16");
}

// ---- safetensors parser ----------------------------------------------------------------

std::string st(const std::string& json, std::size_t data_bytes = 0) {
  std::string s(8, '\0');
  for (int b = 0; b < 8; ++b) s[b] = static_cast<char>((uint64_t(json.size()) >> (8 * b)) & 0xff);
  return s + json + std::string(data_bytes, '\0');
}
SafetensorsHeader parse_st(const std::string& s) {
  return files::parse_safetensors_header(reinterpret_cast<const unsigned char*>(s.data()), s.size(), s.size());
}

TEST(SafetensorsHeader, ParsesWhatTheReferenceWrites) {
  // safetensors.numpy.save({"b": uint8[3], "a": float64[2,2], "c": complex64[2], "z": float32[0,3]},
  //                        metadata={"k": "v\"\n\u00e9"}) header, verbatim.
  const std::string json =
      "{\"__metadata__\":{\"k\":\"v\\\"\\n\xc3\xa9\"},\"a\":{\"dtype\":\"F64\",\"shape\":[2,2],\"data_offsets\":[0,32]},"
      "\"c\":{\"dtype\":\"C64\",\"shape\":[2],\"data_offsets\":[32,48]},\"z\":{\"dtype\":\"F32\",\"shape\":[0,3],"
      "\"data_offsets\":[48,48]},\"b\":{\"dtype\":\"U8\",\"shape\":[3],\"data_offsets\":[48,51]}}  ";
  SafetensorsHeader h = parse_st(st(json, 51));
  ASSERT_EQ(h.tensors.size(), 4u);
  EXPECT_EQ(h.tensors[0].name, "a");
  EXPECT_EQ(h.tensors[0].dtype, DType::Float64);
  EXPECT_EQ(h.tensors[0].shape, (Shape{2, 2}));
  EXPECT_EQ(h.tensors[1].dtype, DType::Complex64);
  EXPECT_EQ(h.tensors[2].name, "z");
  EXPECT_EQ(h.tensors[3].name, "b");
  EXPECT_EQ(h.tensors[3].begin, 48u);
  EXPECT_EQ(h.tensors[3].end, 51u);
  EXPECT_EQ(h.data_offset, 8 + json.size());
  ASSERT_TRUE(h.metadata.has_value());
  ASSERT_EQ(h.metadata->size(), 1u);
  EXPECT_EQ((*h.metadata)[0].second, "v\"\n\xc3\xa9");

  // And the writer produces exactly those bytes (same order, same padding).
  std::vector<SafetensorsTensor> ts = {{"b", DType::UInt8, {3}, 0, 0},
                                       {"a", DType::Float64, {2, 2}, 0, 0},
                                       {"c", DType::Complex64, {2}, 0, 0},
                                       {"z", DType::Float32, {0, 3}, 0, 0}};
  std::vector<std::pair<std::string, std::string>> md = {{"k", "v\"\n\xc3\xa9"}};
  EXPECT_EQ(files::safetensors_header_bytes(files::plan_safetensors(ts, md)), st(json));
  EXPECT_EQ(files::safetensors_header_bytes(files::plan_safetensors({}, std::nullopt)), st("{}      "));
}

TEST(SafetensorsHeader, AllDtypes) {
  struct Case { const char* name; DType t; };
  const Case cases[] = {{"BOOL", DType::Bool}, {"U8", DType::UInt8},   {"I8", DType::Int8},     {"U16", DType::UInt16},
                        {"I16", DType::Int16}, {"U32", DType::UInt32}, {"I32", DType::Int32},   {"U64", DType::UInt64},
                        {"I64", DType::Int64}, {"F16", DType::Float16}, {"BF16", DType::BFloat16}, {"F32", DType::Float32},
                        {"F64", DType::Float64}, {"C64", DType::Complex64}};
  for (const Case& c : cases) {
    const std::size_t n = 3 * itemsize(c.t);
    SafetensorsHeader h = parse_st(st(std::string("{\"x\":{\"dtype\":\"") + c.name + "\",\"shape\":[3],\"data_offsets\":[0," +
                                          std::to_string(n) + "]}}",
                                      n));
    EXPECT_EQ(h.tensors.at(0).dtype, c.t) << c.name;
    EXPECT_STREQ(files::safetensors_dtype_name(c.t), c.name);
  }
  EXPECT_UMA_ERROR(files::safetensors_dtype_name(DType::Complex128), Type, "complex128");
  for (const char* f8 : {"F8_E4M3", "F8_E5M2", "F8_E8M0"})
    EXPECT_UMA_ERROR(parse_st(st(std::string("{\"x\":{\"dtype\":\"") + f8 + "\",\"shape\":[2],\"data_offsets\":[0,2]}}", 2)),
                     Type, "unsupported safetensors dtype");
}

TEST(SafetensorsHeader, JsonVariants) {
  // Whitespace anywhere, fields in any order, escapes, surrogate pairs, null metadata, no tensors.
  SafetensorsHeader h = parse_st(st(
      "{ \"\\u00e9\\ud83d\\ude00\\t/\" : { \"shape\" : [ 1 ] ,\n\"data_offsets\":[0, 4], \"dtype\": \"I32\" } ,"
      "\"__metadata__\" : null }\r\n ",
      4));
  EXPECT_EQ(h.tensors.at(0).name, "\xc3\xa9\xf0\x9f\x98\x80\t/");
  EXPECT_FALSE(h.metadata.has_value());
  EXPECT_TRUE(parse_st(st("{}")).tensors.empty());
  EXPECT_EQ(parse_st(st("{\"__metadata__\":{}}")).metadata->size(), 0u);
  // Several size-0 tensors at one offset, and 0-d tensors.
  h = parse_st(st("{\"e\":{\"dtype\":\"F32\",\"shape\":[0],\"data_offsets\":[0,0]},"
                  "\"s\":{\"dtype\":\"F64\",\"shape\":[],\"data_offsets\":[0,8]},"
                  "\"f\":{\"dtype\":\"U8\",\"shape\":[3,0],\"data_offsets\":[8,8]}}",
                  8));
  EXPECT_EQ(h.tensors.size(), 3u);
  EXPECT_EQ(h.tensors[1].shape, Shape{});
}

TEST(SafetensorsHeader, MalformedIsValueError) {
  const std::string t = "\"x\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[0,8]}";
  EXPECT_UMA_ERROR(parse_st(""), Value, "too short");
  EXPECT_UMA_ERROR(parse_st(std::string("\x05\0\0\0\0\0\0", 7)), Value, "too short");
  std::string lie = st("{" + t + "}", 8);
  lie[0] = static_cast<char>(0xf0);
  EXPECT_UMA_ERROR(parse_st(lie), Value, "header length");
  std::string huge(8, '\xff');
  EXPECT_UMA_ERROR(parse_st(huge + "{}"), Value, "limit");
  const std::pair<std::string, std::string> bad[] = {
      {" {" + t + "}", "must start with '{'"},
      {"[" + t + "]", "must start with '{'"},
      {"{" + t, "expected ',' or '}'"},
      {"{" + t + ",}", "expected a string"},
      {"{" + t + "} x", "after the header object"},
      {"{" + t + "}{}", "after the header object"},
      {"{'x':{}}", "expected a string"},
      {"{\"x\":{\"dtype\":\"F32\",\"shape\":[2]}}", "lacks the field 'data_offsets'"},
      {"{\"x\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[0,8],\"extra\":1}}", "unknown field 'extra'"},
      {"{\"x\":{\"dtype\":\"F32\",\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[0,8]}}", "duplicate field 'dtype'"},
      {"{" + t + "," + t + "}", "duplicate tensor name 'x'"},
      {"{\"__metadata__\":{},\"__metadata__\":{}," + t + "}", "duplicate key '__metadata__'"},
      {"{\"__metadata__\":{\"a\":\"1\",\"a\":\"2\"}," + t + "}", "duplicate __metadata__ key 'a'"},
      {"{\"__metadata__\":{\"a\":1}," + t + "}", "values must be strings"},
      {"{\"__metadata__\":[]," + t + "}", "expected '{'"},
      {"{\"x\":{\"dtype\":\"F33\",\"shape\":[2],\"data_offsets\":[0,8]}}", "unknown dtype 'F33'"},
      {"{\"x\":{\"dtype\":\"F32\",\"shape\":[-2],\"data_offsets\":[0,8]}}", "negative"},
      {"{\"x\":{\"dtype\":\"F32\",\"shape\":[2.0],\"data_offsets\":[0,8]}}", "must be an integer"},
      {"{\"x\":{\"dtype\":\"F32\",\"shape\":[2e0],\"data_offsets\":[0,8]}}", "must be an integer"},
      {"{\"x\":{\"dtype\":\"F32\",\"shape\":[02],\"data_offsets\":[0,8]}}", "leading zero"},
      {"{\"x\":{\"dtype\":\"F32\",\"shape\":[2,],\"data_offsets\":[0,8]}}", "expected a non-negative integer"},
      {"{\"x\":{\"dtype\":\"F32\",\"shape\":[18446744073709551616],\"data_offsets\":[0,8]}}", "64 bits"},
      {"{\"x\":{\"dtype\":\"F32\",\"shape\":[9223372036854775808],\"data_offsets\":[0,8]}}", "exceeds 2^63-1"},
      {"{\"x\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[0]}}", "must be [begin, end]"},
      {"{\"x\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[0,4,8]}}", "more than 2 entries"},
      {"{\"x\":{\"dtype\":\"F32\",\"shape\":\"2\",\"data_offsets\":[0,8]}}", "expected '['"},
      {"{\"x\":{\"dtype\":F32,\"shape\":[2],\"data_offsets\":[0,8]}}", "expected a string"},
      {"{\"x\\q\":{}}", "unknown escape"},
      {"{\"x\\ud800\":{}}", "lone high surrogate"},
      {"{\"x\\udc00\":{}}", "lone low surrogate"},
      {"{\"x\\u12g4\":{}}", "bad hex digit"},
      {"{\"x\n\":{}}", "control character"},
      {"{\"x\xff\":{}}", "invalid UTF-8"},
      {"{\"x\xc0\xaf\":{}}", "invalid UTF-8"},           // overlong '/'
      {"{\"x\xed\xa0\x80\":{}}", "invalid UTF-8"},       // encoded surrogate
      {"{\"x\xe2\x82\":{}}", "invalid UTF-8"},
      {"{\"x", "unterminated string"},
  };
  for (const auto& [json, what] : bad) EXPECT_UMA_ERROR(parse_st(st(json, 8)), Value, what);
}

TEST(SafetensorsHeader, OffsetsMustTileTheData) {
  auto two = [](uint64_t b1, uint64_t e1, uint64_t b2, uint64_t e2, std::size_t data) {
    return st("{\"a\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[" + std::to_string(b1) + "," + std::to_string(e1) +
                  "]},\"b\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[" + std::to_string(b2) + "," +
                  std::to_string(e2) + "]}}",
              data);
  };
  EXPECT_EQ(parse_st(two(0, 8, 8, 16, 16)).tensors.size(), 2u);
  EXPECT_EQ(parse_st(two(8, 16, 0, 8, 16)).tensors[0].name, "b");  // data order, not header order
  EXPECT_UMA_ERROR(parse_st(two(0, 8, 12, 20, 20)), Value, "gap");
  EXPECT_UMA_ERROR(parse_st(two(0, 8, 4, 12, 12)), Value, "overlaps");
  EXPECT_UMA_ERROR(parse_st(two(0, 8, 0, 8, 8)), Value, "overlaps");
  EXPECT_UMA_ERROR(parse_st(two(0, 8, 8, 12, 12)), Value, "needs 8 bytes");
  EXPECT_UMA_ERROR(parse_st(two(0, 8, 16, 8, 16)), Value, "end before they begin");
  EXPECT_UMA_ERROR(parse_st(two(0, 8, 8, 16, 12)), Value, "past the end");   // truncated data
  EXPECT_UMA_ERROR(parse_st(two(0, 8, 8, 16, 20)), Value, "trailing bytes");
  EXPECT_UMA_ERROR(parse_st(two(1, 9, 9, 17, 17)), Value, "gap");
  // Offsets and shapes far past the end, and sizes that overflow.
  EXPECT_UMA_ERROR(parse_st(st("{\"a\":{\"dtype\":\"U8\",\"shape\":[1000000000000],\"data_offsets\":[0,1000000000000]}}", 4)),
                   Value, "past the end");
  EXPECT_UMA_ERROR(parse_st(st("{\"a\":{\"dtype\":\"F64\",\"shape\":[4611686018427387904,4],\"data_offsets\":[0,0]}}")),
                   Value, "overflows");
  EXPECT_UMA_ERROR(parse_st(st("{\"a\":{\"dtype\":\"F64\",\"shape\":[0,4611686018427387904,4],\"data_offsets\":[0,0]}}")),
                   Value, "too big");
  EXPECT_UMA_ERROR(parse_st(st("{\"a\":{\"dtype\":\"F4\",\"shape\":[3],\"data_offsets\":[0,1]}}", 1)), Value,
                   "not a whole number of bytes");
}

TEST(SafetensorsHeader, NeverReadsPastTheGivenBytes) {
  std::string f = st("{\"x\":{\"dtype\":\"I16\",\"shape\":[3],\"data_offsets\":[0,6]}}", 6);
  for (std::size_t n = 0; n < f.size(); ++n) {
    std::vector<unsigned char> buf(f.begin(), f.begin() + static_cast<std::ptrdiff_t>(n));
    Caught c = catch_error([&] { files::parse_safetensors_header(buf.data(), buf.size(), buf.size()); });
    EXPECT_TRUE(c.thrown) << n;
    EXPECT_EQ(c.kind, ErrorKind::Value) << n;
  }
  // The header itself cut short while its length says more: each prefix of the JSON as the whole header.
  const std::string json = "{\"x\":{\"dtype\":\"I16\",\"shape\":[3],\"data_offsets\":[0,6]}}";
  for (std::size_t n = 0; n < json.size(); ++n) {
    std::string g = st(json.substr(0, n));
    std::vector<unsigned char> buf(g.begin(), g.end());
    Caught c = catch_error([&] { files::parse_safetensors_header(buf.data(), buf.size(), buf.size()); });
    EXPECT_TRUE(c.thrown) << n;
    EXPECT_EQ(c.kind, ErrorKind::Value) << n;
  }
}

TEST(SafetensorsWriter, PlanOrdersLikeTheReference) {
  std::vector<SafetensorsTensor> ts = {{"m", DType::Bool, {5}, 0, 0},    {"k", DType::Float16, {3}, 0, 0},
                                       {"j", DType::Int64, {1}, 0, 0},   {"b", DType::Float32, {2}, 0, 0},
                                       {"a", DType::Float32, {1}, 0, 0}, {"z", DType::BFloat16, {1}, 0, 0}};
  SafetensorsHeader h = files::plan_safetensors(ts, std::nullopt);
  std::vector<std::string> names;
  for (auto& t : h.tensors) names.push_back(t.name);
  EXPECT_EQ(names, (std::vector<std::string>{"j", "a", "b", "z", "k", "m"}));
  EXPECT_EQ(h.tensors[1].begin, 8u);
  EXPECT_EQ(h.tensors.back().end, 8u + 4 + 8 + 2 + 6 + 5);
  for (auto& t : h.tensors) EXPECT_EQ(t.begin % itemsize(t.dtype), 0u);
  EXPECT_UMA_ERROR(files::plan_safetensors({{"__metadata__", DType::Bool, {1}, 0, 0}}, std::nullopt), Value, "reserved");
  EXPECT_UMA_ERROR(files::plan_safetensors({{"a", DType::Bool, {1}, 0, 0}, {"a", DType::Bool, {1}, 0, 0}}, std::nullopt),
                   Value, "duplicate");
  EXPECT_UMA_ERROR(files::plan_safetensors({{"a", DType::Complex128, {1}, 0, 0}}, std::nullopt), Type, "complex128");
  // Control characters and quotes in names are escaped as serde_json does; the result parses back.
  std::string hdr = files::safetensors_header_bytes(files::plan_safetensors({{"q\"\\\x01\n", DType::UInt8, {0}, 0, 0}}, std::nullopt));
  EXPECT_NE(hdr.find("\"q\\\"\\\\\\u0001\\n\""), std::string::npos) << hdr;
  EXPECT_EQ(hdr.size() % 8, 0u);
  EXPECT_EQ(parse_st(hdr).tensors.at(0).name, "q\"\\\x01\n");
}

// ---- files ----------------------------------------------------------------------------

class FileIO : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string tmpl = ::testing::TempDir() + "uma_files_XXXXXX";
    ASSERT_NE(::mkdtemp(tmpl.data()), nullptr);
    dir_ = tmpl;
  }
  void TearDown() override {
    std::error_code ignored;  // a folder left behind in the temporary directory fails no test
    std::filesystem::remove_all(dir_, ignored);
  }
  std::string path(const std::string& name) const { return dir_ + "/" + name; }
  void write(const std::string& name, const std::string& bytes) const {
    std::ofstream(path(name), std::ios::binary) << bytes;
  }
  std::string dir_;
};

Array iota_f64(const Shape& shape) {
  Array a = Array::empty(shape, DType::Float64);
  for (int64_t i = 0; i < a.size(); ++i) a.data_as<double>()[i] = static_cast<double>(i) + 0.5;
  return a;
}

TEST_F(FileIO, NpyRoundTripMmapAdoptsAndUnmapsOnce) {
  Array a = iota_f64({3, 5});
  files::save_npy(path("a.npy"), a);
  const int64_t adopted0 = memory_stats(Device::cpu()).adopted_bytes;
  {
    Array m = files::load_npy(path("a.npy"), true);
    EXPECT_TRUE(m.is_adopted());
    EXPECT_FALSE(m.writable());
    EXPECT_EQ(m.shape(), (Shape{3, 5}));
    EXPECT_EQ(std::memcmp(m.data(), a.data(), 15 * 8), 0);
    EXPECT_EQ(memory_stats(Device::cpu()).adopted_bytes - adopted0, 128 + 15 * 8);  // the whole file
    Array r = files::load_npy(path("a.npy"), false);
    EXPECT_FALSE(r.is_adopted());
    EXPECT_TRUE(r.writable());
    EXPECT_EQ(std::memcmp(r.data(), a.data(), 15 * 8), 0);
  }
  EXPECT_EQ(memory_stats(Device::cpu()).adopted_bytes, adopted0);
  EXPECT_EQ(files::sniff_format(path("a.npy")), FileFormat::Npy);
}

TEST_F(FileIO, NpyFortranBigEndianAndBools) {
  // Fortran order: shape (2, 3) with column-major data 0..5 loads as an F-contiguous view.
  std::string hdr = files::npy_header_bytes(DType::Int32, {2, 3}, true);
  std::string data;
  for (int32_t v = 0; v < 6; ++v) data.append(reinterpret_cast<const char*>(&v), 4);
  write("f.npy", hdr + data);
  for (bool mm : {true, false}) {
    Array f = files::load_npy(path("f.npy"), mm);
    EXPECT_TRUE(f.is_f_contiguous());
    EXPECT_FALSE(f.is_c_contiguous());
    EXPECT_EQ(f.strides(), (Strides{1, 2}));
    int64_t idx[2] = {1, 2};
    EXPECT_EQ(*reinterpret_cast<int32_t*>(f.ptr_at(idx)), 5);
  }
  // Big-endian: CopyError with mmap, swapped copy without.
  std::string be = npy("{'descr': '>i4', 'fortran_order': False, 'shape': (2,), }\n");
  be += std::string("\x00\x00\x01\x02\xff\xff\xff\xfe", 8);
  write("be.npy", be);
  const MemoryStats s0 = memory_stats(Device::cpu());
  EXPECT_UMA_ERROR(files::load_npy(path("be.npy"), true), Copy, "big-endian");
  EXPECT_EQ(memory_stats(Device::cpu()).adopted_bytes, s0.adopted_bytes);
  for (std::optional<bool> mmap : {std::optional<bool>(false), std::optional<bool>()}) {  // read, or read by default
    Array b = files::load_npy(path("be.npy"), mmap);
    EXPECT_FALSE(b.is_adopted());
    EXPECT_EQ(b.data_as<int32_t>()[0], 0x0102);
    EXPECT_EQ(b.data_as<int32_t>()[1], -2);
  }
  // Bool bytes other than 0/1 load as they are, in both modes (every kernel reads byte != 0).
  write("bool.npy", npy("{'descr': '|b1', 'fortran_order': False, 'shape': (3,), }\n") + std::string("\x01\x00\x02", 3));
  for (bool mmap : {true, false}) {
    Array t = files::load_npy(path("bool.npy"), mmap);
    EXPECT_EQ(std::memcmp(t.data(), "\x01\x00\x02", 3), 0);
    Array all = ops::reduce(ReduceOp::All, t, std::nullopt, false);
    EXPECT_FALSE(static_cast<bool>(*all.data_as<bool8>()));
    Array n = ops::reduce(ReduceOp::Sum, t, std::nullopt, false);
    EXPECT_EQ(*n.data_as<int64_t>(), 2);  // two true elements: bytes 1 and 2
  }
  // Unaligned data (an old 16-byte-aligned writer could never do this, a crafted file can).
  write("odd.npy", npy("{'descr': '<i4', 'fortran_order': False, 'shape': (1,)}", 4));  // data at 10 + 53
  EXPECT_UMA_ERROR(files::load_npy(path("odd.npy"), true), Copy, "not a multiple of the itemsize");
  EXPECT_EQ(files::load_npy(path("odd.npy"), false).size(), 1);
  EXPECT_FALSE(files::load_npy(path("odd.npy"), std::nullopt).is_adopted());  // the default reads it
  EXPECT_TRUE(files::load_npy(path("bool.npy"), std::nullopt).is_adopted());  // and shares what it can
}

TEST_F(FileIO, SafetensorsShareOneMapping) {
  Array a = iota_f64({4});
  Array b = Array::empty({2, 2}, DType::Int32);
  for (int i = 0; i < 4; ++i) b.data_as<int32_t>()[i] = -i;
  files::save_safetensors(path("m.safetensors"), {{"w", a}, {"b", b}}, std::vector<std::pair<std::string, std::string>>{{"fmt", "pt"}});
  const int64_t adopted0 = memory_stats(Device::cpu()).adopted_bytes;
  Array keep;
  {
    files::SafetensorsFile f = files::load_safetensors(path("m.safetensors"), true);
    ASSERT_EQ(f.tensors.size(), 2u);
    EXPECT_EQ(f.tensors[0].first, "w");
    EXPECT_EQ(f.tensors[1].first, "b");
    EXPECT_EQ(f.tensors[0].second.storage(), f.tensors[1].second.storage());  // one mapping
    EXPECT_EQ(std::memcmp(f.tensors[1].second.data(), b.data(), 16), 0);
    EXPECT_EQ((*f.metadata)[0].second, "pt");
    keep = f.tensors[1].second;
  }
  EXPECT_GT(memory_stats(Device::cpu()).adopted_bytes, adopted0);  // kept alive by one tensor
  EXPECT_EQ(keep.data_as<int32_t>()[3], -3);
  keep = Array();
  EXPECT_EQ(memory_stats(Device::cpu()).adopted_bytes, adopted0);
  files::SafetensorsFile r = files::load_safetensors(path("m.safetensors"), false);
  EXPECT_NE(r.tensors[0].second.storage(), r.tensors[1].second.storage());
  EXPECT_TRUE(r.tensors[0].second.writable());
  EXPECT_EQ(files::sniff_format(path("m.safetensors")), FileFormat::Safetensors);
}

TEST_F(FileIO, OsErrorsAreSystemErrors) {
  EXPECT_THROW(files::load_npy(path("missing.npy"), true), std::system_error);
  EXPECT_THROW(files::load_npy(dir_, true), std::system_error);  // EISDIR
  EXPECT_THROW(files::save_npy(path("no/such/dir.npy"), iota_f64({1})), std::system_error);
  EXPECT_UMA_ERROR(files::load_npy("/dev/null", true), Value, "not a regular file");
}

TEST_F(FileIO, SaveOverAMappedFileIsSafe) {
  files::save_npy(path("s.npy"), iota_f64({1000}));
  Array m = files::load_npy(path("s.npy"), true);
  files::save_npy(path("s.npy"), iota_f64({3}));  // replaced by rename: the old mapping stays valid
  EXPECT_EQ(m.data_as<double>()[999], 999.5);
  EXPECT_EQ(files::load_npy(path("s.npy"), true).size(), 3);
}

}  // namespace
}  // namespace uma
