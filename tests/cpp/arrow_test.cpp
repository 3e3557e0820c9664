// Tests for uma/interop/arrow.h: the frozen ArrowSchema/ArrowArray/ArrowArrayStream layouts,
// the owner types (Note [Arrow ownership]), format strings, export of 1-D arrays and validated
// import of arrays and streams, with every release callback counted.
#include <gtest/gtest.h>

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "uma/error.h"
#include "uma/interop/arrow.h"
#include "uma/memory/allocator.h"

namespace uma {
namespace {

using arrow::ArrowArray;
using arrow::ArrowArrayOwner;
using arrow::ArrowArrayStream;
using arrow::ArrowArrayStreamOwner;
using arrow::ArrowSchema;
using arrow::ArrowSchemaOwner;
using interop::CopyMode;

// ---- layouts -----------------------------------------------------------------------------

TEST(ArrowAbi, SchemaLayout) {
  EXPECT_EQ(sizeof(ArrowSchema), 72u);
  EXPECT_EQ(offsetof(ArrowSchema, format), 0u);
  EXPECT_EQ(offsetof(ArrowSchema, name), 8u);
  EXPECT_EQ(offsetof(ArrowSchema, metadata), 16u);
  EXPECT_EQ(offsetof(ArrowSchema, flags), 24u);
  EXPECT_EQ(offsetof(ArrowSchema, n_children), 32u);
  EXPECT_EQ(offsetof(ArrowSchema, children), 40u);
  EXPECT_EQ(offsetof(ArrowSchema, dictionary), 48u);
  EXPECT_EQ(offsetof(ArrowSchema, release), 56u);
  EXPECT_EQ(offsetof(ArrowSchema, private_data), 64u);
  EXPECT_EQ(arrow::kFlagDictionaryOrdered, 1);
  EXPECT_EQ(arrow::kFlagNullable, 2);
  EXPECT_EQ(arrow::kFlagMapKeysSorted, 4);
}

TEST(ArrowAbi, ArrayLayout) {
  EXPECT_EQ(sizeof(ArrowArray), 80u);
  EXPECT_EQ(offsetof(ArrowArray, length), 0u);
  EXPECT_EQ(offsetof(ArrowArray, null_count), 8u);
  EXPECT_EQ(offsetof(ArrowArray, offset), 16u);
  EXPECT_EQ(offsetof(ArrowArray, n_buffers), 24u);
  EXPECT_EQ(offsetof(ArrowArray, n_children), 32u);
  EXPECT_EQ(offsetof(ArrowArray, buffers), 40u);
  EXPECT_EQ(offsetof(ArrowArray, children), 48u);
  EXPECT_EQ(offsetof(ArrowArray, dictionary), 56u);
  EXPECT_EQ(offsetof(ArrowArray, release), 64u);
  EXPECT_EQ(offsetof(ArrowArray, private_data), 72u);
}

TEST(ArrowAbi, StreamLayout) {
  EXPECT_EQ(sizeof(ArrowArrayStream), 40u);
  EXPECT_EQ(offsetof(ArrowArrayStream, get_schema), 0u);
  EXPECT_EQ(offsetof(ArrowArrayStream, get_next), 8u);
  EXPECT_EQ(offsetof(ArrowArrayStream, get_last_error), 16u);
  EXPECT_EQ(offsetof(ArrowArrayStream, release), 24u);
  EXPECT_EQ(offsetof(ArrowArrayStream, private_data), 32u);
}

// ---- formats -----------------------------------------------------------------------------

TEST(ArrowFormat, EveryDtype) {
  const std::pair<DType, const char*> table[] = {
      {DType::Bool, "b"},    {DType::Int8, "c"},    {DType::UInt8, "C"},   {DType::Int16, "s"},
      {DType::UInt16, "S"},  {DType::Int32, "i"},   {DType::UInt32, "I"},  {DType::Int64, "l"},
      {DType::UInt64, "L"},  {DType::Float16, "e"}, {DType::Float32, "f"}, {DType::Float64, "g"},
  };
  for (auto [t, f] : table) {
    ASSERT_NE(interop::arrow_format(t), nullptr) << dtype_name(t);
    EXPECT_STREQ(interop::arrow_format(t), f);
    EXPECT_EQ(interop::dtype_from_arrow_format(f), t);
  }
  EXPECT_EQ(interop::arrow_format(DType::BFloat16), nullptr);
  EXPECT_EQ(interop::arrow_format(DType::Complex64), nullptr);
  EXPECT_EQ(interop::arrow_format(DType::Complex128), nullptr);
}

TEST(ArrowFormat, NonPrimitivesAreNotDtypes) {
  for (const char* f : {"", "n", "z", "Z", "u", "U", "ii", "i ", "d:5,2", "w:4", "tdD", "tsu:", "tsu:UTC", "+l", "+s",
                        "+w:3", "+m", "+ud:0,1", "vu", "x", "E", "G"})
    EXPECT_FALSE(interop::dtype_from_arrow_format(f).has_value()) << f;
}

TEST(ArrowFormat, DescribeEscapesTruncatesAndNames) {
  EXPECT_EQ(interop::describe_arrow_format("u"), "'u' (utf8 string)");
  EXPECT_EQ(interop::describe_arrow_format("+l"), "'+l' (list (nested))");
  EXPECT_EQ(interop::describe_arrow_format("tsu:UTC"), "'tsu:UTC' (timestamp)");
  EXPECT_EQ(interop::describe_arrow_format("i"), "'i' (int32)");
  EXPECT_EQ(interop::describe_arrow_format("q"), "'q'");
  EXPECT_EQ(interop::describe_arrow_format("\x01\xff"), "'\\x01\\xff'");
  EXPECT_EQ(interop::describe_arrow_format(nullptr), "NULL");
  std::string longf(500, 'A');
  EXPECT_EQ(interop::describe_arrow_format(longf.c_str()), "'" + std::string(64, 'A') + "...'");
}

TEST(ArrowFormat, CountUnsetBits) {
  std::vector<uint8_t> bm(40);
  for (std::size_t i = 0; i < bm.size(); ++i) bm[i] = static_cast<uint8_t>(i * 37 + 11);
  for (int64_t off : {0, 1, 7, 8, 9, 63, 64, 65}) {
    for (int64_t len : {0, 1, 5, 8, 63, 64, 65, 200, 250}) {
      if (off + len > 320) continue;
      int64_t naive = 0;
      for (int64_t i = off; i < off + len; ++i) naive += !((bm[i >> 3] >> (i & 7)) & 1);
      EXPECT_EQ(interop::count_unset_bits(bm.data(), off, len), naive) << off << " " << len;
    }
  }
}

// ---- a counting producer ------------------------------------------------------------------

struct Counts {
  int schema = 0;
  int array = 0;
};

void count_schema_release(ArrowSchema* s) {
  ++static_cast<Counts*>(s->private_data)->schema;
  s->release = nullptr;
}
void count_array_release(ArrowArray* a) {
  ++static_cast<Counts*>(a->private_data)->array;
  a->release = nullptr;
}

struct Producer {
  Counts counts;
  std::string format = "i";
  std::vector<int32_t> values{10, 11, 12, 13, 14, 15, 16, 17};
  std::vector<uint8_t> validity;
  const void* buffers[3] = {nullptr, nullptr, nullptr};
  ArrowSchema schema{};
  ArrowArray array{};

  Producer() {
    schema.format = format.c_str();
    schema.name = "";
    schema.release = &count_schema_release;
    schema.private_data = &counts;
    buffers[1] = values.data();
    array.length = static_cast<int64_t>(values.size());
    array.null_count = 0;
    array.offset = 0;
    array.n_buffers = 2;
    array.buffers = buffers;
    array.release = &count_array_release;
    array.private_data = &counts;
  }
  Array import(CopyMode copy = CopyMode::IfNeeded, std::optional<DType> dtype = std::nullopt) {
    schema.format = format.c_str();
    return interop::import_arrow(ArrowSchemaOwner::take(&schema), ArrowArrayOwner::take(&array), dtype, std::nullopt,
                                 copy, "test");
  }
};

ErrorKind kind_of(Producer& p, CopyMode copy = CopyMode::IfNeeded, std::string* msg = nullptr) {
  try {
    p.import(copy);
  } catch (const Error& e) {
    if (msg) *msg = e.what();
    return e.kind();
  }
  ADD_FAILURE() << "no error";
  return ErrorKind::Runtime;
}

// ---- owners ----------------------------------------------------------------------------

TEST(ArrowOwner, TakeMovesAndMarksSourceReleased) {
  Producer p;
  {
    ArrowArrayOwner o = ArrowArrayOwner::take(&p.array);
    EXPECT_EQ(p.array.release, nullptr);
    EXPECT_TRUE(o.live());
    ArrowArrayOwner o2 = std::move(o);
    EXPECT_FALSE(o.live());
    EXPECT_TRUE(o2.live());
    ArrowArrayOwner o3;
    o3 = std::move(o2);
    EXPECT_EQ(p.counts.array, 0);
  }
  EXPECT_EQ(p.counts.array, 1);
  ArrowArrayOwner again = ArrowArrayOwner::take(&p.array);  // a released source: empty owner
  EXPECT_FALSE(again.live());
  ArrowSchemaOwner none = ArrowSchemaOwner::take(nullptr);
  EXPECT_FALSE(none.live());
}

TEST(ArrowOwner, ResetOnceAndMoveTo) {
  Producer p;
  ArrowSchemaOwner o = ArrowSchemaOwner::take(&p.schema);
  o.reset();
  o.reset();
  EXPECT_EQ(p.counts.schema, 1);
  Producer q;
  ArrowSchemaOwner o2 = ArrowSchemaOwner::take(&q.schema);
  ArrowSchema dst;
  o2.move_to(&dst);
  EXPECT_FALSE(o2.live());
  EXPECT_EQ(q.counts.schema, 0);
  dst.release(&dst);
  EXPECT_EQ(q.counts.schema, 1);
}

// ---- import -------------------------------------------------------------------------------

TEST(ArrowImport, SharesHonouringOffsetAndReleasesAtLastView) {
  Producer p;
  p.array.offset = 3;
  p.array.length = 4;
  const int64_t adopted0 = memory_stats(Device::cpu()).adopted_bytes;
  {
    Array a = p.import();
    EXPECT_EQ(p.counts.schema, 1);
    EXPECT_EQ(p.counts.array, 0);
    EXPECT_EQ(a.data(), p.values.data() + 3);
    EXPECT_EQ(a.shape(), (Shape{4}));
    EXPECT_EQ(a.dtype(), DType::Int32);
    EXPECT_TRUE(a.is_adopted());
    EXPECT_FALSE(a.writable());
    EXPECT_EQ(memory_stats(Device::cpu()).adopted_bytes, adopted0 + 16);
    p.values[4] = 99;
    EXPECT_EQ(a.data_as<int32_t>()[1], 99);
  }
  EXPECT_EQ(p.counts.array, 1);
  EXPECT_EQ(memory_stats(Device::cpu()).adopted_bytes, adopted0);
}

TEST(ArrowImport, CopyAlwaysReleasesImmediately) {
  Producer p;
  Array a = p.import(CopyMode::Always);
  EXPECT_EQ(p.counts.schema, 1);
  EXPECT_EQ(p.counts.array, 1);
  EXPECT_NE(a.data(), p.values.data());
  EXPECT_TRUE(a.writable());
  EXPECT_EQ(a.data_as<int32_t>()[7], 17);
}

TEST(ArrowImport, DtypeConversion) {
  Producer p;
  Array a = p.import(CopyMode::IfNeeded, DType::Float64);
  EXPECT_EQ(a.dtype(), DType::Float64);
  EXPECT_EQ(a.data_as<double>()[2], 12.0);
  EXPECT_EQ(p.counts.array, 1);
  Producer q;
  try {
    q.import(CopyMode::Never, DType::Float64);
    ADD_FAILURE();
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::Copy);
  }
  EXPECT_EQ(q.counts.schema + q.counts.array, 2);
}

TEST(ArrowImport, BooleansUnpack) {
  Producer p;
  p.format = "b";
  uint8_t bits[2] = {0b10110110, 0b00000001};
  p.buffers[1] = bits;
  p.array.offset = 1;
  p.array.length = 9;
  Array a = p.import();
  EXPECT_EQ(p.counts.array, 1);
  ASSERT_EQ(a.dtype(), DType::Bool);
  const bool expect[9] = {true, true, false, true, true, false, true, true, false};
  for (int i = 0; i < 9; ++i) EXPECT_EQ(static_cast<bool>(a.data_as<bool8>()[i]), expect[i]) << i;
  Producer q;
  q.format = "b";
  q.buffers[1] = bits;
  q.array.length = 3;
  EXPECT_EQ(kind_of(q, CopyMode::Never), ErrorKind::Copy);
  EXPECT_EQ(q.counts.schema + q.counts.array, 2);
}

TEST(ArrowImport, NullsNameTheCount) {
  Producer p;
  p.array.null_count = 3;
  std::string msg;
  EXPECT_EQ(kind_of(p, CopyMode::IfNeeded, &msg), ErrorKind::Value);
  EXPECT_NE(msg.find("3 nulls"), std::string::npos) << msg;
  EXPECT_EQ(p.counts.schema + p.counts.array, 2);

  Producer q;  // unknown null count: the bitmap (with offset) decides
  q.validity = {0b11111011, 0xff};
  q.buffers[0] = q.validity.data();
  q.array.null_count = -1;
  q.array.offset = 1;
  q.array.length = 7;
  EXPECT_EQ(kind_of(q, CopyMode::IfNeeded, &msg), ErrorKind::Value);
  EXPECT_NE(msg.find("1 null "), std::string::npos) << msg;
  Producer r;
  r.validity = {0b11111011, 0xff};
  r.buffers[0] = r.validity.data();
  r.array.null_count = -1;
  r.array.offset = 3;
  r.array.length = 5;
  Array ok = r.import();
  EXPECT_EQ(ok.data_as<int32_t>()[0], 13);
}

struct Malformed {
  const char* what;
  void (*mutate)(Producer&);
  ErrorKind kind;
};

TEST(ArrowImport, MalformedInputsRaiseAndReleaseOnce) {
  static ArrowSchema dummy_schema{};
  static ArrowArray dummy_array{};
  const Malformed cases[] = {
      {"negative length", [](Producer& p) { p.array.length = -1; }, ErrorKind::Value},
      {"negative offset", [](Producer& p) { p.array.offset = -1; }, ErrorKind::Value},
      {"offset+length overflow", [](Producer& p) { p.array.offset = INT64_MAX; p.array.length = 1; }, ErrorKind::Value},
      {"byte size overflow", [](Producer& p) { p.array.offset = INT64_MAX / 4; p.array.length = 1; }, ErrorKind::Value},
      {"n_buffers 1", [](Producer& p) { p.array.n_buffers = 1; }, ErrorKind::Value},
      {"n_buffers 3", [](Producer& p) { p.array.n_buffers = 3; }, ErrorKind::Value},
      {"NULL buffers", [](Producer& p) { p.array.buffers = nullptr; }, ErrorKind::Value},
      {"NULL values", [](Producer& p) { p.buffers[1] = nullptr; }, ErrorKind::Value},
      {"null_count -2", [](Producer& p) { p.array.null_count = -2; }, ErrorKind::Value},
      {"null_count > length", [](Producer& p) { p.array.null_count = 9; }, ErrorKind::Value},
      {"array children", [](Producer& p) { p.array.n_children = 1; }, ErrorKind::Value},
      {"array dictionary", [](Producer& p) { p.array.dictionary = &dummy_array; }, ErrorKind::Value},
      {"schema children", [](Producer& p) { p.schema.n_children = 1; }, ErrorKind::Value},
      {"schema dictionary", [](Producer& p) { p.schema.dictionary = &dummy_schema; }, ErrorKind::Type},
      {"string format", [](Producer& p) { p.format = "u"; }, ErrorKind::Type},
      {"nested format", [](Producer& p) { p.format = "+l"; }, ErrorKind::Type},
      {"bfloat16-like unknown", [](Producer& p) { p.format = "x"; }, ErrorKind::Type},
  };
  for (const Malformed& c : cases) {
    Producer p;
    c.mutate(p);
    std::string msg;
    EXPECT_EQ(kind_of(p, CopyMode::IfNeeded, &msg), c.kind) << c.what << ": " << msg;
    EXPECT_EQ(p.counts.schema, 1) << c.what;
    EXPECT_EQ(p.counts.array, 1) << c.what;
  }
  // NULL format: the schema is checked through the public entry with the format left NULL.
  Producer p;
  p.schema.format = nullptr;
  try {
    interop::import_arrow(ArrowSchemaOwner::take(&p.schema), ArrowArrayOwner::take(&p.array), std::nullopt,
                          std::nullopt, CopyMode::IfNeeded, "test");
    ADD_FAILURE();
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::Value);
  }
  EXPECT_EQ(p.counts.schema + p.counts.array, 2);
}

TEST(ArrowImport, ReleasedStructsAreRefused) {
  Producer p;
  p.array.release = nullptr;
  EXPECT_EQ(kind_of(p), ErrorKind::Value);
  EXPECT_EQ(p.counts.schema, 1);
  EXPECT_EQ(p.counts.array, 0);
}

TEST(ArrowImport, EmptyWithNullValues) {
  Producer p;
  p.buffers[1] = nullptr;
  p.array.length = 0;
  Array a = p.import();
  EXPECT_EQ(a.size(), 0);
}

// ---- export --------------------------------------------------------------------------------

// ---- streams -------------------------------------------------------------------------------

// A stream over Producers (each counting its own releases): chunk i is producers[i]'s array,
// the schema producers[0]'s. fail_schema / fail_next_at make a call return an errno value.
struct StreamProducer {
  std::vector<Producer>* chunks;
  std::size_t next = 0;
  int fail_schema = 0;
  std::size_t fail_next_at = SIZE_MAX;
  int releases = 0;
  ArrowArrayStream stream{};

  explicit StreamProducer(std::vector<Producer>& c) : chunks(&c) {
    stream.get_schema = [](ArrowArrayStream* s, ArrowSchema* out) {
      auto* self = static_cast<StreamProducer*>(s->private_data);
      if (self->fail_schema) return self->fail_schema;
      Producer& p = (*self->chunks)[0];
      p.schema.format = p.format.c_str();
      ArrowSchemaOwner::take(&p.schema).move_to(out);
      return 0;
    };
    stream.get_next = [](ArrowArrayStream* s, ArrowArray* out) {
      auto* self = static_cast<StreamProducer*>(s->private_data);
      if (self->next == self->fail_next_at) return 5;  // EIO
      if (self->next == self->chunks->size()) {
        out->release = nullptr;
        return 0;
      }
      ArrowArrayOwner::take(&(*self->chunks)[self->next++].array).move_to(out);
      return 0;
    };
    stream.get_last_error = [](ArrowArrayStream*) -> const char* { return "disk on fire"; };
    stream.release = [](ArrowArrayStream* s) {
      ++static_cast<StreamProducer*>(s->private_data)->releases;
      s->release = nullptr;
    };
    stream.private_data = this;
  }
  Array import(CopyMode copy = CopyMode::IfNeeded) {
    return interop::import_arrow_stream(ArrowArrayStreamOwner::take(&stream), std::nullopt, std::nullopt, copy,
                                        "test");
  }
};

TEST(ArrowStream, OneArrayIsShared) {
  std::vector<Producer> chunks(1);
  StreamProducer sp(chunks);
  {
    Array a = sp.import(CopyMode::Never);
    EXPECT_EQ(sp.releases, 1);
    EXPECT_EQ(a.data(), chunks[0].values.data());
    EXPECT_FALSE(a.writable());
    EXPECT_EQ(chunks[0].counts.array, 0);
  }
  EXPECT_EQ(chunks[0].counts.array, 1);
  EXPECT_EQ(chunks[0].counts.schema, 1);
}

TEST(ArrowStream, SeveralArraysConcatenateIntoANewArray) {
  std::vector<Producer> chunks(3);
  chunks[1].array.offset = 6;
  chunks[1].array.length = 2;
  chunks[2].array.length = 0;
  StreamProducer sp(chunks);
  Array a = sp.import();
  EXPECT_EQ(sp.releases, 1);
  for (const Producer& c : chunks) EXPECT_EQ(c.counts.array, 1);
  ASSERT_EQ(a.shape(), (Shape{10}));
  EXPECT_TRUE(a.writable());
  const std::vector<int32_t> want{10, 11, 12, 13, 14, 15, 16, 17, 16, 17};
  EXPECT_EQ(std::vector<int32_t>(a.data_as<int32_t>(), a.data_as<int32_t>() + 10), want);
}

TEST(ArrowStream, EmptyStreamAndCopyNeverOfSeveral) {
  std::vector<Producer> one(1);
  StreamProducer empty(one);
  empty.fail_next_at = SIZE_MAX;
  empty.next = 1;  // at the end already
  Array a = empty.import(CopyMode::Never);
  EXPECT_EQ(a.shape(), (Shape{0}));
  EXPECT_EQ(a.dtype(), DType::Int32);
  EXPECT_EQ(empty.releases, 1);

  std::vector<Producer> two(2);
  StreamProducer sp(two);
  try {
    sp.import(CopyMode::Never);
    ADD_FAILURE() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::Copy);
    EXPECT_NE(std::string(e.what()).find("holds 2 arrays"), std::string::npos) << e.what();
  }
  EXPECT_EQ(sp.releases, 1);
  EXPECT_EQ(two[0].counts.array + two[1].counts.array, 2);
}

TEST(ArrowStream, ProducerErrorsAndBadArraysReleaseEverythingOnce) {
  struct Case {
    int fail_schema;
    std::size_t fail_next_at;
    bool bad_second;
    ErrorKind kind;
    const char* text;
  };
  for (const Case& c : {Case{22, SIZE_MAX, false, ErrorKind::Runtime, "get_schema failed with code 22 (disk on fire)"},
                        Case{0, 1, false, ErrorKind::Runtime, "get_next failed with code 5 after 1 array (disk on fire)"},
                        Case{0, SIZE_MAX, true, ErrorKind::Value, "n_buffers 3"}}) {
    std::vector<Producer> chunks(2);
    if (c.bad_second) chunks[1].array.n_buffers = 3;
    StreamProducer sp(chunks);
    sp.fail_schema = c.fail_schema;
    sp.fail_next_at = c.fail_next_at;
    try {
      sp.import();
      ADD_FAILURE() << "no error";
    } catch (const Error& e) {
      EXPECT_EQ(e.kind(), c.kind);
      EXPECT_NE(std::string(e.what()).find(c.text), std::string::npos) << e.what();
    }
    EXPECT_EQ(sp.releases, 1);
    EXPECT_EQ(chunks[0].counts.schema, c.fail_schema ? 0 : 1);
    for (std::size_t i = 0; i < chunks.size(); ++i) EXPECT_EQ(chunks[i].counts.array, i < sp.next ? 1 : 0) << i;
  }
  ArrowArrayStream released{};
  EXPECT_THROW(interop::import_arrow_stream(ArrowArrayStreamOwner::take(&released), std::nullopt, std::nullopt,
                                            CopyMode::IfNeeded, "test"),
               Error);
}

struct DeleterLog {
  int calls = 0;
};
void count_deleter(void* ctx, void*, std::size_t) noexcept { ++static_cast<DeleterLog*>(ctx)->calls; }

Array adopted_int32(std::vector<int32_t>& buf, DeleterLog& log) {
  auto st = std::make_shared<Storage>(adopt(buf.data(), buf.size() * 4, Device::cpu(), &count_deleter, &log));
  return Array(std::move(st), buf.data(), Shape{static_cast<int64_t>(buf.size())}, Strides{1}, DType::Int32, true);
}

TEST(ArrowExport, ContiguousSharesAndKeepsStorageAlive) {
  std::vector<int32_t> buf{1, 2, 3, 4, 5};
  DeleterLog log;
  interop::ArrowExport e;
  {
    Array a = adopted_int32(buf, log);
    e = interop::export_arrow(a, "test");
  }
  EXPECT_EQ(log.calls, 0);
  EXPECT_STREQ(e.schema.get().format, "i");
  EXPECT_EQ(e.schema.get().n_children, 0);
  const ArrowArray& x = e.array.get();
  EXPECT_EQ(x.length, 5);
  EXPECT_EQ(x.null_count, 0);
  EXPECT_EQ(x.offset, 0);
  EXPECT_EQ(x.n_buffers, 2);
  EXPECT_EQ(x.buffers[0], nullptr);
  EXPECT_EQ(x.buffers[1], buf.data());
  // a consumer moves the struct; release works on the moved copy
  ArrowArray moved;
  e.array.move_to(&moved);
  moved.release(&moved);
  EXPECT_EQ(moved.release, nullptr);
  EXPECT_EQ(log.calls, 1);
}

TEST(ArrowExport, StridedIsCopiedBoolIsPacked) {
  std::vector<int32_t> buf{0, 1, 2, 3, 4, 5, 6, 7};
  DeleterLog log;
  Array a = adopted_int32(buf, log);
  Array rev = a.view(buf.data() + 7, Shape{4}, Strides{-2});
  interop::ArrowExport e = interop::export_arrow(rev, "test");
  const auto* v = static_cast<const int32_t*>(e.array.get().buffers[1]);
  EXPECT_NE(static_cast<const void*>(v), static_cast<const void*>(buf.data()));
  EXPECT_EQ(v[0], 7);
  EXPECT_EQ(v[3], 1);

  Array b = Array::empty({10}, DType::Bool);
  for (int i = 0; i < 10; ++i) b.data_as<bool8>()[i] = (i % 3) == 0;
  interop::ArrowExport eb = interop::export_arrow(b, "test");
  EXPECT_STREQ(eb.schema.get().format, "b");
  const auto* bits = static_cast<const uint8_t*>(eb.array.get().buffers[1]);
  EXPECT_EQ(bits[0], 0b01001001);
  EXPECT_EQ(bits[1], 0b00000010);

  Array empty = Array::empty({0}, DType::Float32);
  interop::ArrowExport ee = interop::export_arrow(empty, "test");
  EXPECT_NE(ee.array.get().buffers[1], nullptr);
  EXPECT_EQ(ee.array.get().length, 0);
}

TEST(ArrowExport, RanksAndDtypesWithoutFormatAreTypeErrors) {
  for (auto [shape, t] : {std::pair{Shape{2, 3}, DType::Float32}, std::pair{Shape{}, DType::Int32},
                          std::pair{Shape{3}, DType::BFloat16}, std::pair{Shape{3}, DType::Complex64},
                          std::pair{Shape{3}, DType::Complex128}}) {
    try {
      interop::export_arrow(Array::empty(shape, t), "test");
      ADD_FAILURE() << dtype_name(t);
    } catch (const Error& e) {
      EXPECT_EQ(e.kind(), ErrorKind::Type) << e.what();
    }
  }
}

TEST(ArrowExport, RoundTripThroughImport) {
  std::vector<int32_t> buf{4, 5, 6};
  DeleterLog log;
  {
    Array a = adopted_int32(buf, log);
    interop::ArrowExport e = interop::export_arrow(a, "test");
    Array back = interop::import_arrow(std::move(e.schema), std::move(e.array), std::nullopt, std::nullopt,
                                       CopyMode::Never, "test");
    EXPECT_EQ(back.data(), buf.data());
    EXPECT_FALSE(back.writable());
  }
  EXPECT_EQ(log.calls, 1);
}

}  // namespace
}  // namespace uma
