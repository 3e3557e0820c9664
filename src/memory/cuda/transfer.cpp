// Host <-> device copies through a pool of pinned staging buffers (uma/memory/cuda.h).
//
// Note [Staging pipeline]
// A pageable host buffer cannot be read by the copy engine directly; the driver would stage
// it through its own small pinned buffers at 7-9 GB/s (REFERENCE.md). uma stages it itself:
// the transfer is cut into chunks (at most kChunk bytes: plan_of); chunk i is copied by all
// host threads (OpenMP) into pinned slot i % kSlots while the DMA of chunk i-1 runs, and the slot is
// reused only after the event recorded behind its DMA has completed. Device -> host runs the
// same pipeline backwards: up to kSlots DMAs are in flight while the host threads empty the
// oldest slot into the destination. Sources or destinations that are already page-locked
// (pinned or registered) are copied by one DMA. The pool (kSlots * kChunk bytes of pinned
// memory) is allocated at the first large transfer and kept; transfers take its mutex.
//
// Note [Fresh destinations]
// A device -> host copy usually lands in memory just allocated for the result, whose pages
// the kernel maps (and zeroes) at their first write. Left to the copy, those faults happen
// inside the 1 MiB memcpy pieces: with transparent huge pages two threads meet on each 2 MiB
// page and one zeroes it alone, which halved the rate (H200 host, 16 threads, 4 GiB: 15 GB/s).
// When the destination's first page is not resident (mincore), every thread first writes
// one byte per page of its own whole 2 MiB pieces, then the pipeline runs: measured 58 GB/s
// for the touch and about 29 GB/s for the whole copy, the bound of writing the memory twice
// (zeroing, then the data). A destination that is already resident (a block reused from the
// host allocator's cache, an existing array) skips the touch and runs at the DMA rate.
#include <omp.h>
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <bit>
#include <atomic>
#include <cstring>
#include <mutex>

#include "memory/cuda/cuda_check.h"
#include "uma/memory/cuda.h"
#include "uma/threads.h"

namespace uma::cuda {

namespace {

constexpr std::size_t kChunk = std::size_t(16) << 20;
constexpr int kSlots = 4;
constexpr std::size_t kDirect = std::size_t(256) << 10;  // below this: one driver-staged copy
constexpr std::size_t kPrefault = std::size_t(4) << 20;  // from here: Note [Fresh destinations]

struct StagingPool {
  std::mutex mu;
  void* slot[kSlots] = {};
  detail::Event* done[kSlots] = {};  // leaked with the pool (process lifetime)
  bool ready = false;

  void init() {
    if (ready) return;
    for (int i = 0; i < kSlots; ++i) {
      UMA_CUDA_CHECK(cudaHostAlloc(&slot[i], kChunk, cudaHostAllocPortable));
      done[i] = new detail::Event();
    }
    ready = true;
  }
};

StagingPool& pool() {
  static StagingPool* p = new StagingPool();  // leaked: used until process exit
  return *p;
}

// The pipeline's plan for an n-byte transfer (Note [Staging pipeline]): chunks of a quarter of
// the transfer, a power of two between 1 MiB and kChunk, so that even a 4 MiB copy overlaps
// host copies with DMA; each chunk copied by the host threads in pieces of an eighth of it
// (64 KiB to 512 KiB), or 1 MiB for full chunks. Measured on the H200 host (16 threads,
// pageable source, GB/s host->device / device->host): 4 MiB 22 / 24 (one 16 MiB chunk in
// 1 MiB pieces: 18 / 18), 16 MiB 28 / 45 (23 / 23), 64 MiB 41 / 50 (41 / 47).
struct Plan {
  std::size_t chunk, piece;
};
Plan plan_of(std::size_t n) {
  constexpr std::size_t kMiB = std::size_t(1) << 20;
  const std::size_t chunk = std::clamp(std::bit_floor(n / 4), kMiB, kChunk);
  const std::size_t piece = chunk == kChunk ? kMiB : std::clamp(chunk / 8, std::size_t(64) << 10, std::size_t(512) << 10);
  return {chunk, piece};
}

// Copies n bytes with the host threads the thread policy gives (uma/threads.h), `piece` bytes at
// a time.
void parallel_memcpy(void* dst, const void* src, std::size_t n, std::size_t piece) {
  if (n <= piece) {
    std::memcpy(dst, src, n);
    return;
  }
  const int64_t pieces = static_cast<int64_t>((n + piece - 1) / piece);
#pragma omp parallel for schedule(static) num_threads(threads::for_work(pieces, 1))
  for (int64_t i = 0; i < pieces; ++i) {
    const std::size_t off = static_cast<std::size_t>(i) * piece;
    std::memcpy(static_cast<char*>(dst) + off, static_cast<const char*>(src) + off, std::min(piece, n - off));
  }
}

// Whether the page holding p is resident (mapped); false when mincore refuses the range.
bool page_resident(const void* p) {
  const auto page = static_cast<uintptr_t>(sysconf(_SC_PAGESIZE));
  unsigned char v = 0;
  void* base = reinterpret_cast<void*>(reinterpret_cast<uintptr_t>(p) & ~(page - 1));
  return mincore(base, 1, &v) == 0 && (v & 1) != 0;
}

// Maps the pages of [dst, dst + n) by writing a zero byte into each, every thread taking whole
// 2 MiB-aligned pieces (Note [Fresh destinations]). Only for memory about to be overwritten.
void prefault(void* dst, std::size_t n) {
  constexpr std::size_t kPiece = std::size_t(2) << 20, kPage = 4096;
  char* const lo = static_cast<char*>(dst);
  char* const hi = lo + n;
  const uintptr_t first = reinterpret_cast<uintptr_t>(lo) & ~(kPiece - 1);
  const int64_t pieces = static_cast<int64_t>((reinterpret_cast<uintptr_t>(hi) - first + kPiece - 1) / kPiece);
#pragma omp parallel for schedule(static) num_threads(threads::for_work(pieces, 1))
  for (int64_t i = 0; i < pieces; ++i) {
    char* a = std::max(lo, reinterpret_cast<char*>(first + static_cast<uintptr_t>(i) * kPiece));
    char* b = std::min(hi, reinterpret_cast<char*>(first + static_cast<uintptr_t>(i + 1) * kPiece));
    for (char* q = a; q < b; q = reinterpret_cast<char*>((reinterpret_cast<uintptr_t>(q) + kPage) & ~(kPage - 1)))
      *reinterpret_cast<volatile char*>(q) = 0;
  }
}

bool page_locked(const void* p) {
  int dev = -1;
  return pointer_kind(p, &dev) == PointerKind::Host;
}

constexpr int kMaxDevices = 64;
std::atomic<int64_t> g_h2d[kMaxDevices], g_d2h[kMaxDevices];

void count(std::atomic<int64_t>* counters, int device, std::size_t n) {
  if (device >= 0 && device < kMaxDevices) counters[device].fetch_add(static_cast<int64_t>(n), std::memory_order_relaxed);
}

}  // namespace

void transfer_bytes(int device, int64_t* h2d, int64_t* d2h) {
  const bool ok = device >= 0 && device < kMaxDevices;
  *h2d = ok ? g_h2d[device].load(std::memory_order_relaxed) : 0;
  *d2h = ok ? g_d2h[device].load(std::memory_order_relaxed) : 0;
}

void copy_to_device(void* dst, const void* src, std::size_t n, int device) {
  if (n == 0) return;
  detail::refuse_capture(device, "a host-to-device copy");
  count(g_h2d, device, n);
  cudaStream_t s = static_cast<cudaStream_t>(stream(device));
  detail::DeviceGuard g(device);
  if (n <= kDirect || page_locked(src)) {
    UMA_CUDA_CHECK(cudaMemcpyAsync(dst, src, n, cudaMemcpyDefault, s));
    UMA_CUDA_CHECK(cudaStreamSynchronize(s));
    return;
  }
  StagingPool& p = pool();
  std::lock_guard<std::mutex> lock(p.mu);
  p.init();
  const Plan sh = plan_of(n);
  bool used[kSlots] = {};
  std::size_t i = 0;
  for (std::size_t off = 0; off < n; off += sh.chunk, ++i) {
    const int k = static_cast<int>(i % kSlots);
    const std::size_t len = std::min(sh.chunk, n - off);
    if (used[k]) UMA_CUDA_CHECK(cudaEventSynchronize(p.done[k]->get()));
    parallel_memcpy(p.slot[k], static_cast<const char*>(src) + off, len, sh.piece);
    UMA_CUDA_CHECK(cudaMemcpyAsync(static_cast<char*>(dst) + off, p.slot[k], len, cudaMemcpyDefault, s));
    UMA_CUDA_CHECK(cudaEventRecord(p.done[k]->get(), s));
    used[k] = true;
  }
  UMA_CUDA_CHECK(cudaStreamSynchronize(s));
}

void copy_to_host(void* dst, const void* src, std::size_t n, int device) {
  if (n == 0) return;
  detail::refuse_capture(device, "a device-to-host copy");
  count(g_d2h, device, n);
  cudaStream_t s = static_cast<cudaStream_t>(stream(device));
  detail::DeviceGuard g(device);
  if (n <= kDirect || page_locked(dst)) {
    UMA_CUDA_CHECK(cudaMemcpyAsync(dst, src, n, cudaMemcpyDefault, s));
    UMA_CUDA_CHECK(cudaStreamSynchronize(s));
    return;
  }
  if (n >= kPrefault && !page_resident(dst)) prefault(dst, n);
  StagingPool& p = pool();
  std::lock_guard<std::mutex> lock(p.mu);
  p.init();
  const Plan sh = plan_of(n);
  const std::size_t chunks = (n + sh.chunk - 1) / sh.chunk;
  auto issue = [&](std::size_t c) {
    const int k = static_cast<int>(c % kSlots);
    const std::size_t off = c * sh.chunk, len = std::min(sh.chunk, n - off);
    UMA_CUDA_CHECK(cudaMemcpyAsync(p.slot[k], static_cast<const char*>(src) + off, len, cudaMemcpyDefault, s));
    UMA_CUDA_CHECK(cudaEventRecord(p.done[k]->get(), s));
  };
  for (std::size_t c = 0; c < chunks && c < static_cast<std::size_t>(kSlots); ++c) issue(c);
  for (std::size_t c = 0; c < chunks; ++c) {
    const int k = static_cast<int>(c % kSlots);
    const std::size_t off = c * sh.chunk, len = std::min(sh.chunk, n - off);
    UMA_CUDA_CHECK(cudaEventSynchronize(p.done[k]->get()));
    parallel_memcpy(static_cast<char*>(dst) + off, p.slot[k], len, sh.piece);
    if (c + kSlots < chunks) issue(c + kSlots);
  }
}

void copy_on_device(void* dst, const void* src, std::size_t n, int device) {
  if (n == 0) return;
  cudaStream_t s = static_cast<cudaStream_t>(stream(device));
  detail::DeviceGuard g(device);
  UMA_CUDA_CHECK(cudaMemcpyAsync(dst, src, n, cudaMemcpyDefault, s));
}

std::size_t staging_bytes() {
  StagingPool& p = pool();
  std::lock_guard<std::mutex> lock(p.mu);
  return p.ready ? kSlots * kChunk : 0;
}

}  // namespace uma::cuda
