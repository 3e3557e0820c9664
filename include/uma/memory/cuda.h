// uma/memory/cuda.h — the CUDA memory layer: availability, uma's streams, the device caching
// allocator, managed memory, host registration ("mapped") and host<->device transfers.
//
// Implemented in src/memory/cuda/ (built when nvcc is found) and src/memory/no_cuda/ (stubs:
// every call that needs a GPU raises RuntimeError "uma was built without CUDA support").
// Nothing here links libcuda or libcublas: the CUDA runtime is linked statically and reports
// a missing driver as an error, so `import uma` works on a machine without a GPU.
//
// Note [CUDA streams]
// uma issues all of its GPU work for device n on one non-blocking stream, stream(n). Work is
// ordered on that stream, so a block freed into the device cache may be handed out again at
// once to later work on the same stream (stream-ordered reuse). Every function here that
// returns host-visible results (copy_to_host, synchronize) waits for that stream first.
// DLPack consumers get the handshake of the Array API standard through stream_wait_for.
#pragma once
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "uma/memory/allocator.h"

namespace uma::cuda {

/// True when this build contains the CUDA code (nvcc was found at build time).
bool built_with_cuda() noexcept;
/// Number of usable GPUs: 0 without CUDA support, without a driver or without a GPU. Never throws.
int device_count() noexcept;
/// device_count() > 0.
bool is_available() noexcept;
/// Why no GPU is usable ("" when one is): no CUDA in the build, no driver, no device.
std::string unavailable_reason();
/// RuntimeError naming `api`, the device and the reason unless `d` is a usable cuda device.
void require(Device d, const char* api);

/// Waits for uma's stream on `device` and for the device (cudaDeviceSynchronize).
void synchronize(int device);
/// uma's stream on `device` (a cudaStream_t), created on first use (Note [CUDA streams]).
void* stream(int device);
/// Waits until the work queued on uma's stream of `device` has finished, if there is any
/// (one cudaStreamQuery when the stream is idle); does nothing when the stream was never
/// created, the device is not usable or the runtime is shutting down. Never throws. Used
/// before memory a producer lent (a DLPack import) goes back to it: the producer may reuse
/// it at once on its own stream (its caching allocator does), while uma's kernels still
/// read or write it — the hazard torch's Tensor.record_stream exists for.
void finish_stream_work(int device) noexcept;
/// DLPack handshake (Array API standard): make the consumer's stream wait for the work uma
/// queued on stream(device). `consumer`: 1 legacy default stream, 2 per-thread default
/// stream, > 2 a cudaStream_t; -1 means "no synchronisation" and does nothing. ValueError
/// for 0 or other negative values.
void stream_wait_for(int device, int64_t consumer);

/// The caching device allocator of `device` (policy: src/memory/cuda/device_allocator.h).
Allocator& device_allocator(int device);
/// active/cached/peak bytes of the device allocator (uma::memory_stats adds adopted_bytes:
/// foreign device and managed memory; registered host memory counts under "cpu", DESIGN.md).
MemoryStats memory_stats(int device);
/// Returns the device allocator's cached blocks to the driver.
void clear_cache(int device);

/// `nbytes` of managed (unified) memory, prefetch-free, not cached; memory_kind Managed.
DataPtr allocate_managed(std::size_t nbytes, int device);

/// Copies `n` bytes host -> device through the pinned staging pool (parallel host copies
/// into pinned chunks overlapped with asynchronous DMA). Returns when `dst` holds the bytes
/// and `src` may be reused. `src` may be pageable; `dst` any device or managed pointer.
void copy_to_device(void* dst, const void* src, std::size_t n, int device);
/// Copies `n` bytes device -> host through the staging pool; returns when `dst` holds them.
void copy_to_host(void* dst, const void* src, std::size_t n, int device);
/// Copies `n` bytes device -> device on stream(device) (asynchronous, stream-ordered).
void copy_on_device(void* dst, const void* src, std::size_t n, int device);

/// Adopts host memory as a Mapped DataPtr of cuda `device` (zero copies: kernels read it
/// over the bus). `host_owner` is the Adopted host DataPtr keeping the source alive (it alone
/// counts the bytes, under memory_stats("cpu").adopted_bytes). The registered range is
/// [base, base + base_nbytes), which must contain [ptr, ptr + nbytes); overlapping adoptions
/// share one registration by reference count (Note [Shared registrations] in
/// src/memory/cuda/registry.cpp). `readonly` registers read-only (needed for PROT_READ
/// mappings). On release the registration is dropped (unregistered exactly once, when its
/// last user goes), then host_owner is released. CopyError when the range cannot be
/// registered (it partly overlaps another registration, or the driver refuses); a failed
/// registration leaves no error state behind. `*gpu_readonly` is set when the GPU may only
/// read the range. The result's pointer is the device address of `ptr`.
DataPtr adopt_mapped(DataPtr host_owner, void* ptr, std::size_t nbytes, void* base, std::size_t base_nbytes,
                     bool readonly, int device, bool* gpu_readonly);
/// Number of live host registrations made by uma (tests).
std::size_t registration_count();

/// What a pointer is to the CUDA runtime.
enum class PointerKind { Unregistered, Host, Device, Managed };
/// Classifies `p` (Unregistered for any pointer CUDA does not know); `*device` gets its device.
PointerKind pointer_kind(const void* p, int* device);

/// Bytes copied host -> device (*h2d) and device -> host (*d2h) by copy_to_device /
/// copy_to_host for `device` since the process started (memory_stats of a cuda device).
void transfer_bytes(int device, int64_t* h2d, int64_t* d2h);

/// Pinned bytes held by the transfer staging pool (allocated at the first large transfer).
std::size_t staging_bytes();

// Note [Captured work]
// capture(device, work) records the GPU work that `work` queues for `device` into a CUDA
// graph instead of running it; Graph::launch then runs the whole recording on uma's stream
// with one call. While `work` runs, stream(device) returns a capture stream on the calling
// thread only (other threads keep uma's stream and run as usual), in the thread-local capture
// mode: work that cannot be recorded (a synchronisation, a host transfer, a device read-back)
// throws uma's RuntimeError before its first CUDA call (detail::refuse_capture), which fails
// the capture without a refused CUDA call; any other call CUDA refuses fails it too. Memory: allocations during `work` come from the device
// cache as usual (cudaMalloc runs at once, outside the recording), and every device block the
// thread frees during `work` is kept by the graph instead of cached, so no other array is
// ever given memory that a launch writes; the blocks go back to the cache when the Graph is
// destroyed. The arrays that `work` leaves alive (its results) stay the caller's: it keeps
// them while the graph lives, and must not hand their memory to anyone a launch could race.
// One capture at a time per device (a second thread waits). A launch is ordered after every
// earlier use of uma's stream, so inputs written there before launch() are read by it.
class Graph {
 public:
  Graph(const Graph&) = delete;
  Graph& operator=(const Graph&) = delete;
  ~Graph();
  /// Runs the recorded work on uma's stream of the graph's device (asynchronous).
  void launch() const;
  int device() const noexcept { return device_; }
  /// Bytes of device memory the graph keeps (blocks freed while it was recorded).
  std::size_t kept_bytes() const noexcept;

 private:
  friend std::shared_ptr<Graph> capture(int device, const std::function<void()>& work, std::string* why);
  Graph() = default;
  int device_ = -1;
  [[maybe_unused]] void* exec_ = nullptr;  // cudaGraphExec_t (unused by the stubs of a build without CUDA)
  std::vector<std::pair<void*, std::size_t>> kept_;      // device blocks (pointer, class size)
};

/// The graph of the work `work` queues for `device` (Note [Captured work]), or nullptr when
/// it cannot be recorded: `work` threw, or a call could not be recorded; `*why` (when given)
/// then says why. Nothing `work` queued has run either way.
std::shared_ptr<Graph> capture(int device, const std::function<void()>& work, std::string* why = nullptr);
/// True while the calling thread records work for `device` (inside capture's `work`).
bool capturing(int device) noexcept;

}  // namespace uma::cuda
