// Tests for the interop layer: the DLPack ABI (include/uma/interop/dlpack.h) pinned field by
// field against dlpack.h 1.x (REFERENCE.md, "DLPack C ABI"), the dtype mapping, export and
// layout_of, and the copy rules (DESIGN.md, "The copy rules") row by row through
// decide_copy and import_foreign.
#include <gtest/gtest.h>

#include <complex>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <optional>
#include <vector>

#include "uma/array.h"
#include "uma/error.h"
#include "uma/interop/copy_rules.h"
#include "uma/interop/dlpack.h"
#include "uma/interop/dlpack_io.h"
#include "uma/memory/allocator.h"
#include "uma/memory/cuda.h"

namespace uma {
namespace {

using interop::CopyMode;
using interop::ForeignLayout;
using namespace dlpack;

// Runs f and returns the ErrorKind of the uma::Error it throws (fails the test otherwise).
template <class F>
std::optional<ErrorKind> kind_of(F&& f) {
  try {
    f();
  } catch (const Error& e) {
    return e.kind();
  }
  return std::nullopt;
}

// ---- ABI layouts ------------------------------------------------------------------------

// Compile-time pins (a layout change breaks the build, not just a test).
static_assert(sizeof(Version) == 8 && offsetof(Version, major) == 0 && offsetof(Version, minor) == 4);
static_assert(sizeof(DLDevice) == 8 && offsetof(DLDevice, device_type) == 0 && offsetof(DLDevice, device_id) == 4);
static_assert(sizeof(DLDataType) == 4 && offsetof(DLDataType, code) == 0 && offsetof(DLDataType, bits) == 1 &&
              offsetof(DLDataType, lanes) == 2);
static_assert(sizeof(DLTensor) == 48);
static_assert(sizeof(DLManagedTensor) == 64);
static_assert(sizeof(DLManagedTensorVersioned) == 80);

TEST(DLPackABI, DLTensorFieldOffsets) {
  EXPECT_EQ(offsetof(DLTensor, data), 0u);
  EXPECT_EQ(offsetof(DLTensor, device), 8u);
  EXPECT_EQ(offsetof(DLTensor, ndim), 16u);
  EXPECT_EQ(offsetof(DLTensor, dtype), 20u);
  EXPECT_EQ(offsetof(DLTensor, shape), 24u);
  EXPECT_EQ(offsetof(DLTensor, strides), 32u);
  EXPECT_EQ(offsetof(DLTensor, byte_offset), 40u);
  EXPECT_EQ(sizeof(DLTensor), 48u);
  EXPECT_EQ(sizeof(DLTensor::byte_offset), 8u);
  EXPECT_EQ(sizeof(DLTensor::ndim), 4u);
}

TEST(DLPackABI, LegacyManagedTensorOffsets) {
  // Legacy: the tensor first, then manager context, then deleter; no version, no flags.
  EXPECT_EQ(offsetof(DLManagedTensor, dl_tensor), 0u);
  EXPECT_EQ(offsetof(DLManagedTensor, manager_ctx), 48u);
  EXPECT_EQ(offsetof(DLManagedTensor, deleter), 56u);
  EXPECT_EQ(sizeof(DLManagedTensor), 64u);
}

TEST(DLPackABI, VersionedManagedTensorOffsets) {
  // Versioned: version, manager context, deleter, uint64 flags, then the tensor.
  EXPECT_EQ(offsetof(DLManagedTensorVersioned, version), 0u);
  EXPECT_EQ(offsetof(DLManagedTensorVersioned, manager_ctx), 8u);
  EXPECT_EQ(offsetof(DLManagedTensorVersioned, deleter), 16u);
  EXPECT_EQ(offsetof(DLManagedTensorVersioned, flags), 24u);
  EXPECT_EQ(sizeof(DLManagedTensorVersioned::flags), 8u);
  EXPECT_EQ(offsetof(DLManagedTensorVersioned, dl_tensor), 32u);
  EXPECT_EQ(sizeof(DLManagedTensorVersioned), 80u);
}

TEST(DLPackABI, ConstantsMatchTheSpec) {
  EXPECT_EQ(kMajor, 1u);
  EXPECT_EQ(kFlagReadOnly, 1u);
  EXPECT_EQ(kFlagIsCopied, 2u);
  EXPECT_EQ(kFlagIsSubbytePadded, 4u);
  EXPECT_EQ(int(kCPU), 1);
  EXPECT_EQ(int(kCUDA), 2);
  EXPECT_EQ(int(kCUDAHost), 3);
  EXPECT_EQ(int(kROCM), 10);
  EXPECT_EQ(int(kROCMHost), 11);
  EXPECT_EQ(int(kCUDAManaged), 13);
  EXPECT_EQ(int(kInt), 0);
  EXPECT_EQ(int(kUInt), 1);
  EXPECT_EQ(int(kFloat), 2);
  EXPECT_EQ(int(kOpaqueHandle), 3);
  EXPECT_EQ(int(kBfloat), 4);
  EXPECT_EQ(int(kComplex), 5);
  EXPECT_EQ(int(kBool), 6);
}

// ---- dtype mapping ----------------------------------------------------------------------

struct DTypeRow {
  DType t;
  uint8_t code, bits;
};
const DTypeRow kDTypeRows[] = {
    {DType::Bool, kBool, 8},         {DType::Int8, kInt, 8},          {DType::Int16, kInt, 16},
    {DType::Int32, kInt, 32},        {DType::Int64, kInt, 64},        {DType::UInt8, kUInt, 8},
    {DType::UInt16, kUInt, 16},      {DType::UInt32, kUInt, 32},      {DType::UInt64, kUInt, 64},
    {DType::Float16, kFloat, 16},    {DType::BFloat16, kBfloat, 16},  {DType::Float32, kFloat, 32},
    {DType::Float64, kFloat, 64},    {DType::Complex64, kComplex, 64}, {DType::Complex128, kComplex, 128},
};

TEST(DLPackDType, EveryDTypeBothWays) {
  for (const auto& r : kDTypeRows) {
    DLDataType d = interop::to_dlpack_dtype(r.t);
    EXPECT_EQ(d.code, r.code) << dtype_name(r.t);
    EXPECT_EQ(d.bits, r.bits) << dtype_name(r.t);
    EXPECT_EQ(d.lanes, 1) << dtype_name(r.t);
    EXPECT_EQ(interop::from_dlpack_dtype({r.code, r.bits, 1}), r.t) << dtype_name(r.t);
  }
}

TEST(DLPackDType, UnrepresentableAreTypeErrors) {
  const DLDataType bad[] = {
      {kBool, 1, 1},   {kInt, 4, 1},     {kUInt, 1, 1},    {kUInt, 4, 1},    {kFloat, 8, 1},   {kFloat, 128, 1},
      {kBfloat, 32, 1}, {kComplex, 32, 1}, {kOpaqueHandle, 64, 1}, {kFloat, 32, 2}, {kFloat, 32, 0},
      {kInt, 8, 4},    {99, 32, 1},      {kInt, 128, 1},
  };
  for (const auto& d : bad)
    EXPECT_EQ(kind_of([&] { interop::from_dlpack_dtype(d); }), ErrorKind::Type)
        << int(d.code) << "/" << int(d.bits) << "/" << d.lanes;
  for (uint8_t code = 7; code <= 17; ++code)  // FP8 / FP6 / FP4 variants
    EXPECT_EQ(kind_of([&] { interop::from_dlpack_dtype({code, 8, 1}); }), ErrorKind::Type) << int(code);
}

// ---- export -----------------------------------------------------------------------------

Array iota_f32(const Shape& shape) {
  Array a = Array::empty(shape, DType::Float32);
  auto* p = static_cast<float*>(a.data());
  for (int64_t i = 0; i < a.size(); ++i) p[i] = static_cast<float>(i);
  return a;
}

TEST(DLPackExport, VersionedFieldsAndOwnership) {
  Array a = iota_f32({3, 4});
  Array t = a.view(static_cast<char*>(a.data()) + 4, {4, 3}, {1, 4});  // transposed, offset by one column
  const long before = a.storage().use_count();
  DLManagedTensorVersioned* m = interop::export_versioned(t, false, interop::dlpack_device_code(t));
  EXPECT_EQ(a.storage().use_count(), before + 1);  // the capsule keeps the storage alive
  EXPECT_EQ(m->version.major, kMajor);
  EXPECT_EQ(m->version.minor, kMinor);
  EXPECT_EQ(m->flags, 0u);
  EXPECT_EQ(m->dl_tensor.data, t.data());
  EXPECT_EQ(m->dl_tensor.byte_offset, 0u);
  EXPECT_EQ(m->dl_tensor.device.device_type, kCPU);
  EXPECT_EQ(m->dl_tensor.device.device_id, 0);
  ASSERT_EQ(m->dl_tensor.ndim, 2);
  ASSERT_NE(m->dl_tensor.strides, nullptr);  // always filled in
  EXPECT_EQ(m->dl_tensor.shape[0], 4);
  EXPECT_EQ(m->dl_tensor.shape[1], 3);
  EXPECT_EQ(m->dl_tensor.strides[0], 1);
  EXPECT_EQ(m->dl_tensor.strides[1], 4);
  EXPECT_EQ(m->dl_tensor.dtype.code, kFloat);
  ASSERT_NE(m->deleter, nullptr);
  m->deleter(m);
  EXPECT_EQ(a.storage().use_count(), before);
}

TEST(DLPackExport, FlagsAreTruthful) {
  Array a = iota_f32({2});
  Array ro(a.storage(), a.data(), a.shape(), a.strides(), a.dtype(), /*writable=*/false);
  auto* m1 = interop::export_versioned(ro, false, interop::dlpack_device_code(ro));
  EXPECT_EQ(m1->flags, kFlagReadOnly);
  auto* m2 = interop::export_versioned(a, true, interop::dlpack_device_code(a));
  EXPECT_EQ(m2->flags, kFlagIsCopied);
  auto* m3 = interop::export_versioned(ro, true, interop::dlpack_device_code(ro));
  EXPECT_EQ(m3->flags, kFlagReadOnly | kFlagIsCopied);
  m1->deleter(m1);
  m2->deleter(m2);
  m3->deleter(m3);
}

TEST(DLPackExport, SizeZeroHasNullDataAndZeroDHasNoShape) {
  Array e = Array::empty({0, 3}, DType::Int64);
  auto* m = interop::export_versioned(e, false, interop::dlpack_device_code(e));
  EXPECT_EQ(m->dl_tensor.data, nullptr);
  ASSERT_EQ(m->dl_tensor.ndim, 2);
  EXPECT_EQ(m->dl_tensor.shape[0], 0);
  EXPECT_NE(m->dl_tensor.strides, nullptr);
  m->deleter(m);
  Array s = Array::empty({}, DType::Float64);
  auto* l = interop::export_legacy(s, interop::dlpack_device_code(s));
  EXPECT_EQ(l->dl_tensor.ndim, 0);
  EXPECT_EQ(l->dl_tensor.data, s.data());
  EXPECT_EQ(l->dl_tensor.dtype.bits, 64);
  l->deleter(l);
}

// ---- layout_of (import side of a DLTensor) ----------------------------------------------

DLTensor tensor(void* data, std::vector<int64_t>& shape, int64_t* strides, DLDataType dt = {kFloat, 32, 1}) {
  DLTensor t{};
  t.data = data;
  t.device = {kCPU, 0};
  t.ndim = static_cast<int32_t>(shape.size());
  t.dtype = dt;
  t.shape = shape.empty() ? nullptr : shape.data();
  t.strides = strides;
  t.byte_offset = 0;
  return t;
}

TEST(DLPackLayout, NullStridesMeanCContiguousInBytes) {
  float buf[24];
  std::vector<int64_t> shape{2, 3, 4};
  ForeignLayout f = interop::layout_of(tensor(buf, shape, nullptr), false);
  EXPECT_EQ(f.byte_strides, (std::vector<int64_t>{48, 16, 4}));
  EXPECT_EQ(f.ptr, buf);
  EXPECT_EQ(f.dtype, DType::Float32);
}

TEST(DLPackLayout, StridesInElementsBecomeBytesAndByteOffsetIsAdded) {
  double buf[8];
  std::vector<int64_t> shape{3};
  int64_t strides[] = {-2};
  DLTensor t = tensor(buf, shape, strides, {kFloat, 64, 1});
  t.byte_offset = 40;
  ForeignLayout f = interop::layout_of(t, true);
  EXPECT_EQ(f.byte_strides, (std::vector<int64_t>{-16}));
  EXPECT_EQ(f.ptr, reinterpret_cast<char*>(buf) + 40);
  EXPECT_TRUE(f.readonly);
}

TEST(DLPackLayout, BadDescriptorsAreRejected) {
  float buf[4];
  std::vector<int64_t> neg{-1};
  EXPECT_EQ(kind_of([&] { interop::layout_of(tensor(buf, neg, nullptr), false); }), ErrorKind::Value);
  std::vector<int64_t> huge{int64_t(1) << 62, int64_t(1) << 62};
  EXPECT_EQ(kind_of([&] { interop::layout_of(tensor(buf, huge, nullptr), false); }), ErrorKind::Value);
  std::vector<int64_t> four{4};
  int64_t big_stride[] = {int64_t(1) << 62};  // * itemsize 4 overflows int64
  EXPECT_EQ(kind_of([&] { interop::layout_of(tensor(buf, four, big_stride), false); }), ErrorKind::Value);
  EXPECT_EQ(kind_of([&] { interop::layout_of(tensor(nullptr, four, nullptr), false); }), ErrorKind::Value);
  DLTensor t = tensor(buf, four, nullptr);
  t.ndim = -1;
  EXPECT_EQ(kind_of([&] { interop::layout_of(t, false); }), ErrorKind::Value);
  t = tensor(buf, four, nullptr);
  t.shape = nullptr;
  EXPECT_EQ(kind_of([&] { interop::layout_of(t, false); }), ErrorKind::Value);
  t = tensor(buf, four, nullptr);
  t.byte_offset = uint64_t(1) << 63;
  EXPECT_EQ(kind_of([&] { interop::layout_of(t, false); }), ErrorKind::Value);
  t = tensor(buf, four, nullptr);
  t.byte_offset = (uint64_t(1) << 63) - 1;  // data + byte_offset past 2**63: not an address
  EXPECT_EQ(kind_of([&] { interop::layout_of(t, false); }), ErrorKind::Value);
  t = tensor(reinterpret_cast<void*>(~uintptr_t(0) - 0xfff), four, nullptr);
  t.byte_offset = 0x2000;  // data + byte_offset wraps past 2**64 to 0x1000
  EXPECT_EQ(kind_of([&] { interop::layout_of(t, false); }), ErrorKind::Value);
  t = tensor(buf, four, nullptr);
  t.device = {99, 0};
  EXPECT_EQ(kind_of([&] { interop::layout_of(t, false); }), ErrorKind::Runtime);
  t = tensor(buf, four, nullptr, {kInt, 4, 1});
  EXPECT_EQ(kind_of([&] { interop::layout_of(t, false); }), ErrorKind::Type);
}

TEST(DLPackLayout, SizeZeroMayHaveNullDataAndPinnedHostIsCpu) {
  std::vector<int64_t> shape{0, 5};
  ForeignLayout f = interop::layout_of(tensor(nullptr, shape, nullptr), false);
  EXPECT_EQ(f.ptr, nullptr);
  float buf[2];
  std::vector<int64_t> two{2};
  DLTensor t = tensor(buf, two, nullptr);
  t.device = {kCUDAHost, 0};
  EXPECT_TRUE(interop::layout_of(t, false).device.is_cpu());
}

// ---- the copy rules, row by row ----------------------------------------------------------

ForeignLayout host_f64(void* p, Shape shape, std::vector<int64_t> byte_strides) {
  ForeignLayout f;
  f.ptr = p;
  f.dtype = DType::Float64;
  f.shape = std::move(shape);
  f.byte_strides = std::move(byte_strides);
  return f;
}

const CopyMode kModes[] = {CopyMode::IfNeeded, CopyMode::Never, CopyMode::Always};

TEST(DecideCopy, Row1SameDtypeAlignedSameDevice) {
  alignas(8) double buf[12] = {};
  for (const ForeignLayout& f : {host_f64(buf, {3, 4}, {32, 8}), host_f64(buf, {4, 3}, {8, 32}),
                                 host_f64(buf + 11, {12}, {-8}), host_f64(buf, {3, 4}, {0, 8}),
                                 host_f64(buf, {0}, {8}), host_f64(buf, {}, {})}) {
    for (auto dtype : {std::optional<DType>{}, std::optional<DType>{DType::Float64}})
      for (auto device : {std::optional<Device>{}, std::optional<Device>{Device::cpu()}}) {
        EXPECT_TRUE(interop::decide_copy(f, dtype, device, CopyMode::IfNeeded, "t").share);
        EXPECT_TRUE(interop::decide_copy(f, dtype, device, CopyMode::Never, "t").share);
        auto d = interop::decide_copy(f, dtype, device, CopyMode::Always, "t");
        EXPECT_FALSE(d.share);
      }
  }
}

TEST(DecideCopy, Row2ReadOnlySharesReadOnlyUnlessCopyTrue) {
  alignas(8) double buf[4] = {1, 2, 3, 4};
  ForeignLayout f = host_f64(buf, {4}, {8});
  f.readonly = true;
  int adopted = 0;
  auto adopt_fn = [&]() {
    ++adopted;
    return adopt(buf, sizeof(buf), Device::cpu(), nullptr, nullptr);
  };
  for (CopyMode m : {CopyMode::IfNeeded, CopyMode::Never}) {
    EXPECT_TRUE(interop::decide_copy(f, std::nullopt, std::nullopt, m, "t").share);
    Array a = interop::import_foreign(f, adopt_fn, std::nullopt, std::nullopt, m, "t");
    EXPECT_FALSE(a.writable());
    EXPECT_EQ(a.data(), buf);
  }
  EXPECT_EQ(adopted, 2);
  Array c = interop::import_foreign(f, adopt_fn, std::nullopt, std::nullopt, CopyMode::Always, "t");
  EXPECT_EQ(adopted, 2);  // the copy path never adopts
  EXPECT_TRUE(c.writable());
  EXPECT_NE(c.data(), buf);
  EXPECT_EQ(static_cast<double*>(c.data())[3], 4.0);
}

TEST(DecideCopy, Row3DtypeDiffersConvertsOrCopyError) {
  alignas(8) int32_t buf[3] = {1, -2, 16777217};
  ForeignLayout f;
  f.ptr = buf;
  f.dtype = DType::Int32;
  f.shape = {3};
  f.byte_strides = {4};
  auto d = interop::decide_copy(f, DType::Float32, std::nullopt, CopyMode::IfNeeded, "t");
  EXPECT_FALSE(d.share);
  EXPECT_NE(d.why_copy.find("differs"), std::string::npos);
  EXPECT_EQ(kind_of([&] { interop::decide_copy(f, DType::Float32, std::nullopt, CopyMode::Never, "t"); }),
            ErrorKind::Copy);
  EXPECT_FALSE(interop::decide_copy(f, DType::Float32, std::nullopt, CopyMode::Always, "t").share);
  // Same width, different dtype: values are converted, never reinterpreted.
  Array a = interop::import_foreign(f, [] { return DataPtr(); }, DType::Float32, std::nullopt, CopyMode::IfNeeded, "t");
  ASSERT_EQ(a.dtype(), DType::Float32);
  auto* p = static_cast<float*>(a.data());
  EXPECT_EQ(p[0], 1.0f);
  EXPECT_EQ(p[1], -2.0f);
  EXPECT_EQ(p[2], static_cast<float>(16777217));
}

TEST(DecideCopy, Row4ByteSwappedCopiesWithCorrectValues) {
  alignas(8) uint8_t buf[8] = {0, 0, 0, 1, 0, 0, 1, 0};  // big-endian int32 1 and 256
  ForeignLayout f;
  f.ptr = buf;
  f.dtype = DType::Int32;
  f.byteswapped = true;
  f.shape = {2};
  f.byte_strides = {4};
  EXPECT_FALSE(interop::decide_copy(f, std::nullopt, std::nullopt, CopyMode::IfNeeded, "t").share);
  EXPECT_EQ(kind_of([&] { interop::decide_copy(f, std::nullopt, std::nullopt, CopyMode::Never, "t"); }),
            ErrorKind::Copy);
  Array a = interop::import_foreign(f, [] { return DataPtr(); }, std::nullopt, std::nullopt, CopyMode::IfNeeded, "t");
  EXPECT_EQ(static_cast<int32_t*>(a.data())[0], 1);
  EXPECT_EQ(static_cast<int32_t*>(a.data())[1], 256);
}

TEST(DecideCopy, Row4ByteSwappedComplexSwapsEachPart) {
  std::complex<float> v(1.5f, -2.25f);
  uint8_t le[8], be[8];
  std::memcpy(le, &v, 8);
  for (int part = 0; part < 2; ++part)
    for (int j = 0; j < 4; ++j) be[part * 4 + j] = le[part * 4 + 3 - j];
  alignas(8) uint8_t buf[8];
  std::memcpy(buf, be, 8);
  ForeignLayout f;
  f.ptr = buf;
  f.dtype = DType::Complex64;
  f.byteswapped = true;
  f.shape = {1};
  f.byte_strides = {8};
  Array a = interop::import_foreign(f, [] { return DataPtr(); }, std::nullopt, std::nullopt, CopyMode::IfNeeded, "t");
  EXPECT_EQ(static_cast<std::complex<float>*>(a.data())[0], v);
}

TEST(DecideCopy, Row4UnalignedPointerOrStride) {
  alignas(8) uint8_t raw[80] = {};  // 8 doubles starting at raw + 1
  for (int i = 0; i < 8; ++i) {
    double v = i + 0.5;
    std::memcpy(raw + 1 + 8 * i, &v, 8);
  }
  ForeignLayout f = host_f64(raw + 1, {8}, {8});  // pointer not a multiple of 8
  EXPECT_NE(interop::decide_copy(f, std::nullopt, std::nullopt, CopyMode::IfNeeded, "t").why_copy.find("aligned"),
            std::string::npos);
  EXPECT_EQ(kind_of([&] { interop::decide_copy(f, std::nullopt, std::nullopt, CopyMode::Never, "t"); }),
            ErrorKind::Copy);
  Array a = interop::import_foreign(f, [] { return DataPtr(); }, std::nullopt, std::nullopt, CopyMode::IfNeeded, "t");
  EXPECT_EQ(static_cast<double*>(a.data())[7], 7.5);

  ForeignLayout g = host_f64(raw, {3}, {12});  // byte stride not a multiple of the itemsize
  EXPECT_NE(interop::decide_copy(g, std::nullopt, std::nullopt, CopyMode::IfNeeded, "t").why_copy.find("stride"),
            std::string::npos);
  EXPECT_EQ(kind_of([&] { interop::decide_copy(g, std::nullopt, std::nullopt, CopyMode::Never, "t"); }),
            ErrorKind::Copy);
  // Dimensions of size <= 1 do not care about their stride; an empty unaligned view shares.
  EXPECT_TRUE(interop::decide_copy(host_f64(raw, {1, 3}, {12, 8}), std::nullopt, std::nullopt, CopyMode::Never, "t").share);
  EXPECT_TRUE(interop::decide_copy(host_f64(raw + 1, {0}, {8}), std::nullopt, std::nullopt, CopyMode::Never, "t").share);
}

TEST(DecideCopy, Row5HostSourceCudaWanted) {
  alignas(8) double buf[2] = {};
  ForeignLayout f = host_f64(buf, {2}, {8});
  const Device cuda{DeviceType::CUDA, 0};
  auto d = interop::decide_copy(f, std::nullopt, cuda, CopyMode::IfNeeded, "t");
  EXPECT_FALSE(d.share);
  EXPECT_NE(d.why_copy.find("cuda:0"), std::string::npos);
  EXPECT_EQ(kind_of([&] { interop::decide_copy(f, std::nullopt, cuda, CopyMode::Never, "t"); }), ErrorKind::Copy);
  // Without a usable GPU (no CUDA in the build, no driver, no device) the importer itself
  // says the device is not available; with one it transfers (tests/cpp/cuda_test.cpp).
  if (cuda::is_available()) return;
  EXPECT_EQ(kind_of([&] {
              interop::import_foreign(f, [] { return DataPtr(); }, std::nullopt, cuda, CopyMode::IfNeeded, "t");
            }),
            ErrorKind::Runtime);
}

TEST(DecideCopy, Row6DeviceSourceHostWanted) {
  alignas(8) double buf[2] = {};
  ForeignLayout f = host_f64(buf, {2}, {8});
  f.device = {DeviceType::CUDA, 0};
  EXPECT_FALSE(interop::decide_copy(f, std::nullopt, Device::cpu(), CopyMode::IfNeeded, "t").share);
  EXPECT_EQ(kind_of([&] { interop::decide_copy(f, std::nullopt, Device::cpu(), CopyMode::Never, "t"); }),
            ErrorKind::Copy);
  EXPECT_FALSE(interop::decide_copy(f, std::nullopt, Device::cpu(), CopyMode::Always, "t").share);
}

TEST(ImportForeign, SharedViewKeepsNegativeAndZeroStridesAndAdoptsOnce) {
  alignas(8) double buf[6] = {0, 1, 2, 3, 4, 5};
  int adopted = 0;
  auto adopt_fn = [&]() {
    ++adopted;
    return adopt(buf, sizeof(buf), Device::cpu(), nullptr, nullptr);
  };
  ForeignLayout f = host_f64(buf + 5, {2, 3}, {0, -8});
  Array a = interop::import_foreign(f, adopt_fn, std::nullopt, std::nullopt, CopyMode::Never, "t");
  EXPECT_EQ(adopted, 1);
  EXPECT_TRUE(a.is_adopted());
  EXPECT_TRUE(a.writable());
  EXPECT_EQ(a.strides(), (Strides{0, -1}));
  EXPECT_EQ(a.data(), buf + 5);
  // The copy path gathers the same values in C order.
  Array c = interop::import_foreign(f, adopt_fn, std::nullopt, std::nullopt, CopyMode::Always, "t");
  EXPECT_EQ(adopted, 1);
  auto* p = static_cast<double*>(c.data());
  const double want[] = {5, 4, 3, 5, 4, 3};
  for (int i = 0; i < 6; ++i) EXPECT_EQ(p[i], want[i]) << i;
}

TEST(ImportForeign, OverflowingExtentIsRejectedBeforeAnything) {
  alignas(8) double buf[1] = {};
  int adopted = 0;
  ForeignLayout f = host_f64(buf, {3}, {int64_t(1) << 62});
  EXPECT_EQ(kind_of([&] {
              interop::import_foreign(f, [&] { ++adopted; return DataPtr(); }, std::nullopt, std::nullopt,
                                      CopyMode::IfNeeded, "t");
            }),
            ErrorKind::Value);
  EXPECT_EQ(adopted, 0);
  ForeignLayout g = host_f64(buf, {2}, {8, 8});  // strides and shape disagree
  EXPECT_EQ(kind_of([&] { interop::byte_extent(g.shape, g.byte_strides, 8); }), ErrorKind::Value);
  auto [lo, hi] = interop::byte_extent({3, 2}, {-16, 8}, 8);
  EXPECT_EQ(lo, -32);
  EXPECT_EQ(hi, 16);
}

TEST(ImportForeign, ElementsOutsideTheAddressSpaceAreRejected) {
  int adopted = 0;
  auto import = [&](ForeignLayout f) {
    return kind_of([&] {
      interop::import_foreign(f, [&] { ++adopted; return DataPtr(); }, std::nullopt, std::nullopt, CopyMode::IfNeeded,
                              "t");
    });
  };
  EXPECT_EQ(import(host_f64(reinterpret_cast<void*>(8), {3}, {-8})), ErrorKind::Value);  // reaches below 0
  EXPECT_EQ(import(host_f64(reinterpret_cast<void*>((uintptr_t(1) << 63) - 16), {3}, {8})), ErrorKind::Value);
  EXPECT_EQ(adopted, 0);
  // The same layouts inside the address space are views (nothing is read when sharing).
  EXPECT_NO_THROW(interop::address_extent(host_f64(reinterpret_cast<void*>(16), {3}, {-8}), "t"));
}

}  // namespace
}  // namespace uma
