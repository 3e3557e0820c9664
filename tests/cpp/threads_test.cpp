// Thread-safety of the memory layer and of compiled functions' calls (include/uma/memory/caching_allocator.h, "Threads"; Note
// [Adopted buffers]): the caching allocator and adoption hammered from many threads, and arrays
// (copies, views) released on threads other than the one that made them. These tests run in
// every build; the tsan phase of scripts/run_tests.sh runs them under ThreadSanitizer
// (-DUMA_TSAN=ON, target uma_tsan_tests), which reports any data race in uma's code.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <cstring>
#include <deque>
#include <memory>
#include <mutex>
#include <random>
#include <thread>
#include <utility>
#include <vector>

#include "uma/array.h"
#include "uma/memory/allocator.h"
#include "uma/memory/caching_allocator.h"
#include "uma/ops.h"
#include "uma/runtime/function.h"
#include "uma/threads.h"

namespace uma {
namespace {

constexpr int kThreads = 8;

// A small blocking queue: producers push, consumers pop until closed and drained.
template <class T>
class Queue {
 public:
  void push(T v) {
    {
      std::lock_guard<std::mutex> g(mu_);
      q_.push_back(std::move(v));
    }
    cv_.notify_one();
  }
  bool pop(T& out) {
    std::unique_lock<std::mutex> g(mu_);
    cv_.wait(g, [&] { return !q_.empty() || closed_; });
    if (q_.empty()) return false;
    out = std::move(q_.front());
    q_.pop_front();
    return true;
  }
  void close() {
    {
      std::lock_guard<std::mutex> g(mu_);
      closed_ = true;
    }
    cv_.notify_all();
  }

 private:
  std::mutex mu_;
  std::condition_variable cv_;
  std::deque<T> q_;
  bool closed_ = false;
};

// ---- the caching allocator -------------------------------------------------------------------

TEST(Threads, CachingAllocatorChurnWithConcurrentLimitChanges) {
  constexpr std::size_t kLimit = 256 * 1024;
  CachingAllocator alloc(kLimit);
  std::atomic<bool> stop{false};
  std::atomic<int> bad{0};
  std::vector<std::thread> ts;
  for (int t = 0; t < kThreads; ++t) {
    ts.emplace_back([&, t] {
      std::mt19937 rng(1234 + t);
      std::vector<std::pair<DataPtr, unsigned char>> held;
      for (int i = 0; i < 4000; ++i) {
        if (held.size() < 16 && (held.empty() || rng() % 3 != 0)) {
          const std::size_t n = std::size_t(1) << (rng() % 14);  // 1 B .. 8 KiB: several classes
          DataPtr p = alloc.allocate(n);
          const auto tag = static_cast<unsigned char>(rng());
          std::memset(p.get(), tag, p.nbytes());  // a block handed out twice would be overwritten
          held.emplace_back(std::move(p), tag);
        } else {
          const std::size_t k = rng() % held.size();
          const auto* b = static_cast<const unsigned char*>(held[k].first.get());
          if (b[0] != held[k].second || b[held[k].first.nbytes() - 1] != held[k].second) ++bad;
          held.erase(held.begin() + static_cast<std::ptrdiff_t>(k));  // frees on this thread
        }
      }
    });
  }
  // Meanwhile: the limit moves, the cache is cleared, stats are read.
  std::thread admin([&] {
    std::size_t limits[] = {0, 4096, kLimit, 64 * 1024};
    for (int i = 0; !stop.load(); ++i) {
      alloc.set_cache_limit(limits[i % 4]);
      MemoryStats s = alloc.stats();
      if (s.active_bytes < 0 || s.cached_bytes < 0 || s.cached_bytes > static_cast<int64_t>(kLimit) ||
          s.peak_bytes < s.active_bytes)
        ++bad;
      if (i % 7 == 0) alloc.clear_cache();
      std::this_thread::yield();
    }
  });
  for (auto& th : ts) th.join();
  stop = true;
  admin.join();
  EXPECT_EQ(bad.load(), 0);
  alloc.set_cache_limit(kLimit);
  MemoryStats s = alloc.stats();
  EXPECT_EQ(s.active_bytes, 0);  // every block came back, counted exactly once
  EXPECT_LE(s.cached_bytes, static_cast<int64_t>(kLimit));
  EXPECT_GT(s.peak_bytes, 0);
  alloc.clear_cache();
  EXPECT_EQ(alloc.stats().cached_bytes, 0);
}

TEST(Threads, BlocksFreedOnAnotherThreadReturnToTheirAllocator) {
  CachingAllocator alloc(1 << 20);
  Queue<DataPtr> q;
  std::vector<std::thread> consumers;
  for (int t = 0; t < kThreads / 2; ++t)
    consumers.emplace_back([&] {
      DataPtr p;
      while (q.pop(p)) p.reset();  // released here, allocated elsewhere
    });
  std::vector<std::thread> producers;
  for (int t = 0; t < kThreads / 2; ++t)
    producers.emplace_back([&, t] {
      for (int i = 0; i < 3000; ++i) q.push(alloc.allocate(64u << ((i + t) % 6)));
    });
  for (auto& th : producers) th.join();
  q.close();
  for (auto& th : consumers) th.join();
  MemoryStats s = alloc.stats();
  EXPECT_EQ(s.active_bytes, 0);
  EXPECT_LE(s.cached_bytes, 1 << 20);
}

// ---- adoption --------------------------------------------------------------------------------

struct Owner {
  std::atomic<int> deleted{0};
};
void owner_deleter(void* ctx, void*, std::size_t) noexcept { static_cast<Owner*>(ctx)->deleted.fetch_add(1); }

TEST(Threads, AdoptFromManyThreadsDeletesExactlyOnce) {
  constexpr int kPerThread = 2000;
  const int64_t adopted0 = memory_stats(Device::cpu()).adopted_bytes;
  std::vector<Owner> owners(kThreads * kPerThread);
  static char bytes[4096];
  Queue<std::shared_ptr<Storage>> q;
  std::vector<std::thread> consumers;
  for (int t = 0; t < kThreads / 2; ++t)
    consumers.emplace_back([&] {
      std::shared_ptr<Storage> s;
      while (q.pop(s)) s.reset();  // the last reference may die here or on the producer
    });
  std::vector<std::thread> producers;
  for (int t = 0; t < kThreads; ++t)
    producers.emplace_back([&, t] {
      for (int i = 0; i < kPerThread; ++i) {
        Owner& o = owners[t * kPerThread + i];
        auto s = std::make_shared<Storage>(adopt(bytes + i % 64, 1 + i % 4000, Device::cpu(), &owner_deleter, &o));
        if (i % 2) q.push(s);  // shared with a consumer: either side may release last
        else q.push(std::move(s));
      }
    });
  for (auto& th : producers) th.join();
  q.close();
  for (auto& th : consumers) th.join();
  int wrong = 0;
  for (const Owner& o : owners) wrong += o.deleted.load() != 1;
  EXPECT_EQ(wrong, 0) << "every adoption's deleter runs exactly once";
  EXPECT_EQ(memory_stats(Device::cpu()).adopted_bytes, adopted0);
}

// ---- arrays released on other threads -----------------------------------------------------

TEST(Threads, ArrayCopiesAndViewsReleasedOnOtherThreads) {
  const MemoryStats before = memory_stats(Device::cpu());
  Owner owner;
  static double foreign[64];
  for (int i = 0; i < 64; ++i) foreign[i] = i;
  {
    // An adopted 8x8 array and a pooled one; every thread makes views and copies of both,
    // reads them, and drops them.
    auto st = std::make_shared<Storage>(adopt(foreign, sizeof foreign, Device::cpu(), &owner_deleter, &owner));
    Array adopted(st, foreign, {8, 8}, {8, 1}, DType::Float64, /*writable=*/false);
    st.reset();
    Array pooled = ops::copy(adopted);
    std::atomic<int> bad{0};
    Queue<Array> handoff;
    std::vector<std::thread> ts;
    for (int t = 0; t < kThreads; ++t)
      ts.emplace_back([&, t] {
        for (int i = 0; i < 300; ++i) {
          const Array& src = (i + t) % 2 ? adopted : pooled;
          Array v = ops::getitem(src, {IndexItem{IndexItem::Slice, 0, std::nullopt, std::nullopt, -1}});
          Array tv = ops::transpose(v);
          Array c = ops::copy(tv);  // pooled, allocated on this thread
          if (c.data_as<double>()[0] != 56.0) ++bad;  // element (0, 0): row 7, column 0
          handoff.push(std::move(i % 2 ? tv : c));  // released by another thread
        }
      });
    std::vector<std::thread> sinks;
    for (int t = 0; t < 2; ++t)
      sinks.emplace_back([&] {
        Array a;
        while (handoff.pop(a)) a = Array();
      });
    for (auto& th : ts) th.join();
    handoff.close();
    for (auto& th : sinks) th.join();
    EXPECT_EQ(bad.load(), 0);
    EXPECT_EQ(owner.deleted.load(), 0) << "the adopted array is still alive";
  }
  EXPECT_EQ(owner.deleted.load(), 1);
  const MemoryStats after = memory_stats(Device::cpu());
  EXPECT_EQ(after.active_bytes, before.active_bytes);
  EXPECT_EQ(after.adopted_bytes, before.adopted_bytes);
}

// Small arrays (Note [Small host blocks]): made by ops on some threads, read and released on
// others, so each thread's kept allocations come from everywhere. Every value survives intact
// and the host allocator's counts come back.
TEST(Threads, SmallArraysMadeAndReleasedOnDifferentThreads) {
  const int64_t active0 = memory_stats(Device::cpu()).active_bytes;
  std::atomic<int> bad{0};
  {
    Queue<std::pair<Array, double>> q;
    std::vector<std::thread> consumers;
    for (int t = 0; t < kThreads / 2; ++t)
      consumers.emplace_back([&] {
        std::pair<Array, double> item;
        while (q.pop(item)) {
          const Array& a = item.first;
          for (int64_t i = 0; i < a.size(); ++i)
            if (a.data_as<double>()[i] != item.second) ++bad;
          Array again = ops::binary(BinaryOp::Add, a, a);  // small, made and dropped here
          if (again.data_as<double>()[0] != 2 * item.second) ++bad;
          item = {};
        }
      });
    std::vector<std::thread> producers;
    for (int t = 0; t < kThreads / 2; ++t)
      producers.emplace_back([&, t] {
        for (int i = 0; i < 4000; ++i) {
          const double v = t * 10000 + i;
          Array one = ops::scalar_array(Scalar::from_float(1), DType::Float64);
          Array x = ops::binary(BinaryOp::Add, ops::scalar_array(Scalar::from_float(v - 1), DType::Float64), one);
          if (i % 3 == 0) x = ops::full({8}, Scalar::from_float(v), DType::Float64);  // 64 bytes
          q.push({std::move(x), v});
        }
      });
    for (auto& th : producers) th.join();
    q.close();
    for (auto& th : consumers) th.join();
  }
  EXPECT_EQ(bad.load(), 0);
  EXPECT_EQ(memory_stats(Device::cpu()).active_bytes, active0);
}

// ---- compiled functions sharing variables (include/uma/runtime/function.h) -------------------

// The cell's lock (a lock word with a futex wait, shared_cell.h) excludes: 8 threads adding to
// one plain counter under it, half of them through try_lock, lose no increment; re-entry by
// the holder does not deadlock.
TEST(Threads, SharedCellLockExcludesAndWakesWaiters) {
  runtime::SharedCell cell(ops::scalar_array(Scalar::from_float(0), DType::Float64));
  constexpr int kAdds = 20000;
  long counter = 0;  // guarded by the cell's lock only
  std::vector<std::thread> ts;
  for (int t = 0; t < kThreads; ++t)
    ts.emplace_back([&, t] {
      for (int i = 0; i < kAdds; ++i) {
        if (t % 2) {
          while (!cell.try_lock()) std::this_thread::yield();
        } else {
          cell.lock();
        }
        cell.lock();  // re-entrant
        ++counter;
        cell.unlock();
        if (i % 1000 == 0) std::this_thread::yield();  // hold it a while: others wait
        cell.unlock();
      }
    });
  for (auto& th : ts) th.join();
  EXPECT_EQ(counter, long(kThreads) * kAdds);
  EXPECT_FALSE(cell.held_by_this_thread());
  EXPECT_TRUE(cell.try_lock());
  cell.unlock();
}

// Functions sharing cells, called from 8 threads at once, leave the state of some serial order
// of the calls: no lost update, no torn value (every element of a vector written by one call).
TEST(Threads, FunctionsSharingVariablesActAsSomeSerialOrder) {
  using runtime::Function;
  using runtime::Program;
  using runtime::SharedCell;
  constexpr int64_t n = 4096;
  auto full = [](double v) { return ops::full({n}, Scalar::from_float(v), DType::Float64); };
  auto f64 = [](double v) { return ops::scalar_array(Scalar::from_float(v), DType::Float64); };
  auto a = std::make_shared<SharedCell>(full(1000));
  auto b = std::make_shared<SharedCell>(full(0));
  auto counter = std::make_shared<SharedCell>(f64(0));

  // move: {a: a - d, b: b + d, counter: counter + 1} with the cells listed in a given order
  auto make_move = [&](double d, bool reversed) {
    auto p = std::make_shared<Program>();
    std::vector<std::shared_ptr<SharedCell>> cells =
        reversed ? std::vector<std::shared_ptr<SharedCell>>{counter, b, a} : std::vector<std::shared_ptr<SharedCell>>{a, b, counter};
    int s[3];
    for (int& x : s) x = p->add_input();
    const int ia = reversed ? 2 : 0, ib = 1, ic = reversed ? 0 : 2;
    int dd = p->add_constant(f64(d)), one = p->add_constant(f64(1));
    p->set_outputs({p->add_op("subtract", {s[ia], dd}, {}), p->add_op("add", {s[ib], dd}, {}),
                    p->add_op("add", {s[ic], one}, {})});
    return std::make_shared<Function>(p, std::vector<runtime::InputSpec>{}, cells, std::vector<int>{ia, ib, ic}, 0);
  };
  std::vector<std::shared_ptr<Function>> moves{make_move(1, false), make_move(0.5, true)};
  auto rp = std::make_shared<Program>();
  int ra = rp->add_input(), rb = rp->add_input();
  rp->set_outputs({rp->add_op("add", {ra, rb}, {})});
  Function read_sum(rp, {}, {b, a}, {}, 1);

  std::atomic<int> torn{0}, errors{0};
  std::vector<std::vector<int>> calls(kThreads);
  std::vector<std::thread> ts;
  for (int t = 0; t < kThreads; ++t)
    ts.emplace_back([&, t] {
      std::mt19937 rng(99 + t);
      try {
        for (int i = 0; i < 300; ++i) {
          const int which = static_cast<int>(rng() % 2);
          (*moves[which])({});
          calls[t].push_back(which);
          if (rng() % 4 == 0) {
            Array s = read_sum({}).at(0);
            const double* v = s.data_as<double>();
            for (int64_t k = 0; k < n; ++k)
              if (v[k] != 1000.0) {
                ++torn;
                break;
              }
          }
        }
      } catch (...) {
        ++errors;
      }
    });
  for (auto& th : ts) th.join();
  EXPECT_EQ(errors.load(), 0);
  EXPECT_EQ(torn.load(), 0);
  double moved = 0, count = 0;
  for (const auto& c : calls)
    for (int w : c) {
      moved += w == 0 ? 1.0 : 0.5;
      count += 1;
    }
  std::lock_guard<SharedCell> ga(*a), gb(*b), gc(*counter);
  EXPECT_EQ(*counter->host().data_as<double>(), count);  // no lost update
  Array va = ops::copy(a->host()), vb = ops::copy(b->host());
  for (int64_t k = 0; k < n; ++k) {
    ASSERT_EQ(va.data_as<double>()[k], 1000.0 - moved) << k;
    ASSERT_EQ(vb.data_as<double>()[k], moved) << k;
  }
}

// The same on scalar cells, whose updates may go into the cell's own buffer (Note [Updates in
// place]) while other threads take and hold references to the values: a held value never
// changes (what get_value(borrow=True) promises), and no update is lost.
TEST(Threads, ScalarUpdatesInPlaceNeverChangeAHeldValue) {
  using runtime::Function;
  using runtime::Program;
  using runtime::SharedCell;
  auto f64 = [](double v) { return ops::scalar_array(Scalar::from_float(v), DType::Float64); };
  auto a = std::make_shared<SharedCell>(f64(1000));
  auto b = std::make_shared<SharedCell>(f64(0));
  // move: {a: a - 1, b: b + 1}
  auto p = std::make_shared<Program>();
  int sa = p->add_input(), sb = p->add_input();
  int one = p->add_constant(f64(1));
  p->set_outputs({p->add_op("subtract", {sa, one}, {}), p->add_op("add", {sb, one}, {})});
  Function move(p, {}, {a, b}, {0, 1}, 0);
  constexpr int kCalls = 2000;
  std::atomic<int> changed{0}, errors{0};
  std::vector<std::thread> ts;
  for (int t = 0; t < kThreads; ++t)
    ts.emplace_back([&, t] {
      try {
        for (int i = 0; i < kCalls; ++i) {
          move({});
          if (t % 2 == 0 && i % 8 == 0) {  // hold a's value across a few other calls
            Array held;
            {
              std::lock_guard<SharedCell> g(*a);
              held = a->host();
            }
            const double v = *held.data_as<double>();
            for (int y = 0; y < 4; ++y) std::this_thread::yield();
            if (*held.data_as<double>() != v) ++changed;
          }
        }
      } catch (...) {
        ++errors;
      }
    });
  for (auto& th : ts) th.join();
  EXPECT_EQ(errors.load(), 0);
  EXPECT_EQ(changed.load(), 0);
  std::lock_guard<SharedCell> ga(*a), gb(*b);
  EXPECT_EQ(*a->host().data_as<double>(), 1000.0 - kThreads * kCalls);
  EXPECT_EQ(*b->host().data_as<double>(), double(kThreads) * kCalls);
}

// A Program's graph switches (set_graphs, set_lean_replay) flipped while other threads run it:
// each run finishes with the recordings it found (Note [Program graphs]), every result is
// right, and nothing is raced (the TSAN build) or freed while in use (the ASAN build).
TEST(Threads, GraphSwitchesFlippedWhileOtherThreadsRun) {
  using runtime::Program;
  auto p = std::make_shared<Program>();
  const int x = p->add_input();
  p->set_outputs({p->add_op("add", {x, p->add_op("multiply", {x, x}, {})}, {})});
  std::atomic<bool> stop{false};
  std::atomic<int> wrong{0}, errors{0};
  std::vector<std::thread> ts;
  for (int t = 0; t < kThreads; ++t)
    ts.emplace_back([&, t] {
      try {
        const double v = t + 1.0;
        while (!stop.load()) {
          std::vector<Array> out = p->run({ops::scalar_array(Scalar::from_float(v), DType::Float64)});
          if (*out[0].data_as<double>() != v + v * v) ++wrong;
        }
      } catch (...) {
        ++errors;
      }
    });
  for (int i = 0; i < 2000; ++i) {
    p->set_graphs(i % 2 == 0);
    p->set_lean_replay(i % 3 == 0);
    (void)p->graph_stats();
  }
  stop = true;
  for (auto& th : ts) th.join();
  EXPECT_EQ(errors.load(), 0);
  EXPECT_EQ(wrong.load(), 0);
}

// The thread policy (uma/threads.h) asked from many threads while one changes the ceiling: each
// answer is within [1, the largest ceiling set], and the sampler's state is never raced.
TEST(Threads, ThreadPolicyAskedFromManyThreads) {
  std::atomic<bool> stop{false};
  std::atomic<int> bad{0};
  std::vector<std::thread> ts;
  threads::set_max_threads(8);  // the bound holds from the first answer, on a machine of any size
  for (int t = 0; t < kThreads; ++t)
    ts.emplace_back([&] {
      while (!stop.load()) {
        const int a = threads::available(), w = threads::for_work(int64_t(1) << 30, 1);
        if (a < 1 || a > 8 || w < 1 || w > 8) bad.fetch_add(1);
      }
    });
  for (int i = 0; i < 300; ++i) {
    threads::set_max_threads(1 + i % 8);
    std::this_thread::sleep_for(std::chrono::milliseconds(1));  // crosses a few 100 ms windows
  }
  stop.store(true);
  for (auto& t : ts) t.join();
  threads::set_max_threads(0);
  EXPECT_EQ(bad.load(), 0);
}

}  // namespace
}  // namespace uma
