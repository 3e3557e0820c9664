// Host registration for "mapped" cuda arrays (uma/memory/cuda.h, adopt_mapped).
//
// Note [Shared registrations]
// CUDA registers host memory by byte range and refuses any range that overlaps a registered
// one (a sub-range or the same range again included), and unregisters only by the exact base
// pointer (REFERENCE.md, "The GPU machine"). So uma keeps one registration per range in an
// interval map and shares it by reference count: an adoption whose range lies inside a live
// registration takes a reference to it; one that partly overlaps a live registration cannot
// be served (CopyError). The bindings widen a NumPy view's range to its base array's buffer,
// so views of one array and the same array adopted twice share one registration. The last
// release unregisters (exactly once) and only then releases the source.
// Registration goes through the driver API (cuMemHostRegister, fetched with
// cudaGetDriverEntryPointByVersion): a failure there leaves no sticky error in the runtime.
// A range is registered in chunks of kRegChunk bytes (REFERENCE.md: register in chunks), each
// its own driver registration; the mapped device address is the host address (UVA), so a
// kernel reads across chunk boundaries as through one range. A chunk that fails unregisters
// the chunks before it, and the adoption raises CopyError with nothing left registered.
#include <algorithm>
#include <map>
#include <mutex>

#include "memory/cuda/cuda_check.h"
#include "uma/memory/cuda.h"

namespace uma::cuda {

namespace {

// Driver API entry points (CUDA driver API, stable C ABI): CUresult is an int, 0 = success.
using RegisterFn = int (*)(void* p, std::size_t bytesize, unsigned int flags);
using UnregisterFn = int (*)(void* p);
constexpr unsigned kRegPortable = 0x01, kRegDeviceMap = 0x02, kRegReadOnly = 0x08;

struct Driver {
  RegisterFn reg = nullptr;
  UnregisterFn unreg = nullptr;
};

const Driver& driver() {
  static const Driver d = [] {
    Driver r;
    void* f = nullptr;
    cudaDriverEntryPointQueryResult q{};
    if (cudaGetDriverEntryPointByVersion("cuMemHostRegister", &f, 12000, cudaEnableDefault, &q) == cudaSuccess &&
        q == cudaDriverEntryPointSuccess)
      r.reg = reinterpret_cast<RegisterFn>(f);
    f = nullptr;
    if (cudaGetDriverEntryPointByVersion("cuMemHostUnregister", &f, 12000, cudaEnableDefault, &q) == cudaSuccess &&
        q == cudaDriverEntryPointSuccess)
      r.unreg = reinterpret_cast<UnregisterFn>(f);
    (void)cudaGetLastError();
    return r;
  }();
  return d;
}

constexpr std::size_t kRegChunk = std::size_t(256) << 20;

// Unregisters the chunks of [base, base + size) that start before base + upto.
void unregister_chunks(uintptr_t base, std::size_t size, std::size_t upto) noexcept {
  for (std::size_t off = 0; off < size && off < upto; off += kRegChunk)
    if (driver().unreg) driver().unreg(reinterpret_cast<void*>(base + off));
}

struct Registration {
  std::size_t size = 0;
  int refs = 0;
  int device = 0;
  bool readonly = false;
};

std::mutex g_mu;
std::map<uintptr_t, Registration> g_regs;  // base address -> registration

struct MappedCtx {
  uintptr_t base;
  DataPtr host_owner;
};

void drop_registration(uintptr_t base) noexcept {
  std::lock_guard<std::mutex> g(g_mu);
  auto it = g_regs.find(base);
  if (it == g_regs.end() || --it->second.refs > 0) return;
  const int device = it->second.device;
  const std::size_t size = it->second.size;
  g_regs.erase(it);
  int prev = -1;
  if (cudaGetDevice(&prev) != cudaSuccess) return;  // runtime shut down at process exit
  (void)cudaSetDevice(device);
  unregister_chunks(base, size, size);
  (void)cudaSetDevice(prev);
  (void)cudaGetLastError();
}

void mapped_release(void* ctx, void*, std::size_t) noexcept {
  auto* m = static_cast<MappedCtx*>(ctx);
  drop_registration(m->base);  // unregister before the source memory may be freed
  delete m;                    // releases host_owner: the foreign deleter runs once
}

}  // namespace

DataPtr adopt_mapped(DataPtr host_owner, void* ptr, std::size_t nbytes, void* base, std::size_t base_nbytes,
                     bool readonly, int device, bool* gpu_readonly) {
  require(Device{DeviceType::CUDA, device}, "asarray");
  const uintptr_t p = reinterpret_cast<uintptr_t>(ptr), b = reinterpret_cast<uintptr_t>(base);
  UMA_CHECK(b <= p && p + nbytes <= b + base_nbytes, Value, "adopt_mapped: range is outside its base allocation");
  stream(device);  // creates the primary context: the driver calls below need it current
  detail::DeviceGuard dg(device);
  std::lock_guard<std::mutex> g(g_mu);
  bool ro = false;
  uintptr_t key = 0;
  auto it = g_regs.upper_bound(p);
  if (it != g_regs.begin() && base_nbytes > 0) {
    auto prev = std::prev(it);
    if (prev->first <= p && p + nbytes <= prev->first + prev->second.size) {
      UMA_CHECK(prev->second.device == device, Copy, "asarray: copy=False is impossible: the memory is already "
                "registered for cuda:", prev->second.device);
      ++prev->second.refs;
      ro = prev->second.readonly;
      key = prev->first;
    }
  }
  if (key == 0 && base_nbytes > 0) {
    // Any live registration overlapping [b, b + base_nbytes)?
    auto lo = g_regs.upper_bound(b);
    if (lo != g_regs.begin()) --lo;
    for (; lo != g_regs.end() && lo->first < b + base_nbytes; ++lo)
      UMA_CHECK(lo->first + lo->second.size <= b, Copy, "asarray: copy=False is impossible: the host range ",
                "partly overlaps memory registered by another adoption (CUDA refuses overlapping registrations)");
    UMA_CHECK(driver().reg && driver().unreg, Copy, "asarray: copy=False is impossible: the CUDA driver offers no "
              "host registration (cuMemHostRegister)");
    const unsigned flags = kRegPortable | kRegDeviceMap | (readonly ? kRegReadOnly : 0u);
    for (std::size_t off = 0; off < base_nbytes; off += kRegChunk) {
      const std::size_t len = std::min(kRegChunk, base_nbytes - off);
      const int r = driver().reg(reinterpret_cast<void*>(b + off), len, flags);
      if (r != 0) {
        unregister_chunks(b, base_nbytes, off);
        UMA_FAIL(Copy, "asarray: copy=False is impossible: registering ", base_nbytes, " bytes of host memory for cuda:",
                 device, " failed at byte ", off, " (CUresult ", r, ")");
      }
    }
    g_regs[b] = Registration{base_nbytes, 1, device, readonly};
    ro = readonly;
    key = b;
  }
  void* dptr = ptr;
  if (nbytes > 0) {
    cudaError_t e = cudaHostGetDevicePointer(&dptr, ptr, 0);
    if (e != cudaSuccess) {
      (void)cudaGetLastError();
      dptr = ptr;  // UVA: the mapped device address equals the host address
    }
  }
  if (gpu_readonly) *gpu_readonly = ro;
  auto* ctx = new MappedCtx{key, std::move(host_owner)};
  return DataPtr(dptr, nbytes, Device{DeviceType::CUDA, device}, Origin::Adopted, &mapped_release, ctx,
                 MemoryKind::Mapped);
}

std::size_t registration_count() {
  std::lock_guard<std::mutex> g(g_mu);
  return g_regs.size();
}

}  // namespace uma::cuda
