// CUDA availability, devices, uma's streams, the per-device allocators, managed memory and
// the DLPack stream handshake (uma/memory/cuda.h).
#include <array>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "memory/cuda/cuda_check.h"
#include "memory/cuda/device_allocator.h"
#include "uma/memory/cuda.h"

namespace uma::cuda {

namespace detail {

void fail(cudaError_t e, const char* call, const char* file, int line) {
  (void)cudaGetLastError();  // clear the (non-sticky) last error
  const std::string msg = uma::detail::cat("CUDA call ", call, " failed: ", cudaGetErrorName(e), " (",
                                           cudaGetErrorString(e), ") at ", file, ":", line);
  if (e == cudaErrorMemoryAllocation) throw Error(ErrorKind::Memory, msg);
  throw Error(ErrorKind::Runtime, msg);
}

DeviceGuard::DeviceGuard(int device) {
  UMA_CUDA_CHECK(cudaGetDevice(&prev_));
  if (prev_ != device) UMA_CUDA_CHECK(cudaSetDevice(device));
}
DeviceGuard::~DeviceGuard() {
  int cur = -1;
  if (prev_ >= 0 && cudaGetDevice(&cur) == cudaSuccess && cur != prev_) (void)cudaSetDevice(prev_);
}

Event::Event() { UMA_CUDA_CHECK(cudaEventCreateWithFlags(&ev_, cudaEventDisableTiming)); }
Event::~Event() {
  if (ev_) (void)cudaEventDestroy(ev_);
}

}  // namespace detail

namespace {

constexpr int kMaxDevices = 64;

struct Probe {
  int count = 0;
  std::string reason;
};

const Probe& probe() {
  static const Probe p = [] {
    Probe r;
    int n = 0;
    cudaError_t e = cudaGetDeviceCount(&n);
    if (e != cudaSuccess) {
      (void)cudaGetLastError();
      if (e == cudaErrorNoDevice)
        r.reason = "no CUDA GPU was found";
      else if (e == cudaErrorInsufficientDriver)
        r.reason = uma::detail::cat("the NVIDIA driver (libcuda.so.1) is missing or older than the CUDA ",
                                    CUDART_VERSION / 1000, ".", CUDART_VERSION % 1000 / 10,
                                    " runtime uma was built with");
      else
        r.reason = uma::detail::cat("the CUDA runtime could not start (", cudaGetErrorName(e), ": ",
                                    cudaGetErrorString(e), ")");
      return r;
    }
    if (n == 0) r.reason = "no CUDA GPU was found";
    r.count = n < kMaxDevices ? n : kMaxDevices;
    return r;
  }();
  return p;
}

struct PerDevice {
  std::once_flag once;
  cudaStream_t stream = nullptr;
  DeviceCachingAllocator* alloc = nullptr;
  std::mutex capture_mu;                 // one recording at a time (Note [Captured work])
  cudaStream_t capture_stream = nullptr;  // created at the first recording, under capture_mu
};
std::array<PerDevice, kMaxDevices> g_dev;

PerDevice& per_device(int device) {
  require(Device{DeviceType::CUDA, device}, "cuda");
  PerDevice& d = g_dev[static_cast<std::size_t>(device)];
  std::call_once(d.once, [&] {
    detail::DeviceGuard g(device);
    UMA_CUDA_CHECK(cudaStreamCreateWithFlags(&d.stream, cudaStreamNonBlocking));
    // Leaked on purpose: arrays may be released during static destruction.
    d.alloc = new DeviceCachingAllocator(device, d.stream);
  });
  return d;
}

void managed_release(void* ctx, void* ptr, std::size_t) noexcept {
  const int device = static_cast<int>(reinterpret_cast<intptr_t>(ctx));
  int prev = -1;
  if (cudaGetDevice(&prev) != cudaSuccess) return;  // runtime already shut down at exit
  (void)cudaSetDevice(device);
  (void)cudaFree(ptr);
  (void)cudaSetDevice(prev);
  (void)cudaGetLastError();
}

}  // namespace

bool built_with_cuda() noexcept { return true; }
int device_count() noexcept { return probe().count; }
bool is_available() noexcept { return probe().count > 0; }
std::string unavailable_reason() { return probe().reason; }

void require(Device d, const char* api) {
  UMA_CHECK(d.type == DeviceType::CUDA, Runtime, api, ": ", d.str(), " is not a cuda device");
  const Probe& p = probe();
  UMA_CHECK(p.count > 0, Runtime, api, ": device ", d.str(), " is not available: ", p.reason);
  UMA_CHECK(d.index >= 0 && d.index < p.count, Runtime, api, ": device ", d.str(), " does not exist (",
            p.count, " CUDA device(s) found)");
}

// The recording the calling thread makes (Note [Captured work]), or null.
struct CaptureState {
  int device;
  cudaStream_t stream;
  std::vector<std::pair<void*, std::size_t>> kept;  // blocks freed while recording
  bool lost_block = false;  // a freed block could not be kept: the graph must not be used
};
thread_local CaptureState* t_capture = nullptr;

void* stream(int device) {
  if (CaptureState* c = t_capture; c != nullptr && c->device == device) return c->stream;
  return per_device(device).stream;
}

bool capturing(int device) noexcept {
  const CaptureState* c = t_capture;
  return c != nullptr && c->device == device;
}

namespace detail {

bool keep_for_capture(int device, void* ptr, std::size_t cls) noexcept {
  CaptureState* c = t_capture;
  if (c == nullptr || c->device != device) return false;
  try {
    c->kept.emplace_back(ptr, cls);
    return true;
  } catch (...) {
    c->lost_block = true;  // cached as usual; the recording is thrown away
    return false;
  }
}

void refuse_capture(int device, const char* what) {
  UMA_CHECK(!capturing(device), Runtime, what, " waits for cuda:", device, ", which a CUDA graph cannot record");
}

RelaxCapture::RelaxCapture(int device) noexcept : active_(capturing(device)) {
  if (!active_) return;
  cudaStreamCaptureMode m = cudaStreamCaptureModeRelaxed;
  if (cudaThreadExchangeStreamCaptureMode(&m) == cudaSuccess) {
    mode_ = static_cast<int>(m);
  } else {
    active_ = false;
    (void)cudaGetLastError();
  }
}

RelaxCapture::~RelaxCapture() {
  if (!active_) return;
  auto m = static_cast<cudaStreamCaptureMode>(mode_);
  (void)cudaThreadExchangeStreamCaptureMode(&m);
}

}  // namespace detail

std::shared_ptr<Graph> capture(int device, const std::function<void()>& work, std::string* why) {
  PerDevice& d = per_device(device);
  UMA_CHECK(t_capture == nullptr, Runtime, "cuda:", device, ": a graph is already being recorded on this thread");
  std::lock_guard<std::mutex> lock(d.capture_mu);
  detail::DeviceGuard g(device);
  if (d.capture_stream == nullptr) UMA_CUDA_CHECK(cudaStreamCreateWithFlags(&d.capture_stream, cudaStreamNonBlocking));
  CaptureState st{device, d.capture_stream, {}, false};
  UMA_CUDA_CHECK(cudaStreamBeginCapture(st.stream, cudaStreamCaptureModeThreadLocal));
  std::string error;
  t_capture = &st;
  try {
    work();
  } catch (const std::exception& e) {
    error = e.what();
  } catch (...) {
    error = "an unknown exception";
  }
  t_capture = nullptr;
  cudaGraph_t graph = nullptr;
  const cudaError_t ended = cudaStreamEndCapture(st.stream, &graph);
  (void)cudaGetLastError();
  cudaGraphExec_t exec = nullptr;
  if (error.empty() && ended == cudaSuccess && graph != nullptr && !st.lost_block) {
    const cudaError_t e = cudaGraphInstantiate(&exec, graph, 0);
    if (e != cudaSuccess) {
      exec = nullptr;
      error = uma::detail::cat("cudaGraphInstantiate: ", cudaGetErrorString(e));
      (void)cudaGetLastError();
    }
  } else if (error.empty()) {
    error = st.lost_block ? std::string("a freed block could not be kept")
                          : uma::detail::cat("cudaStreamEndCapture: ", cudaGetErrorString(ended));
  }
  if (graph != nullptr) (void)cudaGraphDestroy(graph);
  if (exec == nullptr) {
    for (const auto& [p, n] : st.kept) d.alloc->give_back(p, n);  // recorded work never ran
    if (why) *why = error;
    return nullptr;
  }
  std::shared_ptr<Graph> out(new Graph());
  out->device_ = device;
  out->exec_ = exec;
  out->kept_ = std::move(st.kept);
  return out;
}

Graph::~Graph() {
  int prev = -1;
  if (cudaGetDevice(&prev) != cudaSuccess) {  // runtime shut down at process exit
    (void)cudaGetLastError();
    return;
  }
  if (prev != device_) (void)cudaSetDevice(device_);
  (void)cudaGraphExecDestroy(static_cast<cudaGraphExec_t>(exec_));  // a launch in flight still completes
  (void)cudaGetLastError();
  if (prev != device_) (void)cudaSetDevice(prev);
  // Later work on uma's stream runs after the graph's last launch: stream-ordered reuse.
  DeviceCachingAllocator* a = g_dev[static_cast<std::size_t>(device_)].alloc;
  for (const auto& [p, n] : kept_) a->give_back(p, n);
}

void Graph::launch() const {
  PerDevice& d = per_device(device_);
  detail::DeviceGuard g(device_);
  UMA_CUDA_CHECK(cudaGraphLaunch(static_cast<cudaGraphExec_t>(exec_), d.stream));
}

std::size_t Graph::kept_bytes() const noexcept {
  std::size_t n = 0;
  for (const auto& [p, c] : kept_) n += c;
  return n;
}

void finish_stream_work(int device) noexcept {
  if (device < 0 || device >= kMaxDevices || device >= probe().count) return;
  PerDevice& d = g_dev[static_cast<std::size_t>(device)];
  cudaStream_t s = d.stream;  // set once under call_once; null: never created, nothing queued
  if (s == nullptr) return;
  int prev = -1;
  if (cudaGetDevice(&prev) != cudaSuccess) {  // runtime shut down at process exit
    (void)cudaGetLastError();
    return;
  }
  if (prev != device) (void)cudaSetDevice(device);
  if (cudaStreamQuery(s) == cudaErrorNotReady) (void)cudaStreamSynchronize(s);
  if (prev != device) (void)cudaSetDevice(prev);
  (void)cudaGetLastError();
}

void synchronize(int device) {
  detail::refuse_capture(device, "synchronize");
  PerDevice& d = per_device(device);
  detail::DeviceGuard g(device);
  UMA_CUDA_CHECK(cudaStreamSynchronize(d.stream));
  UMA_CUDA_CHECK(cudaDeviceSynchronize());
}

void stream_wait_for(int device, int64_t consumer) {
  if (consumer == -1) return;
  UMA_CHECK(consumer > 0, Value, "__dlpack__: stream ", consumer,
            " is not allowed for CUDA (Array API standard: None, -1, 1, 2 or a stream pointer)");
  PerDevice& d = per_device(device);
  detail::DeviceGuard g(device);
  cudaStream_t s = consumer == 1   ? cudaStreamLegacy
                   : consumer == 2 ? cudaStreamPerThread
                                   : reinterpret_cast<cudaStream_t>(static_cast<intptr_t>(consumer));
  if (s == d.stream) return;
  detail::Event ev;
  UMA_CUDA_CHECK(cudaEventRecord(ev.get(), d.stream));
  UMA_CUDA_CHECK(cudaStreamWaitEvent(s, ev.get(), 0));
  // Destroying an event that a stream still waits on is allowed: the wait keeps its state.
}

Allocator& device_allocator(int device) { return *per_device(device).alloc; }

MemoryStats memory_stats(int device) { return per_device(device).alloc->stats(); }

void clear_cache(int device) { per_device(device).alloc->clear_cache(); }

DataPtr allocate_managed(std::size_t nbytes, int device) {
  per_device(device);
  detail::DeviceGuard g(device);
  void* p = nullptr;
  UMA_CUDA_CHECK(cudaMallocManaged(&p, nbytes ? nbytes : 1, cudaMemAttachGlobal));
  return DataPtr(p, nbytes, Device{DeviceType::CUDA, device}, Origin::Pooled, &managed_release,
                 reinterpret_cast<void*>(static_cast<intptr_t>(device)), MemoryKind::Managed);
}

PointerKind pointer_kind(const void* p, int* device) {
  if (device) *device = -1;
  if (!is_available() || p == nullptr) return PointerKind::Unregistered;
  cudaPointerAttributes a{};
  cudaError_t e = cudaPointerGetAttributes(&a, p);
  if (e != cudaSuccess) {
    (void)cudaGetLastError();
    return PointerKind::Unregistered;
  }
  if (device) *device = a.device;
  switch (a.type) {
    case cudaMemoryTypeHost: return PointerKind::Host;
    case cudaMemoryTypeDevice: return PointerKind::Device;
    case cudaMemoryTypeManaged: return PointerKind::Managed;
    default: return PointerKind::Unregistered;
  }
}

}  // namespace uma::cuda
