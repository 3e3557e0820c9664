// Reductions (launchers in kernels/cuda/ops_launch.h): the split policy and the dispatch to
// the dtype groups. Kernels, accumulators and NaN rules: reduce.cuh.
#include "kernels/cuda/reduce.cuh"

namespace uma::kernels::cuda_launch {

int64_t reduce_acc_bytes(int op, int dtype) {
  switch (dtype) {
#define UMA_ACC(CODE, T) case CODE: return red::acc_bytes<T>(op);
    UMA_ACC(kBool, bool8) UMA_ACC(kInt8, int8_t) UMA_ACC(kInt16, int16_t) UMA_ACC(kInt32, int32_t)
    UMA_ACC(kInt64, int64_t) UMA_ACC(kUInt8, uint8_t) UMA_ACC(kUInt16, uint16_t) UMA_ACC(kUInt32, uint32_t)
    UMA_ACC(kUInt64, uint64_t) UMA_ACC(kFloat16, __half) UMA_ACC(kBFloat16, __nv_bfloat16) UMA_ACC(kFloat32, float)
    UMA_ACC(kFloat64, double) UMA_ACC(kComplex64, cuda_dev::Cx<float>) UMA_ACC(kComplex128, cuda_dev::Cx<double>)
#undef UMA_ACC
    default: return 32;
  }
}

int64_t reduce_splits(const ReduceGeometry& g, int itemsize) {
  if (g.nout == 0 || g.rsize == 0) return 0;
  const int64_t sms = kPlanSMs;  // not the device's: the same splits, so the same bits, on every GPU
  // Innermost axis kept (neighbouring outputs are neighbouring addresses) and enough outputs
  // to fill the GPU, or short rows: one thread per output.
  const bool columns = red::inner_kept(g, itemsize);
  if (g.rsize <= 32 || (columns && g.nout >= sms * 256)) return 0;
  // Otherwise about 4 blocks per multiprocessor in all (one resident wave of 256-thread
  // blocks). Columns: blocks of 32 outputs, split over the reduced range while each thread
  // keeps at least 8 elements: a thread's loads wait one after another (its sum depends on
  // each), and the splits' partials are combined in the same kernel (Note [Last block
  // finishes] in last_block.cuh).
  const int64_t target = sms * 4;
  if (columns) {
    const int64_t blocks = red::column_blocks(g);
    int64_t splits = (target + blocks - 1) / blocks;
    const int64_t max_by_size = g.rsize / (red::kColumnWarps * 8);
    if (splits > max_by_size) splits = max_by_size;
    // At most 32 elements a thread: one kernel (32 splits at most) up to 8192 rows.
    if (splits > red::kFinishPerThread && g.rsize <= red::kFinishPerThread * red::kColumnWarps * 32)
      splits = red::kFinishPerThread;
    return splits < 1 ? 1 : splits;
  }
  // Blocks per output, each with four 16-byte loads in flight per thread and at least 4096
  // elements.
  int64_t splits = g.nout >= target ? 1 : (target + g.nout - 1) / g.nout;
  const int64_t max_by_size = (g.rsize + 4095) / 4096;
  if (splits > max_by_size) splits = max_by_size;
  if (splits < 1) splits = 1;
  return splits;
}

int reduce(int op, int dtype, const char* in, void* out, const ReduceGeometry& g, int64_t splits, void* ws,
           void* stream) {
  if (g.nout == 0) return 0;
  if (!reduce_ok(op, dtype)) return static_cast<int>(cudaErrorInvalidValue);
  auto st = static_cast<cudaStream_t>(stream);
  // An empty reduced range: the per-thread kernel writes the identities.
  if (g.rsize == 0) splits = 0;
  switch (dtype) {
    case kBool: case kInt8: case kInt16: case kInt32: case kInt64:
      return reduce_int(op, dtype, in, out, g, splits, ws, st);
    case kUInt8: case kUInt16: case kUInt32: case kUInt64:
      return reduce_uint(op, dtype, in, out, g, splits, ws, st);
    case kFloat16: case kBFloat16: case kFloat32: case kFloat64:
      return reduce_float(op, dtype, in, out, g, splits, ws, st);
    case kComplex64: case kComplex128:
      return reduce_complex(op, dtype, in, out, g, splits, ws, st);
    default:
      return static_cast<int>(cudaErrorInvalidValue);
  }
}

}  // namespace uma::kernels::cuda_launch
