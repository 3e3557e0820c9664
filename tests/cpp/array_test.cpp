// Tests for uma/array.h: geometry (shape, element strides, contiguity), views sharing
// Storage, and the lifetime of pooled and adopted bytes behind views.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <memory>
#include <vector>

#include "uma/array.h"
#include "uma/error.h"
#include "uma/memory/allocator.h"

namespace uma {
namespace {

int64_t active_now() { return memory_stats(Device::cpu()).active_bytes; }
int64_t adopted_now() { return memory_stats(Device::cpu()).adopted_bytes; }

struct DeleterLog {
  int calls = 0;
};
void count_deleter(void* ctx, void*, std::size_t) noexcept { ++static_cast<DeleterLog*>(ctx)->calls; }

// An array over adopted memory (a stand-in for a NumPy buffer).
Array adopted_array(std::vector<double>& buf, DeleterLog& log, Shape shape) {
  auto st = std::make_shared<Storage>(
      adopt(buf.data(), buf.size() * sizeof(double), Device::cpu(), &count_deleter, &log));
  void* p = st->data.get();
  Strides s = contiguous_strides(shape);
  return Array(std::move(st), p, std::move(shape), std::move(s), DType::Float64, true);
}

// ---- helpers ---------------------------------------------------------------------------

TEST(Geometry, ContiguousStridesAreInElements) {
  EXPECT_EQ(contiguous_strides({2, 3, 4}), (Strides{12, 4, 1}));
  EXPECT_EQ(contiguous_strides({5}), (Strides{1}));
  EXPECT_EQ(contiguous_strides({}), (Strides{}));
  EXPECT_EQ(contiguous_strides({3, 1, 2}), (Strides{2, 2, 1}));
  // A zero-length axis does not zero the other strides (NumPy does the same).
  EXPECT_EQ(contiguous_strides({2, 0, 3}), (Strides{3, 3, 1}));
}

TEST(Geometry, CheckedSize) {
  EXPECT_EQ(checked_size({}), 1);
  EXPECT_EQ(checked_size({2, 3, 4}), 24);
  EXPECT_EQ(checked_size({2, 0, 4}), 0);
  EXPECT_EQ(checked_size({0, INT64_MAX}), 0);
  try {
    checked_size({2, -1});
    ADD_FAILURE() << "negative dimension accepted";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::Value);
  }
  try {
    checked_size({INT64_MAX / 2, 3});
    ADD_FAILURE() << "overflow accepted";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::Value);
  }
}

TEST(Geometry, ShapeStrLikePython) {
  EXPECT_EQ(shape_str({}), "()");
  EXPECT_EQ(shape_str({5}), "(5,)");
  EXPECT_EQ(shape_str({2, 3}), "(2, 3)");
  EXPECT_EQ(shape_str({1, 0, 7}), "(1, 0, 7)");
}

// ---- Array::empty ----------------------------------------------------------------------

TEST(Array, DefaultIsUndefined) {
  Array a;
  EXPECT_FALSE(a.defined());
  EXPECT_EQ(a.ndim(), 0);
  EXPECT_TRUE(a.device().is_cpu());
  EXPECT_FALSE(a.is_adopted());
}

TEST(Array, EmptyIsFreshContiguousWritable) {
  Array a = Array::empty({2, 3, 4}, DType::Float32);
  EXPECT_TRUE(a.defined());
  EXPECT_EQ(a.shape(), (Shape{2, 3, 4}));
  EXPECT_EQ(a.strides(), (Strides{12, 4, 1}));
  EXPECT_EQ(a.ndim(), 3);
  EXPECT_EQ(a.size(), 24);
  EXPECT_EQ(a.itemsize(), 4u);
  EXPECT_EQ(a.nbytes(), 96);
  EXPECT_EQ(a.dtype(), DType::Float32);
  EXPECT_TRUE(a.writable());
  EXPECT_TRUE(a.is_c_contiguous());
  EXPECT_FALSE(a.is_f_contiguous());
  EXPECT_FALSE(a.is_adopted());
  EXPECT_TRUE(a.device().is_cpu());
  ASSERT_NE(a.data(), nullptr);
  EXPECT_EQ(reinterpret_cast<std::uintptr_t>(a.data()) % 64, 0u);
  EXPECT_EQ(a.data(), a.storage()->data.get());
  EXPECT_GE(a.storage()->data.nbytes(), 96u);
  std::memset(a.data(), 0, 96);  // the bytes are really there (ASAN checks)
}

TEST(Array, ZeroDAndSizeZero) {
  Array s = Array::empty({}, DType::Int64);
  EXPECT_EQ(s.ndim(), 0);
  EXPECT_EQ(s.size(), 1);
  EXPECT_EQ(s.nbytes(), 8);
  EXPECT_TRUE(s.is_c_contiguous());
  EXPECT_TRUE(s.is_f_contiguous());
  *s.data_as<int64_t>() = 42;
  EXPECT_EQ(*s.data_as<int64_t>(), 42);

  Array z = Array::empty({3, 0}, DType::Float64);
  EXPECT_EQ(z.size(), 0);
  EXPECT_EQ(z.nbytes(), 0);
  EXPECT_NE(z.data(), nullptr);  // size-0 arrays still have a real address
  EXPECT_TRUE(z.is_c_contiguous());
  EXPECT_TRUE(z.is_f_contiguous());
}

TEST(Array, EmptyRejectsBadShapesAndDevices) {
  EXPECT_THROW(Array::empty({-1}, DType::Float64), Error);
  EXPECT_THROW(Array::empty({INT64_MAX, 4}, DType::Float64), Error);
  EXPECT_THROW(Array::empty({INT64_MAX / 4}, DType::Float64), Error);  // bytes overflow
  try {
    Array::empty({2}, DType::Float64, Device{DeviceType::CUDA, 0});
    GTEST_SKIP() << "this build has CUDA";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::Runtime);
  }
}

TEST(Array, EmptyCountsInMemoryStats) {
  int64_t before = active_now();
  {
    Array a = Array::empty({1000}, DType::Float64);  // 8000 bytes -> class 8192
    EXPECT_EQ(active_now() - before, 8192);
  }
  EXPECT_EQ(active_now(), before);
}

// ---- contiguity and element addressing ----------------------------------------------------

TEST(Array, TransposedViewIsFContiguous) {
  Array a = Array::empty({2, 3}, DType::Int32);
  Array t = a.view(a.data(), {3, 2}, {1, 3});
  EXPECT_FALSE(t.is_c_contiguous());
  EXPECT_TRUE(t.is_f_contiguous());
  EXPECT_EQ(t.storage(), a.storage());
  EXPECT_EQ(t.dtype(), DType::Int32);
}

TEST(Array, SizeOneAxesDoNotBreakContiguity) {
  Array a = Array::empty({4}, DType::Float64);
  // shape (1, 4, 1) with arbitrary strides on the unit axes: still C-contiguous (NumPy rule).
  Array v = a.view(a.data(), {1, 4, 1}, {99, 1, -7});
  EXPECT_TRUE(v.is_c_contiguous());
  EXPECT_TRUE(v.is_f_contiguous());  // one non-unit axis: both, as np.ones((1, 4, 1)).flags says
  Array col = a.view(a.data(), {4, 1}, {1, 123});
  EXPECT_TRUE(col.is_c_contiguous());
  EXPECT_TRUE(col.is_f_contiguous());
}

TEST(Array, StridedViewsAreNotContiguous) {
  Array a = Array::empty({10}, DType::Float64);
  Array every_other = a.view(a.data(), {5}, {2});
  EXPECT_FALSE(every_other.is_c_contiguous());
  EXPECT_FALSE(every_other.is_f_contiguous());
  Array reversed = a.view(a.data_as<double>() + 9, {10}, {-1});
  EXPECT_FALSE(reversed.is_c_contiguous());
  Array broadcast = a.view(a.data(), {3, 10}, {0, 1});
  EXPECT_FALSE(broadcast.is_c_contiguous());
}

TEST(Array, PtrAtFollowsElementStridesIncludingNegative) {
  Array a = Array::empty({3, 4}, DType::Float64);
  double* d = a.data_as<double>();
  for (int i = 0; i < 12; ++i) d[i] = i;
  int64_t idx[2] = {2, 1};
  EXPECT_EQ(*reinterpret_cast<double*>(a.ptr_at(idx)), 9.0);
  // a[::-1, ::-2]: start at element (2, 3), strides (-4, -2)
  Array r = a.view(d + 11, {3, 2}, {-4, -2});
  int64_t i0[2] = {0, 0}, i1[2] = {1, 1}, i2[2] = {2, 0};
  EXPECT_EQ(*reinterpret_cast<double*>(r.ptr_at(i0)), 11.0);
  EXPECT_EQ(*reinterpret_cast<double*>(r.ptr_at(i1)), 5.0);
  EXPECT_EQ(*reinterpret_cast<double*>(r.ptr_at(i2)), 3.0);
  // itemsize scaling: the same view geometry on int16 moves 2 bytes per element
  Array b = Array::empty({8}, DType::Int16);
  int64_t k[1] = {3};
  EXPECT_EQ(b.ptr_at(k) - static_cast<char*>(b.data()), 6);
}

TEST(Array, ViewReportsItsOwnGeometry) {
  Array a = Array::empty({4, 6}, DType::Float32);
  Array v = a.view(a.data_as<float>() + 1, {4, 3}, {6, 2});
  EXPECT_EQ(v.shape(), (Shape{4, 3}));
  EXPECT_EQ(v.strides(), (Strides{6, 2}));
  EXPECT_EQ(v.size(), 12);
  EXPECT_EQ(v.nbytes(), 48);
  EXPECT_EQ(v.data(), a.data_as<float>() + 1);
}

// ---- views and lifetime ------------------------------------------------------------------

TEST(Array, ViewsKeepPooledStorageAlive) {
  int64_t before = active_now();
  Array view;
  {
    Array a = Array::empty({100}, DType::Float64);
    for (int i = 0; i < 100; ++i) a.data_as<double>()[i] = i;
    view = a.view(a.data_as<double>() + 99, {50}, {-2});
  }  // the original handle is gone
  EXPECT_GT(active_now(), before);  // ... but its bytes are still live
  EXPECT_EQ(view.storage().use_count(), 1);
  int64_t i[1] = {1};
  EXPECT_EQ(*reinterpret_cast<double*>(view.ptr_at(i)), 97.0);  // still readable (ASAN)
  view = Array();
  EXPECT_EQ(active_now(), before);
}

TEST(Array, CopiesShareStorage) {
  Array a = Array::empty({3}, DType::Int64);
  Array b = a;  // handle copy: same storage, same bytes
  EXPECT_EQ(b.storage(), a.storage());
  EXPECT_EQ(b.data(), a.data());
  b.data_as<int64_t>()[0] = 7;
  EXPECT_EQ(a.data_as<int64_t>()[0], 7);
  EXPECT_EQ(a.storage().use_count(), 2);
}

TEST(Array, AsReadonlySharesAndDoesNotTouchTheOriginal) {
  Array a = Array::empty({3}, DType::Float32);
  Array r = a.as_readonly();
  EXPECT_FALSE(r.writable());
  EXPECT_TRUE(a.writable());
  EXPECT_EQ(r.data(), a.data());
  EXPECT_EQ(r.storage(), a.storage());
  // Views of a read-only array stay read-only.
  Array rv = r.view(r.data(), {1}, {1});
  EXPECT_FALSE(rv.writable());
}

TEST(Array, AdoptedStorageReleasedOnceAfterTheLastView) {
  DeleterLog log;
  std::vector<double> buf(12, 1.5);
  int64_t adopted_before = adopted_now();
  int64_t active_before = active_now();
  {
    Array a = adopted_array(buf, log, {3, 4});
    EXPECT_TRUE(a.is_adopted());
    EXPECT_EQ(a.data(), buf.data());
    EXPECT_EQ(adopted_now() - adopted_before, 96);
    EXPECT_EQ(active_now(), active_before);  // adoption allocates no pooled bytes
    Array t = a.view(a.data(), {4, 3}, {1, 4});
    Array ro = t.as_readonly();
    a = Array();
    t = Array();
    EXPECT_EQ(log.calls, 0);  // ro still views the bytes
    EXPECT_TRUE(ro.is_adopted());
    int64_t idx[2] = {3, 2};
    EXPECT_EQ(*reinterpret_cast<double*>(ro.ptr_at(idx)), 1.5);
  }
  EXPECT_EQ(log.calls, 1);
  EXPECT_EQ(adopted_now(), adopted_before);
  EXPECT_EQ(memory_stats(Device::cpu()).active_bytes, active_before);
}

TEST(Array, AdoptInALoopNeverRecyclesTheSource) {
  // Thousands of sources adopted, viewed and dropped while the allocator serves other
  // arrays: no source is ever handed out by the pool, so none is ever overwritten.
  constexpr int kRounds = 2000;
  int64_t adopted_before = adopted_now();
  int64_t active_before = active_now();
  std::vector<std::unique_ptr<std::vector<double>>> sources;
  std::vector<DeleterLog> logs(kRounds);
  for (int r = 0; r < kRounds; ++r) {
    sources.push_back(std::make_unique<std::vector<double>>(16, static_cast<double>(r)));
    {
      Array a = adopted_array(*sources.back(), logs[r], {4, 4});
      Array v = a.view(a.data_as<double>() + 15, {16}, {-1});
      Array fresh = Array::empty({16}, DType::Float64);  // same byte size as the source
      ASSERT_NE(fresh.data(), a.data());
      for (int i = 0; i < 16; ++i) fresh.data_as<double>()[i] = -1.0;
    }
    ASSERT_EQ(logs[r].calls, 1);
  }
  for (int r = 0; r < kRounds; ++r)
    for (double x : *sources[r]) ASSERT_EQ(x, static_cast<double>(r)) << "source " << r << " overwritten";
  EXPECT_EQ(adopted_now(), adopted_before);
  EXPECT_EQ(active_now(), active_before);
}

}  // namespace
}  // namespace uma
