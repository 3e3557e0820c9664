// The CUB parts of indexing (launchers in kernels/cuda/index_launch.h): the stable radix sort
// that groups repeated scatter indices, and the prefix count of boolean masks. CUB ships
// with the CUDA toolkit; its two-phase calls (size query, then run) are passed through. CUB
// lives in uma's own wrapping namespace (THRUST_CUB_WRAPPED_NAMESPACE, CMakeLists.txt), which
// CUB_NS_QUALIFIER names.
#include <cub/device/device_radix_sort.cuh>
#include <cub/device/device_scan.cuh>

#include "kernels/cuda/grid.cuh"
#include "kernels/cuda/index_launch.h"

namespace uma::kernels::cuda_launch {

namespace {
__global__ void mask_to_count_kernel(const bool8* __restrict__ mask, int64_t* __restrict__ counts, int64_t n) {
  for (int64_t i = global_index(); i < n; i += grid_step()) counts[i] = mask[i] ? 1 : 0;
}
}  // namespace

int sort_pairs(void* ws, std::size_t* ws_bytes, const uint64_t* keys_in, uint64_t* keys_out, const int64_t* values_in,
               int64_t* values_out, int64_t m, int key_bits, void* stream) {
  if (key_bits < 1) key_bits = 1;
  if (key_bits > 64) key_bits = 64;
  // LSD radix sort: stable, so equal keys keep their values in input order.
  return static_cast<int>(CUB_NS_QUALIFIER::DeviceRadixSort::SortPairs(ws, *ws_bytes, keys_in, keys_out, values_in,
                                                                       values_out, m, 0, key_bits,
                                                                       static_cast<cudaStream_t>(stream)));
}

int mask_count(void* ws, std::size_t* ws_bytes, const bool8* mask, int64_t* counts, int64_t n, void* stream) {
  auto st = static_cast<cudaStream_t>(stream);
  if (ws != nullptr && n > 0) {
    mask_to_count_kernel<<<grid_for(n), kThreads, 0, st>>>(mask, counts, n);
    const int e = static_cast<int>(cudaGetLastError());
    if (e != 0) return e;
  }
  // In place (CUB's in-place overload): counts is both the input (0/1) and the inclusive sum.
  return static_cast<int>(CUB_NS_QUALIFIER::DeviceScan::InclusiveSum(ws, *ws_bytes, counts, n, st));
}

}  // namespace uma::kernels::cuda_launch
