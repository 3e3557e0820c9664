// The CUB parts of sorting and unique (launchers in kernels/cuda/sort_launch.h): the segmented
// stable radix sort of (key, position) pairs, one segment per row, and an inclusive sum. CUB
// ships with the CUDA toolkit and lives in uma's wrapping namespace (CUB_NS_QUALIFIER, as
// index_sort.cu); its two-phase calls (size query, then run) are passed through.
#include <cub/device/device_scan.cuh>
#include <cub/device/device_segmented_sort.cuh>

#include "kernels/cuda/sort_launch.h"

namespace uma::kernels::cuda_launch {

namespace {

template <class K>
int sort_t(void* ws, std::size_t* ws_bytes, bool descending, const void* keys_in, void* keys_out,
           const int64_t* values_in, int64_t* values_out, int64_t n, int64_t rows, const int64_t* offsets,
           cudaStream_t st) {
  const K* ki = static_cast<const K*>(keys_in);
  K* ko = static_cast<K*>(keys_out);
  // Stable in both directions: equal keys keep their input (position) order.
  if (descending)
    return static_cast<int>(CUB_NS_QUALIFIER::DeviceSegmentedSort::StableSortPairsDescending(
        ws, *ws_bytes, ki, ko, values_in, values_out, n, rows, offsets, offsets + 1, st));
  return static_cast<int>(CUB_NS_QUALIFIER::DeviceSegmentedSort::StableSortPairs(
      ws, *ws_bytes, ki, ko, values_in, values_out, n, rows, offsets, offsets + 1, st));
}

}  // namespace

int segmented_sort(void* ws, std::size_t* ws_bytes, int key_bits, bool descending, const void* keys_in,
                   void* keys_out, const int64_t* values_in, int64_t* values_out, int64_t n, int64_t rows,
                   const int64_t* offsets, void* stream) {
  auto st = static_cast<cudaStream_t>(stream);
  if (key_bits == 64)
    return sort_t<unsigned long long>(ws, ws_bytes, descending, keys_in, keys_out, values_in, values_out, n, rows,
                                      offsets, st);
  return sort_t<uint32_t>(ws, ws_bytes, descending, keys_in, keys_out, values_in, values_out, n, rows, offsets, st);
}

int inclusive_sum(void* ws, std::size_t* ws_bytes, int64_t* vals, int64_t n, void* stream) {
  return static_cast<int>(
      CUB_NS_QUALIFIER::DeviceScan::InclusiveSum(ws, *ws_bytes, vals, n, static_cast<cudaStream_t>(stream)));
}

}  // namespace uma::kernels::cuda_launch
