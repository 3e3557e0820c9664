#include "uma/memory/device.h"

#include "uma/error.h"

namespace uma {

const char* memory_kind_name(MemoryKind k) noexcept {
  switch (k) {
    case MemoryKind::Host: return "host";
    case MemoryKind::Device: return "device";
    case MemoryKind::Managed: return "managed";
    case MemoryKind::Mapped: return "mapped";
  }
  return "host";
}

std::string Device::str() const {
  if (type == DeviceType::CPU) return "cpu";
  return "cuda:" + std::to_string(index);
}

Device Device::parse(const std::string& s) {
  if (s == "cpu" || s == "cpu:0") return cpu();  // one host device, index 0 (as torch spells it)
  if (s == "cuda") return {DeviceType::CUDA, 0};
  if (s.rfind("cuda:", 0) == 0 && s.size() > 5) {
    int idx = 0;
    for (size_t i = 5; i < s.size(); ++i) {
      UMA_CHECK(s[i] >= '0' && s[i] <= '9' && idx < 100000, Value, "invalid device string '", s, "'");
      idx = idx * 10 + (s[i] - '0');
    }
    return {DeviceType::CUDA, idx};
  }
  UMA_FAIL(Value, "invalid device string '", s, "' (expected 'cpu', 'cpu:0', 'cuda' or 'cuda:N')");
}

}  // namespace uma
