// Tests of sorting, unique and searchsorted on cuda devices (ops/sorting.cpp, ops/set.cpp,
// kernels/cuda/sort.cu): every result equals the host's bit for bit (stable sorts, so the very
// elements in the same order), on data with ties, NaNs, signed zeros and complex NaN classes.
// Without a usable GPU they skip with the reason.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
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

void expect_same_bytes(const Array& gpu, const Array& cpu) {
  ASSERT_EQ(gpu.device(), kGpu);
  Array g = ops::contiguous(to_host(gpu)), c = ops::contiguous(cpu);
  ASSERT_EQ(g.dtype(), c.dtype());
  ASSERT_EQ(g.shape(), c.shape());
  EXPECT_EQ(std::memcmp(g.data(), c.data(), static_cast<std::size_t>(c.nbytes())), 0);
}

// float64 data (rows, n) with ties, NaN, +-inf and both zeros, converted to `t`; complex dtypes
// get NaN in either part.
Array special(DType t, const Shape& shape) {
  const double pool[] = {std::nan(""), 1.0, -0.0, 0.0, 2.5, -std::numeric_limits<double>::infinity(), -1.0, 1.0,
                         std::numeric_limits<double>::infinity(), 3.0, -2.0};
  Array re = Array::empty(shape, DType::Float64), im = Array::empty(shape, DType::Float64);
  for (int64_t i = 0; i < re.size(); ++i) {
    re.data_as<double>()[i] = pool[(i * 7) % 11];
    im.data_as<double>()[i] = pool[(i * 5 + 3) % 11];
  }
  if (t == DType::Complex64 || t == DType::Complex128) {
    Array c = Array::empty(shape, DType::Complex128);
    auto* p = static_cast<double*>(c.data());
    for (int64_t i = 0; i < re.size(); ++i) p[2 * i] = re.data_as<double>()[i], p[2 * i + 1] = im.data_as<double>()[i];
    return ops::astype(c, t);
  }
  if (is_integer(t) || t == DType::Bool) {  // no NaN or inf in integers
    for (int64_t i = 0; i < re.size(); ++i) re.data_as<double>()[i] = static_cast<double>((i * 7919) % 13) - 6.0;
  }
  return ops::astype(re, t);
}

const DType kDtypes[] = {DType::Bool,    DType::Int8,    DType::Int16,    DType::Int64,   DType::UInt8,
                         DType::UInt32,  DType::Float16, DType::BFloat16, DType::Float32, DType::Float64,
                         DType::Complex64, DType::Complex128};

TEST(CudaSort, SortAndArgsortEqualTheHostEveryAxisBothDirections) {
  NEED_GPU();
  for (DType t : kDtypes) {
    Array x = special(t, {5, 37});
    Array gx = to_device(x, kGpu);
    for (int64_t axis : {0, 1, -1})
      for (bool desc : {false, true}) {
        SCOPED_TRACE(std::string(dtype_name(t)) + " axis " + std::to_string(axis) + (desc ? " desc" : " asc"));
        expect_same_bytes(ops::argsort(gx, axis, desc, true), ops::argsort(x, axis, desc, true));
        expect_same_bytes(ops::sort(gx, axis, desc, true), ops::sort(x, axis, desc, true));
      }
  }
}

TEST(CudaSort, UniqueEqualsTheHost) {
  NEED_GPU();
  for (DType t : kDtypes) {
    SCOPED_TRACE(dtype_name(t));
    Array x = special(t, {6, 9});
    const ops::UniqueResult h = ops::unique(x, true, true, true);
    const ops::UniqueResult g = ops::unique(to_device(x, kGpu), true, true, true);
    expect_same_bytes(g.values, h.values);
    expect_same_bytes(g.indices, h.indices);
    expect_same_bytes(g.inverse_indices, h.inverse_indices);
    expect_same_bytes(g.counts, h.counts);
  }
}

TEST(CudaSort, SearchsortedEqualsTheHostAndChecksTheSorter) {
  NEED_GPU();
  for (DType t : kDtypes) {
    SCOPED_TRACE(dtype_name(t));
    Array raw = special(t, {29});
    Array sorted = ops::sort(raw, 0, false, true), order = ops::argsort(raw, 0, false, true);
    Array v = special(t, {3, 7});
    for (bool right : {false, true}) {
      expect_same_bytes(ops::searchsorted(to_device(sorted, kGpu), to_device(v, kGpu), right, std::nullopt),
                        ops::searchsorted(sorted, v, right, std::nullopt));
      expect_same_bytes(ops::searchsorted(to_device(raw, kGpu), to_device(v, kGpu), right, to_device(order, kGpu)),
                        ops::searchsorted(raw, v, right, order));
    }
  }
  Array x = to_device(ops::astype(special(DType::Float64, {3}), DType::Float64), kGpu);
  Array bad = Array::empty({3}, DType::Int64);
  bad.data_as<int64_t>()[0] = 0, bad.data_as<int64_t>()[1] = 2, bad.data_as<int64_t>()[2] = 3;
  try {
    ops::searchsorted(x, x, false, to_device(bad, kGpu));
    ADD_FAILURE() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::Value);
    EXPECT_NE(std::string(e.what()).find("sorter index 3 at position 2"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace uma
