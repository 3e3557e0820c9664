// uma/interop/dlpack.h — the DLPack C ABI (dlpack.h 1.x), our own definitions written from
// the spec (REFERENCE.md, "DLPack C ABI"). Frozen ABI: layouts are pinned by static_asserts
// here and by tests/cpp/interop_test.cpp.
//
// Ownership: whoever holds a DLManagedTensor(Versioned) pointer owns it and must call its
// `deleter` exactly once (which frees the struct too). A consumer takes ownership from a
// Python capsule by renaming it to "used_dltensor(_versioned)".
#pragma once
#include <cstddef>
#include <cstdint>

namespace uma::dlpack {

constexpr uint32_t kMajor = 1;
constexpr uint32_t kMinor = 1;

enum DeviceCode : int32_t { kCPU = 1, kCUDA = 2, kCUDAHost = 3, kROCM = 10, kROCMHost = 11, kCUDAManaged = 13 };
enum TypeCode : uint8_t { kInt = 0, kUInt = 1, kFloat = 2, kOpaqueHandle = 3, kBfloat = 4, kComplex = 5, kBool = 6 };
constexpr uint64_t kFlagReadOnly = 1ull << 0;
constexpr uint64_t kFlagIsCopied = 1ull << 1;
constexpr uint64_t kFlagIsSubbytePadded = 1ull << 2;

struct Version {
  uint32_t major;
  uint32_t minor;
};
struct DLDevice {
  int32_t device_type;
  int32_t device_id;
};
struct DLDataType {
  uint8_t code;
  uint8_t bits;
  uint16_t lanes;
};
struct DLTensor {
  void* data;
  DLDevice device;
  int32_t ndim;
  DLDataType dtype;
  int64_t* shape;
  int64_t* strides;  // in elements; may be NULL (C-contiguous) from producers before 1.2
  uint64_t byte_offset;
};
/// Legacy (unversioned) managed tensor: capsule name "dltensor".
struct DLManagedTensor {
  DLTensor dl_tensor;
  void* manager_ctx;
  void (*deleter)(DLManagedTensor* self);
};
/// Versioned managed tensor: capsule name "dltensor_versioned".
struct DLManagedTensorVersioned {
  Version version;
  void* manager_ctx;
  void (*deleter)(DLManagedTensorVersioned* self);
  uint64_t flags;
  DLTensor dl_tensor;
};

static_assert(sizeof(DLDevice) == 8 && sizeof(DLDataType) == 4);
static_assert(offsetof(DLTensor, data) == 0 && offsetof(DLTensor, device) == 8 && offsetof(DLTensor, ndim) == 16 &&
              offsetof(DLTensor, dtype) == 20 && offsetof(DLTensor, shape) == 24 && offsetof(DLTensor, strides) == 32 &&
              offsetof(DLTensor, byte_offset) == 40 && sizeof(DLTensor) == 48);
static_assert(offsetof(DLManagedTensor, manager_ctx) == 48 && offsetof(DLManagedTensor, deleter) == 56 &&
              sizeof(DLManagedTensor) == 64);
static_assert(offsetof(DLManagedTensorVersioned, manager_ctx) == 8 && offsetof(DLManagedTensorVersioned, deleter) == 16 &&
              offsetof(DLManagedTensorVersioned, flags) == 24 && offsetof(DLManagedTensorVersioned, dl_tensor) == 32 &&
              sizeof(DLManagedTensorVersioned) == 80);

}  // namespace uma::dlpack
