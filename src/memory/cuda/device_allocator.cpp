// The stream-ordered caching device allocator (policy: device_allocator.h).
#include "memory/cuda/device_allocator.h"

#include <bit>

#include "memory/cuda/cuda_check.h"

namespace uma::cuda {

namespace {
constexpr std::size_t kMiB = std::size_t(1) << 20;
}

DeviceCachingAllocator::DeviceCachingAllocator(int device, cudaStream_t stream) : device_(device), stream_(stream) {}

std::size_t DeviceCachingAllocator::size_class(std::size_t n) noexcept {
  if (n <= 512) return 512;
  if (n <= kMiB) return std::bit_ceil(n);
  return (n + 2 * kMiB - 1) / (2 * kMiB) * (2 * kMiB);
}

DataPtr DeviceCachingAllocator::allocate(std::size_t nbytes) {
  const std::size_t cls = size_class(nbytes);
  UMA_CHECK(cls >= nbytes, Memory, "cuda:", device_, ": allocation of ", nbytes, " bytes is too large");
  void* p = nullptr;
  {
    std::lock_guard<std::mutex> g(mu_);
    auto it = free_.find(cls);
    if (it != free_.end() && !it->second.empty()) {
      p = it->second.back();
      it->second.pop_back();
      cached_ -= static_cast<int64_t>(cls);
    }
  }
  if (!p) {
    detail::DeviceGuard g(device_);
    detail::RelaxCapture relax(device_);
    cudaError_t e = cudaMalloc(&p, cls);
    if (e == cudaErrorMemoryAllocation) {
      (void)cudaGetLastError();
      // Free-and-retry: wait for the device, give every cached block back, try once more.
      UMA_CUDA_CHECK(cudaDeviceSynchronize());
      clear_cache();
      e = cudaMalloc(&p, cls);
      if (e == cudaErrorMemoryAllocation) {
        (void)cudaGetLastError();
        UMA_FAIL(Memory, "out of memory on cuda:", device_, " allocating ", nbytes, " bytes");
      }
    }
    if (e != cudaSuccess) detail::fail(e, "cudaMalloc", __FILE__, __LINE__);
  }
  {
    std::lock_guard<std::mutex> g(mu_);
    active_ += static_cast<int64_t>(cls);
    if (active_ > peak_) peak_ = active_;
  }
  return DataPtr(p, cls, Device{DeviceType::CUDA, device_}, Origin::Pooled, &DeviceCachingAllocator::release, this,
                 MemoryKind::Device);
}

void DeviceCachingAllocator::release(void* ctx, void* ptr, std::size_t nbytes) noexcept {
  static_cast<DeviceCachingAllocator*>(ctx)->free_block(ptr, nbytes);
}

void DeviceCachingAllocator::free_block(void* ptr, std::size_t cls) noexcept {
  if (detail::keep_for_capture(device_, ptr, cls)) return;  // the graph being recorded owns it now
  give_back(ptr, cls);
}

void DeviceCachingAllocator::give_back(void* ptr, std::size_t cls) noexcept {
  std::lock_guard<std::mutex> g(mu_);
  active_ -= static_cast<int64_t>(cls);
  if (cls <= cache_limit_ && cached_ + static_cast<int64_t>(cls) > static_cast<int64_t>(cache_limit_))
    trim_locked(cache_limit_ - cls);
  if (cls <= cache_limit_) {
    try {
      free_[cls].push_back(ptr);
      cached_ += static_cast<int64_t>(cls);
      return;
    } catch (...) {
      // Bookkeeping failed to grow: fall through and free the block.
    }
  }
  int prev = -1;
  if (cudaGetDevice(&prev) != cudaSuccess) return;  // runtime shut down at process exit
  (void)cudaSetDevice(device_);
  (void)cudaFree(ptr);  // waits for the device: earlier work using the block has finished
  (void)cudaSetDevice(prev);
  (void)cudaGetLastError();
}

void DeviceCachingAllocator::trim_locked(std::size_t limit) noexcept {
  if (cached_ <= static_cast<int64_t>(limit)) return;
  int prev = -1;
  if (cudaGetDevice(&prev) != cudaSuccess) return;
  (void)cudaSetDevice(device_);
  for (auto it = free_.begin(); it != free_.end() && cached_ > static_cast<int64_t>(limit); ++it) {
    auto& v = it->second;
    while (!v.empty() && cached_ > static_cast<int64_t>(limit)) {
      (void)cudaFree(v.back());
      v.pop_back();
      cached_ -= static_cast<int64_t>(it->first);
    }
  }
  (void)cudaSetDevice(prev);
  (void)cudaGetLastError();
}

MemoryStats DeviceCachingAllocator::stats() const {
  std::lock_guard<std::mutex> g(mu_);
  MemoryStats s;
  s.active_bytes = active_;
  s.cached_bytes = cached_;
  s.peak_bytes = peak_;
  return s;
}

void DeviceCachingAllocator::clear_cache() {
  std::lock_guard<std::mutex> g(mu_);
  trim_locked(0);
}

void DeviceCachingAllocator::set_cache_limit(std::size_t bytes) {
  std::lock_guard<std::mutex> g(mu_);
  cache_limit_ = bytes;
  trim_locked(bytes);
}

}  // namespace uma::cuda
