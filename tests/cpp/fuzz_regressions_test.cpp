// Regression tests for what the libFuzzer targets of fuzz/ found (fuzz/README.md). Each test
// names the target and the sanitizer report it reproduces; before its fix, the case was
// undefined behaviour (UBSAN, in the asan phases) or an abort. The crashing inputs are also
// kept as seeds (fuzz/corpus/<target>/regression-*), so every fuzz run replays them.
#include <gtest/gtest.h>

#include <climits>
#include <cstdint>
#include <optional>
#include <vector>

#include "uma/array.h"
#include "uma/error.h"
#include "uma/interop/buffer_desc.h"
#include "uma/interop/copy_rules.h"
#include "uma/interop/dlpack_io.h"
#include "uma/memory/allocator.h"
#include "uma/ops.h"

namespace uma {
namespace {

using interop::CopyMode;
using interop::ForeignLayout;

template <class F>
std::optional<ErrorKind> kind_of(F&& f) {
  try {
    f();
  } catch (const Error& e) {
    return e.kind();
  }
  return std::nullopt;
}

Array no_adopt_import(const ForeignLayout& f, std::optional<DType> dtype = std::nullopt) {
  return interop::import_foreign(f, []() -> DataPtr { ADD_FAILURE() << "copy=True never adopts"; return {}; }, dtype,
                                 std::nullopt, CopyMode::Always, "test");
}

// fuzz_dlpack: "load of value 3, which is not a valid value for type 'bool'" in the cast
// kernel. A producer's bool bytes may hold any value; the copy path read them as C++ bools.
// Kernels read a bool element as byte != 0 (bool8), so a copy and every conversion of it give
// NumPy's values: any non-zero byte is true.
TEST(FuzzRegressions, CopiedForeignBoolBytesReadAsNonZero) {
  unsigned char bytes[8] = {0, 3, 1, 255, 0, 2, 1, 0};
  for (int64_t stride : {1, 2}) {
    ForeignLayout f;
    f.ptr = bytes;
    f.dtype = DType::Bool;
    f.shape = {8 / stride};
    f.byte_strides = {stride};
    Array a = no_adopt_import(f);
    ASSERT_EQ(a.dtype(), DType::Bool);
    Array as_int = ops::astype(a, DType::Int32);
    Array as_not = ops::unary(UnaryOp::LogicalNot, a);
    for (int64_t i = 0; i < a.size(); ++i) {
      const bool v = bytes[i * stride] != 0;
      EXPECT_EQ(as_int.data_as<int32_t>()[i], v ? 1 : 0) << "stride " << stride << ", element " << i;
      EXPECT_EQ(as_not.data_as<uint8_t>()[i], v ? 0 : 1) << "stride " << stride << ", element " << i;
    }
    Array n = no_adopt_import(f, DType::Int32);  // converting: true is 1, not the byte
    for (int64_t i = 0; i < n.size(); ++i) EXPECT_EQ(n.data_as<int32_t>()[i], bytes[i * stride] != 0 ? 1 : 0);
  }
}

// fuzz_shapes: "negation of -9223372036854775808 cannot be represented" in getitem. A slice
// step of INT64_MIN is clamped to -INT64_MAX, as CPython's PySlice_Unpack does.
TEST(FuzzRegressions, SliceStepInt64MinIsClampedLikeCPython) {
  Array a = ops::arange(Scalar::from_int(0), Scalar::from_int(5), Scalar::from_int(1), DType::Int64);
  IndexItem s{IndexItem::Slice, 0, std::nullopt, std::nullopt, INT64_MIN};
  Array v = ops::getitem(a, {s});
  ASSERT_EQ(v.shape(), (Shape{1}));
  EXPECT_EQ(v.data_as<int64_t>()[0], 4);  // a[::-huge] == a[4:5]
  IndexItem s2{IndexItem::Slice, 0, INT64_MAX, INT64_MIN, INT64_MIN};
  EXPECT_EQ(ops::getitem(a, {s2}).shape(), (Shape{1}));
}

// fuzz_shapes: "signed integer overflow: 9223372036854775807 * -9223372036854775807" in
// getitem (stride * step). An axis of length <= 1 keeps its stride; a longer one cannot
// overflow (|step| < n).
TEST(FuzzRegressions, HugeSliceStepDoesNotOverflowTheStride) {
  Array a = ops::arange(Scalar::from_int(0), Scalar::from_int(16), Scalar::from_int(1), DType::Int64);
  Array every2 = ops::getitem(a, {IndexItem{IndexItem::Slice, 0, std::nullopt, std::nullopt, 2}});
  for (int64_t step : {INT64_MAX, INT64_MIN + 1, int64_t(1) << 62, -(int64_t(1) << 62)}) {
    Array v = ops::getitem(every2, {IndexItem{IndexItem::Slice, 0, std::nullopt, std::nullopt, step}});
    ASSERT_EQ(v.shape(), (Shape{1}));
    EXPECT_EQ(v.data_as<int64_t>()[0], step > 0 ? 0 : 14);
    EXPECT_EQ(ops::copy(v).data_as<int64_t>()[0], step > 0 ? 0 : 14);
  }
}

// fuzz_shapes (120 s run): "signed integer overflow: 7349871976233566196 * 8" in getitem: an
// integer index into an empty array whose strides are huge (reshape to (0, 2**60, 4) of
// float64: element strides fit, byte offsets do not). Views of empty arrays now do no offset
// or stride arithmetic.
TEST(FuzzRegressions, IndexingAnEmptyArrayWithHugeStridesDoesNoArithmetic) {
  Array z = Array::empty({0}, DType::Float64);
  Array r = ops::reshape(z, {0, int64_t(1) << 60, 4});
  Array v = ops::getitem(r, {IndexItem{IndexItem::Slice, 0, std::nullopt, std::nullopt, std::nullopt},
                             IndexItem{IndexItem::Int, (int64_t(1) << 60) - 1, std::nullopt, std::nullopt, std::nullopt}});
  EXPECT_EQ(v.shape(), (Shape{0, 4}));
  EXPECT_EQ(v.data(), r.data());
  Array w = ops::getitem(r, {IndexItem{IndexItem::Slice, 0, std::nullopt, std::nullopt, std::nullopt},
                             IndexItem{IndexItem::Slice, 0, 5, std::nullopt, 3}});
  EXPECT_EQ(w.shape(), (Shape{0, ((int64_t(1) << 60) - 6) / 3 + 1, 4}));  // r[:, 5::3]
  EXPECT_EQ(ops::copy(w).size(), 0);
}

// fuzz_dlpack / fuzz_shapes: a size-0 shape whose other dimensions multiply past int64
// ((0, 2**62, 2**62)) made contiguous_strides and Array's size overflow. checked_size now
// refuses it as NumPy does ("array is too big"), so creation, reshape and broadcast_to do.
TEST(FuzzRegressions, SizeZeroShapesWhoseOtherDimsOverflowAreTooBig) {
  const Shape huge = {0, int64_t(1) << 62, int64_t(1) << 62};
  EXPECT_EQ(kind_of([&] { checked_size(huge); }), ErrorKind::Value);
  EXPECT_EQ(kind_of([&] { checked_size({int64_t(1) << 62, int64_t(1) << 62, 0}); }), ErrorKind::Value);
  EXPECT_EQ(checked_size({0, INT64_MAX}), 0);  // still fine: the non-zero product fits
  EXPECT_EQ(kind_of([&] { Array::empty(huge, DType::Float32); }), ErrorKind::Value);
  Array z = Array::empty({0}, DType::Float32);
  EXPECT_EQ(kind_of([&] { ops::reshape(z, huge); }), ErrorKind::Value);
  EXPECT_EQ(kind_of([&] { ops::broadcast_to(z, {int64_t(1) << 62, int64_t(1) << 62, 0}); }), ErrorKind::Value);
  // A view of that shape made directly (strides are unused for size 0) has size 0.
  Array v = z.view(z.data(), {int64_t(1) << 62, int64_t(1) << 62, 0}, {0, 0, 0});
  EXPECT_EQ(v.size(), 0);
}

// fuzz_dlpack: "signed integer overflow" in the cast kernel's loop set-up (make_loop) when
// copying a size-0 tensor whose strides are huge (valid: no element is addressed).
TEST(FuzzRegressions, CopyingAnEmptyViewWithHugeStridesIsFine) {
  Array z = Array::empty({0}, DType::Float64);
  Array v = z.view(z.data(), {0, int64_t(1) << 40}, {-(int64_t(1) << 59), int64_t(1) << 60});
  Array c = ops::copy(v);
  EXPECT_EQ(c.shape(), (Shape{0, int64_t(1) << 40}));
  ForeignLayout f;
  f.ptr = nullptr;
  f.dtype = DType::Complex128;
  f.shape = {int64_t(1) << 45, 0};
  f.byte_strides = {INT64_MIN / 2, INT64_MAX / 2};
  EXPECT_EQ(no_adopt_import(f).size(), 0);
}

// fuzz_dlpack: C-contiguous byte strides of a DLPack tensor without strides overflowed
// (element stride * itemsize) for a shape like (2, 2**60) of complex128.
TEST(FuzzRegressions, DLPackContiguousByteStridesThatOverflowAreRefused) {
  static char buf[16];
  int64_t shape[2] = {2, int64_t(1) << 60};
  dlpack::DLTensor t{};
  t.data = buf;
  t.device = {dlpack::kCPU, 0};
  t.ndim = 2;
  t.dtype = {dlpack::kComplex, 128, 1};
  t.shape = shape;
  t.strides = nullptr;
  EXPECT_EQ(kind_of([&] { interop::layout_of(t, false); }), ErrorKind::Value);
  int64_t empty[3] = {0, int64_t(1) << 62, int64_t(1) << 62};
  t.ndim = 3;
  t.shape = empty;
  EXPECT_EQ(kind_of([&] { interop::layout_of(t, false); }), ErrorKind::Value);
}

// fuzz_descriptor: the same overflow in buffer-protocol and __array_interface__ descriptors
// without strides (a size-0 shape whose byte strides overflow).
TEST(FuzzRegressions, BufferDescriptorContiguousByteStridesThatOverflowAreRefused) {
  static char buf[64];
  int64_t shape[3] = {0, int64_t(1) << 60, 4};  // 2**62 elements ignoring the 0, 2**65 bytes
  interop::BufferView v;
  v.buf = buf;
  v.len = 64;
  v.itemsize = 8;
  v.format = "d";
  v.ndim = 3;
  v.shape = shape;
  EXPECT_EQ(kind_of([&] { interop::layout_of_buffer(v, "test"); }), ErrorKind::Value);
  EXPECT_EQ(kind_of([&] {
              interop::layout_of_interface_buffer(DType::Complex128, false, {0, int64_t(1) << 60, 2}, std::nullopt, buf,
                                                  64, 0, false, "test");
            }),
            ErrorKind::Value);
}

// fuzz_dlpack: decide_copy read the bytes of a bool buffer (to refuse bytes other than 0/1)
// for a descriptor that addresses memory outside its producer's buffer (ASAN
// heap-buffer-overflow). Importing reads no data to decide anything: decide_copy is arithmetic
// only, and a bool buffer is shared whatever its bytes (kernels read byte != 0).
void no_delete(void*, void*, std::size_t) noexcept {}

TEST(FuzzRegressions, ImportingABoolBufferReadsNoData) {
  std::vector<unsigned char> bytes = {1, 0, 2, 1};  // 2: a uint8 byte seen as bool
  ForeignLayout f;
  f.ptr = bytes.data();
  f.dtype = DType::Bool;
  f.shape = {1 << 20};  // far beyond the 4-byte buffer: neither call may touch it
  f.byte_strides = {1};
  const auto d = interop::decide_copy(f, std::nullopt, std::nullopt, CopyMode::IfNeeded, "test");
  EXPECT_TRUE(d.share);
  auto adopt_bytes = [&] { return adopt(bytes.data(), bytes.size(), Device::cpu(), &no_delete, nullptr); };
  EXPECT_TRUE(interop::import_foreign(f, adopt_bytes, std::nullopt, std::nullopt, CopyMode::Never, "test").is_adopted());

  f.shape = {4};
  for (CopyMode mode : {CopyMode::IfNeeded, CopyMode::Never}) {
    Array a = interop::import_foreign(f, adopt_bytes, std::nullopt, std::nullopt, mode, "test");
    EXPECT_TRUE(a.is_adopted());
    EXPECT_EQ(a.data(), bytes.data());
    EXPECT_EQ(ops::reduce(ReduceOp::Sum, a, std::nullopt, false).data_as<int64_t>()[0], 3);
  }
}

}  // namespace
}  // namespace uma
