// Tests of indexing on cuda devices (ops/indexing.cpp, kernels/cuda/index.cu): take, mask
// reads, set/inc updates with repeated indices (bit for bit the cpu path's result), one_hot,
// assignment into strided device views and integer matmul. Each compares the device result
// with the same op on the host. Without a usable GPU (CI) they skip with the reason; they run
// under compute-sanitizer memcheck in tests/gpu/run.sh (the Cuda* filter).
#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <vector>

#include "uma/array.h"
#include "uma/error.h"
#include "uma/memory/cuda.h"
#include "uma/ops.h"
#include "uma/transfer.h"

namespace uma {
namespace {

const Device kGpu{DeviceType::CUDA, 0};

#define NEED_GPU() \
  if (!cuda::is_available()) GTEST_SKIP() << "no usable CUDA GPU: " << cuda::unavailable_reason()

template <class T>
Array host(const std::vector<T>& v, const Shape& shape, DType t) {
  Array a = Array::empty(shape, t);
  EXPECT_EQ(static_cast<std::size_t>(a.nbytes()), v.size() * sizeof(T));
  std::memcpy(a.data(), v.data(), v.size() * sizeof(T));
  return a;
}

// Same dtype, shape and bytes (the device array copied back).
void expect_same_bytes(const Array& gpu, const Array& cpu) {
  ASSERT_EQ(gpu.device(), kGpu);
  Array g = to_host(gpu), c = ops::contiguous(cpu);
  g = ops::contiguous(g);
  ASSERT_EQ(g.dtype(), c.dtype());
  ASSERT_EQ(g.shape(), c.shape());
  EXPECT_EQ(std::memcmp(g.data(), c.data(), static_cast<std::size_t>(c.nbytes())), 0);
}

std::vector<float> ramp(int n, float scale) {
  std::vector<float> v(static_cast<std::size_t>(n));
  for (int i = 0; i < n; ++i) v[static_cast<std::size_t>(i)] = scale * static_cast<float>((i * 7919) % 101) - 13.37f;
  return v;
}

TEST(CudaIndex, TakeAndMaskReadEqualTheHost) {
  NEED_GPU();
  Array x = host(ramp(24, 0.5f), {4, 6}, DType::Float32);
  Array idx = host<int64_t>({3, -1, 0, 3, 5}, {5}, DType::Int64);
  Array gx = to_device(x, kGpu);
  for (int64_t axis : {0, 1}) {
    Array i = axis == 0 ? host<int64_t>({3, -1, 0, 3}, {4}, DType::Int64) : idx;
    expect_same_bytes(ops::take(gx, to_device(i, kGpu), axis), ops::take(x, i, axis));
    expect_same_bytes(ops::take(gx, i, axis), ops::take(x, i, axis));  // host indices
  }
  std::vector<uint8_t> m(24);
  for (std::size_t k = 0; k < m.size(); ++k) m[k] = (k * 5) % 3 == 0;
  Array mask = host(m, {4, 6}, DType::Bool);
  expect_same_bytes(ops::mask_select(gx, to_device(mask, kGpu)), ops::mask_select(x, mask));
}

TEST(CudaIndex, BadIndexIsIndexErrorNamingTheFirstAndChangesNothing) {
  NEED_GPU();
  Array x = host(ramp(6, 1.0f), {6}, DType::Float32);
  Array gx = to_device(x, kGpu);
  Array bad = to_device(host<int64_t>({1, 9, -7, 2}, {4}, DType::Int64), kGpu);
  try {
    ops::update_take(gx, bad, 0, to_device(host(ramp(4, 1.0f), {4}, DType::Float32), kGpu), true);
    ADD_FAILURE() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::Index);
    EXPECT_NE(std::string(e.what()).find("index 9 is out of bounds for axis 0 with size 6"), std::string::npos) << e.what();
  }
  expect_same_bytes(gx, x);
}

TEST(CudaIndex, IncWithRepeatedIndicesIsBitForBitTheHostResult) {
  NEED_GPU();
  // 3000 float32 additions into 5 rows: the sums depend on the order, which is the index order.
  const int m = 3000;
  std::vector<int64_t> iv(m);
  for (int k = 0; k < m; ++k) iv[static_cast<std::size_t>(k)] = (k * 37) % 5 - (k % 2 ? 5 : 0);
  Array idx = host(iv, {m}, DType::Int64);
  Array x = host(ramp(15, 0.25f), {5, 3}, DType::Float32);
  Array y = host(ramp(m * 3, 1e-3f), {m, 3}, DType::Float32);
  for (DType t : {DType::Float32, DType::Float16, DType::BFloat16, DType::Int8, DType::Complex128}) {
    Array xt = ops::astype(x, t), yt = ops::astype(y, t);
    for (bool inc : {false, true})
      expect_same_bytes(ops::update_take(to_device(xt, kGpu), to_device(idx, kGpu), 0, to_device(yt, kGpu), inc),
                        ops::update_take(xt, idx, 0, yt, inc));
  }
}

TEST(CudaIndex, OneHotAssignAndIntegerMatmulEqualTheHost) {
  NEED_GPU();
  Array idx = host<int32_t>({0, 3, -1, 2, 7}, {5}, DType::Int32);
  for (DType t : {DType::Bool, DType::Float16, DType::Int64, DType::Complex128})
    expect_same_bytes(ops::one_hot(to_device(idx, kGpu), 4, t), ops::one_hot(idx, 4, t));
  // a strided destination on the device, a broadcast host source
  Array x = host(ramp(24, 1.0f), {4, 6}, DType::Float32);
  Array gx = to_device(x, kGpu);
  Array src = host(ramp(3, 2.0f), {3}, DType::Float32);
  std::vector<IndexItem> key{IndexItem{IndexItem::Slice, 0, 0, 4, 2}, IndexItem{IndexItem::Slice, 0, 1, 6, 2}};
  ops::assign(ops::getitem(gx, key), src);
  ops::assign(ops::getitem(x, key), src);
  expect_same_bytes(gx, x);
  // int8 products wrap as on the host
  Array a = ops::astype(host(ramp(35, 1.0f), {5, 7}, DType::Float32), DType::Int8);
  Array b = ops::astype(host(ramp(21, 1.0f), {7, 3}, DType::Float32), DType::Int8);
  expect_same_bytes(ops::matmul(to_device(a, kGpu), to_device(b, kGpu)), ops::matmul(a, b));
}

// ---- NumPy advanced indexing (ops::index, ops::index_assign: the device's gather and scatter) ----

IndexKey arr(Array a) { return IndexKey{IndexItem{}, std::move(a)}; }
IndexKey num(int64_t i) { return IndexKey{IndexItem{IndexItem::Int, i, {}, {}, {}}, Array()}; }
IndexKey all() { return IndexKey{IndexItem{IndexItem::Slice, 0, {}, {}, {}}, Array()}; }
IndexKey rev() { return IndexKey{IndexItem{IndexItem::Slice, 0, {}, {}, -1}, Array()}; }

// The key with its index arrays moved to the device.
std::vector<IndexKey> on_gpu(std::vector<IndexKey> key) {
  for (auto& k : key)
    if (k.array.defined()) k.array = to_device(k.array, kGpu);
  return key;
}

TEST(CudaAdvancedIndex, ReadsEqualTheHostOnStridedViews) {
  NEED_GPU();
  Array x = host(ramp(2 * 5 * 3 * 4, 0.25f), {2, 5, 3, 4}, DType::Float32);
  Array gx = to_device(x, kGpu);
  Array i = host<int64_t>({0, -2, 1}, {3}, DType::Int64), j = host<int64_t>({1, 0}, {2, 1}, DType::Int64);
  std::vector<uint8_t> m(15);
  for (std::size_t k = 0; k < m.size(); ++k) m[k] = k % 3 != 1;
  Array mask = host(m, {5, 3}, DType::Bool);
  const std::vector<std::vector<IndexKey>> keys = {
      {all(), arr(i), arr(j)}, {num(1), all(), arr(i)}, {arr(j), rev(), arr(i)}, {all(), arr(mask), rev()},
      {arr(i.view(i.data(), {1}, {1})), all(), num(-1), arr(j)}};
  for (const auto& key : keys) {
    expect_same_bytes(ops::index(gx, key), ops::index(x, key));          // host indices
    expect_same_bytes(ops::index(gx, on_gpu(key)), ops::index(x, key));  // device indices
    // a transposed (non-contiguous) device view
    const Array gt = ops::transpose(gx, {3, 1, 2, 0}), t = ops::transpose(x, {3, 1, 2, 0});
    expect_same_bytes(ops::index(gt, key), ops::index(t, key));
  }
}

TEST(CudaAdvancedIndex, WritesEqualTheHostAndRepeatsTakeTheLastValue) {
  NEED_GPU();
  for (DType t : {DType::Bool, DType::Int8, DType::Float16, DType::Int32, DType::Float64, DType::Complex128}) {
    Array x = ops::astype(host(ramp(4 * 6, 1.0f), {4, 6}, DType::Float32), t);
    Array gx = to_device(x, kGpu);
    Array i = host<int64_t>({3, 0, 3, -1, 0}, {5}, DType::Int64), j = host<int64_t>({5, 1, 5, 5, 2}, {5}, DType::Int64);
    Array v = ops::astype(host(ramp(5, 3.0f), {5}, DType::Float32), t);
    const std::vector<IndexKey> key = {arr(i), arr(j)};
    ops::index_assign(x, key, v);
    ops::index_assign(gx, on_gpu(key), to_device(v, kGpu));
    expect_same_bytes(gx, x);
    // through a reversed view, the value broadcast along the kept axis
    Array w = ops::astype(host(ramp(6, -2.0f), {6}, DType::Float32), t);
    ops::index_assign(ops::getitem(x, {IndexItem{IndexItem::Slice, 0, {}, {}, -1}}), {arr(i)}, w);
    ops::index_assign(ops::getitem(gx, {IndexItem{IndexItem::Slice, 0, {}, {}, -1}}), {arr(i)}, w);
    expect_same_bytes(gx, x);
  }
}

TEST(CudaAdvancedIndex, MaskWritesEqualTheHost) {
  NEED_GPU();
  // one bool array (distinct targets: no sort on the device), with an integer and a slice
  Array x = host(ramp(3 * 4 * 5, 1.0f), {3, 4, 5}, DType::Float32);
  Array gx = to_device(x, kGpu);
  std::vector<uint8_t> m(20);
  for (std::size_t k = 0; k < m.size(); ++k) m[k] = (k * 7) % 3 == 0;
  Array mask = host(m, {4, 5}, DType::Bool);
  Array v = host(ramp(3, -1.0f), {3, 1}, DType::Float32);
  ops::index_assign(x, {all(), arr(mask)}, v);
  ops::index_assign(gx, {all(), arr(to_device(mask, kGpu))}, to_device(v, kGpu));
  expect_same_bytes(gx, x);
  std::vector<uint8_t> m1(5);
  for (std::size_t k = 0; k < m1.size(); ++k) m1[k] = k % 2;
  Array mask1 = host(m1, {5}, DType::Bool);
  Array w = host(ramp(2, 5.0f), {2, 1}, DType::Float32);  // the region is (2, 4)
  ops::index_assign(x, {num(2), rev(), arr(mask1)}, w);
  ops::index_assign(gx, {num(2), rev(), arr(mask1)}, w);
  expect_same_bytes(gx, x);
}

TEST(CudaAdvancedIndex, OutOfBoundsWriteIsIndexErrorAndChangesNothing) {
  NEED_GPU();
  Array x = host(ramp(12, 1.0f), {3, 4}, DType::Float32);
  Array gx = to_device(x, kGpu);
  Array i = to_device(host<int64_t>({0, 2, 1}, {3}, DType::Int64), kGpu);
  Array j = to_device(host<int64_t>({1, 4, -9}, {3}, DType::Int64), kGpu);
  for (int read = 0; read < 2; ++read) {
    try {
      if (read) ops::index(gx, {arr(i), arr(j)});
      else ops::index_assign(gx, {arr(i), arr(j)}, to_device(host(ramp(3, 1.0f), {3}, DType::Float32), kGpu));
      ADD_FAILURE() << "no error";
    } catch (const Error& e) {
      EXPECT_EQ(e.kind(), ErrorKind::Index);
      EXPECT_NE(std::string(e.what()).find("index 4 is out of bounds for axis 1 with size 4"), std::string::npos)
          << e.what();
    }
  }
  expect_same_bytes(gx, x);
}

}  // namespace
}  // namespace uma
