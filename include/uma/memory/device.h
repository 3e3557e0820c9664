// uma/memory/device.h — where bytes live. Codes follow DLPack's DLDeviceType.
#pragma once
#include <cstdint>
#include <string>

namespace uma {

enum class DeviceType : int32_t { CPU = 1, CUDA = 2 };

/// How a device reaches an allocation's bytes (Python: `Array.memory_kind`).
///   Host    — ordinary host memory (a cpu array);
///   Device  — GPU memory (cudaMalloc, the default for a cuda array);
///   Managed — unified memory: CPU and GPU address the same pages (cudaMallocManaged);
///   Mapped  — registered host memory the GPU reads over the bus (cudaHostRegister).
enum class MemoryKind : unsigned char { Host, Device, Managed, Mapped };
const char* memory_kind_name(MemoryKind k) noexcept;

/// A device: type and ordinal. str(): "cpu" or "cuda:N".
struct Device {
  DeviceType type = DeviceType::CPU;
  int32_t index = 0;

  static Device cpu() { return {DeviceType::CPU, 0}; }
  bool is_cpu() const { return type == DeviceType::CPU; }
  std::string str() const;
  /// Parses "cpu", "cuda", "cuda:N"; throws ValueError on anything else.
  static Device parse(const std::string& s);
  friend bool operator==(const Device&, const Device&) = default;
};

}  // namespace uma
