// Tests for the host thread policy (uma/threads.h): the free-core rule on synthetic /proc/stat
// windows, the ceiling, work-sized teams, and kernels giving the same bits on any team size.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <vector>

#include "uma/array.h"
#include "uma/error.h"
#include "uma/ops.h"
#include "uma/threads.h"

namespace uma {
namespace {

// Restores the default ceiling, and the load sampling, when a test ends.
struct CeilingGuard {
  ~CeilingGuard() {
    threads::set_max_threads(0);
    threads::testing::ignore_load(false);
  }
};

TEST(ThreadPolicy, FreeCoresCountsIdleTimeAndThisProcess) {
  constexpr double tick = 0.01;
  // 2 CPUs over 1 s: 200 ticks. Both idle, this process asleep: 2 free cores.
  EXPECT_EQ(threads::free_cores(200, 200, tick, 0.0, 2), 2);
  // This process kept one CPU busy, the other idled: both are ours to use.
  EXPECT_EQ(threads::free_cores(100, 200, tick, 1.0, 2), 2);
  // Another process kept one CPU busy, this one the other: one free core.
  EXPECT_EQ(threads::free_cores(0, 200, tick, 1.0, 2), 1);
  // Two other processes shared both CPUs with this one (2/3 of a core each): one.
  EXPECT_EQ(threads::free_cores(0, 200, tick, 0.67, 2), 1);
  // Every CPU busy with others and this process asleep: never fewer than one.
  EXPECT_EQ(threads::free_cores(0, 1600, tick, 0.0, 16), 1);
  // 16 CPUs, 12 busy with others, this process running one: 5 free.
  EXPECT_EQ(threads::free_cores(400, 1600, tick, 1.0, 16), 5);
  // Rounding to the nearest core: 1.4 -> 1, 1.6 -> 2.
  EXPECT_EQ(threads::free_cores(40, 200, tick, 1.0, 2), 1);
  EXPECT_EQ(threads::free_cores(60, 200, tick, 1.0, 2), 2);
  // Never more than the CPUs, even when the clocks of the two readings disagree.
  EXPECT_EQ(threads::free_cores(200, 200, tick, 0.5, 2), 2);
  // An empty window says nothing: all CPUs.
  EXPECT_EQ(threads::free_cores(0, 0, tick, 0.0, 4), 4);
}

TEST(ThreadPolicy, CeilingIsSetAndRestored) {
  CeilingGuard guard;
  const int dflt = threads::max_threads();
  EXPECT_GE(dflt, 1);
  threads::set_max_threads(3);
  EXPECT_EQ(threads::max_threads(), 3);
  EXPECT_LE(threads::available(), 3);
  EXPECT_GE(threads::available(), 1);
  threads::set_max_threads(1);
  EXPECT_EQ(threads::available(), 1);
  threads::set_max_threads(0);
  EXPECT_EQ(threads::max_threads(), dflt);
  for (int bad : {-1, 65537}) {
    try {
      threads::set_max_threads(bad);
      ADD_FAILURE() << "set_max_threads(" << bad << ") did not throw";
    } catch (const Error& e) {
      EXPECT_EQ(e.kind(), ErrorKind::Value);
      EXPECT_NE(std::string(e.what()).find(std::to_string(bad)), std::string::npos) << e.what();
    }
  }
  EXPECT_EQ(threads::max_threads(), dflt);
}

TEST(ThreadPolicy, TeamsGrowWithTheWork) {
  CeilingGuard guard;
  threads::set_max_threads(64);
  // under two grains: one thread, whatever the machine
  EXPECT_EQ(threads::for_work(0, 100), 1);
  EXPECT_EQ(threads::for_work(199, 100), 1);
  EXPECT_EQ(threads::for_work(1 << 30, 0), 1);
  // above: as many as the work fills, never more than the free cores (which another process
  // may change between two calls: bounds only)
  for (int64_t work : {300, 1 << 20}) {
    const int t = threads::for_work(work, 100);
    EXPECT_GE(t, 1);
    EXPECT_LE(t, std::min<int64_t>(work / 100, 64));
  }
  threads::set_max_threads(2);
  EXPECT_LE(threads::for_work(int64_t(1) << 40, 1), 2);
  threads::testing::ignore_load(true);
  threads::set_max_threads(5);
  EXPECT_EQ(threads::available(), 5);
  EXPECT_EQ(threads::for_work(300, 100), 3);
  EXPECT_EQ(threads::for_work(int64_t(1) << 40, 1), 5);
}

// A large sum is cut into pieces that depend on its length only: the same bits on one thread
// and on a team (the reduction kernel's contract, reduce_impl.h).
TEST(ThreadPolicy, LargeReductionsGiveTheSameBitsOnAnyTeam) {
  CeilingGuard guard;
  const int64_t n = (int64_t(1) << 20) + 12345;
  Array a = Array::empty({n}, DType::Float64);
  double* p = a.data_as<double>();
  for (int64_t i = 0; i < n; ++i) p[i] = std::sin(static_cast<double>(i)) * 1e3 + 1e-3 * static_cast<double>(i % 7);
  const std::vector<ReduceOp> reductions{ReduceOp::Sum, ReduceOp::Mean, ReduceOp::Max, ReduceOp::ArgMin};
  std::vector<std::vector<unsigned char>> first;  // the one-thread results
  threads::testing::ignore_load(true);  // teams of 2 and 4 even when other processes keep the cores busy
  for (int t : {1, 2, 4}) {
    threads::set_max_threads(t);
    for (std::size_t k = 0; k < reductions.size(); ++k) {
      Array r = ops::reduce(reductions[k], a, std::nullopt, false);
      const auto* b = static_cast<const unsigned char*>(r.data());
      std::vector<unsigned char> got(b, b + r.nbytes());
      if (t == 1) first.push_back(got);
      else EXPECT_EQ(got, first[k]) << name_of(reductions[k]) << " on " << t << " threads";
    }
  }
}

// A product is split into blocks of rows that each run OpenBLAS's one-thread kernel: the same
// bits on any team, for every layout BLAS reads directly.
TEST(ThreadPolicy, MatrixProductsGiveTheSameBitsOnAnyTeam) {
  CeilingGuard guard;
  threads::testing::ignore_load(true);
  struct Case { int64_t m, k, n; bool ta, tb; DType t; };
  for (const Case& c : {Case{700, 300, 200, false, false, DType::Float64}, Case{90, 500, 900, true, false, DType::Float64},
                        Case{1100, 64, 37, false, false, DType::Float64}, Case{2001, 77, 101, true, true, DType::Float64},
                        Case{1513, 257, 129, false, true, DType::Float32}, Case{999, 128, 61, true, false, DType::Float32},
                        Case{800, 200, 300, true, true, DType::Complex128}}) {
    auto fill = [&](int64_t r, int64_t col, bool transposed, int seed) {
      Array x = Array::empty(transposed ? Shape{col, r} : Shape{r, col}, c.t);
      const int64_t n = x.size() * (c.t == DType::Complex128 ? 2 : 1);
      for (int64_t i = 0; i < n; ++i) {
        const double v = std::sin(0.37 * static_cast<double>(i) + seed) * 3.0;
        if (c.t == DType::Float32) x.data_as<float>()[i] = static_cast<float>(v);
        else reinterpret_cast<double*>(x.data())[i] = v;
      }
      return transposed ? ops::transpose(x) : x;  // a transposed view: BLAS reads it as is
    };
    Array a = fill(c.m, c.k, c.ta, 1), b = fill(c.k, c.n, c.tb, 2);
    std::vector<unsigned char> first;
    for (int t : {1, 2, 3, 4, 5, 7}) {
      threads::set_max_threads(t);
      Array r = ops::matmul(a, b);
      const auto* p = static_cast<const unsigned char*>(r.data());
      std::vector<unsigned char> got(p, p + r.nbytes());
      if (t == 1) first = got;
      else EXPECT_EQ(got, first) << c.m << "x" << c.k << "x" << c.n << " on " << t << " threads";
    }
  }
}

}  // namespace
}  // namespace uma
