// The CUDA memory layer in a build without CUDA (uma/memory/cuda.h): nothing is available,
// and every call that needs a GPU raises RuntimeError naming the reason.
#include "uma/error.h"
#include "uma/memory/cuda.h"

namespace uma::cuda {

namespace {
constexpr const char* kReason =
    "uma was built without CUDA support (CMake's UMA_CUDA=AUTO builds it only where an NVIDIA GPU and nvcc are "
    "found; UMA_CUDA=ON builds it wherever nvcc is)";
[[noreturn]] void unavailable(const char* api) { UMA_FAIL(Runtime, api, ": CUDA is not available: ", kReason); }
}  // namespace

bool built_with_cuda() noexcept { return false; }
int device_count() noexcept { return 0; }
bool is_available() noexcept { return false; }
std::string unavailable_reason() { return kReason; }
void require(Device d, const char* api) { UMA_FAIL(Runtime, api, ": device ", d.str(), " is not available: ", kReason); }
void synchronize(int) { unavailable("synchronize"); }
void* stream(int) { unavailable("stream"); }
void finish_stream_work(int) noexcept {}
void stream_wait_for(int, int64_t) { unavailable("__dlpack__"); }
Allocator& device_allocator(int) { unavailable("allocate"); }
MemoryStats memory_stats(int) { unavailable("memory_stats"); }
void clear_cache(int) { unavailable("clear_cache"); }
DataPtr allocate_managed(std::size_t, int) { unavailable("allocate_managed"); }
void copy_to_device(void*, const void*, std::size_t, int) { unavailable("copy"); }
void copy_to_host(void*, const void*, std::size_t, int) { unavailable("copy"); }
void copy_on_device(void*, const void*, std::size_t, int) { unavailable("copy"); }
DataPtr adopt_mapped(DataPtr, void*, std::size_t, void*, std::size_t, bool, int, bool*) { unavailable("asarray"); }
std::size_t registration_count() { return 0; }
PointerKind pointer_kind(const void*, int* device) {
  if (device) *device = -1;
  return PointerKind::Unregistered;
}
std::size_t staging_bytes() { return 0; }
void transfer_bytes(int, int64_t* h2d, int64_t* d2h) { *h2d = *d2h = 0; }
std::shared_ptr<Graph> capture(int, const std::function<void()>&, std::string* why) {
  if (why) *why = kReason;
  return nullptr;
}
bool capturing(int) noexcept { return false; }
Graph::~Graph() = default;
void Graph::launch() const { unavailable("Graph.launch"); }
std::size_t Graph::kept_bytes() const noexcept { return 0; }

}  // namespace uma::cuda
