// The host thread policy (uma/threads.h): the user's ceiling, and the free cores sampled from
// /proc/stat at most every 100 ms.
#include "uma/threads.h"

#include <sched.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <fstream>
#include <mutex>
#include <sstream>
#include <string>
#include <vector>

#include "uma/error.h"

namespace uma::threads {

namespace {

constexpr int kMostThreads = 1 << 16;

// The CPUs this process may run on (its affinity mask); empty when it cannot be read.
std::vector<int> affinity_cpus() {
  std::vector<int> cpus;
  cpu_set_t set;
  CPU_ZERO(&set);
  if (sched_getaffinity(0, sizeof(set), &set) != 0) return cpus;
  for (int c = 0; c < CPU_SETSIZE; ++c)
    if (CPU_ISSET(c, &set)) cpus.push_back(c);
  return cpus;
}

// The CPUs a cgroup v2 quota allows ("cpu.max": "<quota> <period>", or "max <period>"), rounded
// up; 0 when there is no quota or it cannot be read.
int cgroup_cpus() {
  std::string rel;
  std::ifstream cg("/proc/self/cgroup");
  for (std::string line; std::getline(cg, line);)
    if (line.rfind("0::", 0) == 0) rel = line.substr(3);
  for (const std::string& dir : {"/sys/fs/cgroup" + rel, std::string("/sys/fs/cgroup")}) {
    std::ifstream f(dir + "/cpu.max");
    std::string quota;
    double period = 0;
    if (!(f >> quota >> period)) continue;
    if (quota == "max" || period <= 0) return 0;
    const double q = std::strtod(quota.c_str(), nullptr);
    return q > 0 ? std::max(1, static_cast<int>(std::ceil(q / period))) : 0;
  }
  return 0;
}

// A positive int from the environment variable `name`; 0 if it is unset or empty. A malformed
// UMA_NUM_THREADS is an error; a malformed OMP_NUM_THREADS (OpenMP's variable, which may hold a
// list such as "4,2") is read up to its first comma and otherwise ignored, as OpenMP does.
int env_threads(const char* name, bool strict) {
  const char* v = std::getenv(name);
  if (v == nullptr || *v == '\0') return 0;  // unset, or set to nothing (`UMA_NUM_THREADS=`)
  std::string s(v);
  if (!strict) s = s.substr(0, s.find(','));
  char* end = nullptr;
  errno = 0;
  const long n = std::strtol(s.c_str(), &end, 10);
  const bool ok = !s.empty() && end != nullptr && *end == '\0' && errno == 0 && n >= 1 && n <= kMostThreads;
  UMA_CHECK(ok || !strict, Value, name, " must be an integer between 1 and ", kMostThreads, ", got '", v, "'");
  return ok ? static_cast<int>(n) : 0;
}

int default_threads() {
  if (int n = env_threads("UMA_NUM_THREADS", true)) return n;
  if (int n = env_threads("OMP_NUM_THREADS", false)) return n;
  int n = static_cast<int>(affinity_cpus().size());
  if (n == 0) n = std::max(1L, sysconf(_SC_NPROCESSORS_ONLN));
  if (int q = cgroup_cpus()) n = std::min(n, q);
  return std::max(1, n);
}

std::atomic<int> g_max{0};  // 0: not set; the default is computed at the first use
std::atomic<bool> g_ignore_load{false};

// One /proc/stat reading over the CPUs of the affinity mask, and this process's CPU time.
struct Sample {
  uint64_t idle = 0, total = 0;
  double own_s = 0;
  bool ok = false;
};

Sample take_sample(const std::vector<int>& cpus) {
  Sample s;
  timespec ts{};
  if (clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts) != 0) return s;
  s.own_s = static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) * 1e-9;
  std::ifstream f("/proc/stat");
  std::size_t seen = 0;
  for (std::string line; std::getline(f, line);) {
    if (line.rfind("cpu", 0) != 0 || line.size() < 4 || line[3] < '0' || line[3] > '9') continue;
    std::istringstream in(line.substr(3));
    int id = -1;
    // user nice system idle iowait irq softirq steal (guest time is already in user)
    uint64_t t[8] = {};
    in >> id;
    for (uint64_t& x : t) in >> x;
    if (!in || !std::binary_search(cpus.begin(), cpus.end(), id)) continue;
    s.idle += t[3] + t[4];
    for (uint64_t x : t) s.total += x;
    ++seen;
  }
  s.ok = seen == cpus.size() && seen > 0;
  return s;
}

struct Sampler {
  std::mutex mu;
  std::vector<int> cpus = affinity_cpus();  // sorted
  Sample last;
  std::atomic<int64_t> last_ns{0};  // 0: no sample yet
  std::atomic<int> free_now{0};  // 0: not known yet
};

Sampler& sampler() {
  static Sampler* s = new Sampler;  // never destroyed: kernels may run during exit
  return *s;
}

constexpr int64_t kWindowNs = 100'000'000;

int64_t steady_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

}  // namespace

int max_threads() {
  int n = g_max.load(std::memory_order_relaxed);
  if (n > 0) return n;
  n = default_threads();
  int expected = 0;
  g_max.compare_exchange_strong(expected, n, std::memory_order_relaxed);
  return g_max.load(std::memory_order_relaxed);
}

void set_max_threads(int n) {
  UMA_CHECK(n >= 0 && n <= kMostThreads, Value,
            "set_num_threads: the number of threads must be between 1 and ", kMostThreads, " (0: the default), got ", n);
  g_max.store(n == 0 ? default_threads() : n, std::memory_order_relaxed);
}

int free_cores(uint64_t idle_ticks, uint64_t total_ticks, double tick_s, double own_cpu_s, int cpus) {
  if (total_ticks == 0 || cpus <= 0) return std::max(cpus, 1);
  // total_ticks spans the window on every CPU: the window is total_ticks * tick_s / cpus long
  const double window_s = static_cast<double>(total_ticks) * tick_s / cpus;
  const double free = (static_cast<double>(idle_ticks) * tick_s + own_cpu_s) / window_s;
  return std::clamp(static_cast<int>(std::floor(free + 0.5)), 1, cpus);
}

int available() {
  const int cap = max_threads();
  if (cap == 1 || g_ignore_load.load(std::memory_order_relaxed)) return cap;
  Sampler& s = sampler();
  const int64_t now = steady_ns();
  auto due = [&] {
    const int64_t last = s.last_ns.load(std::memory_order_relaxed);
    return last == 0 || now - last >= kWindowNs;
  };
  if (due()) {
    std::unique_lock<std::mutex> lock(s.mu, std::try_to_lock);
    if (lock.owns_lock() && due()) {
      const Sample cur = take_sample(s.cpus);
      if (cur.ok && s.last.ok && cur.total > s.last.total) {
        static const double tick_s = 1.0 / static_cast<double>(std::max(1L, sysconf(_SC_CLK_TCK)));
        s.free_now.store(free_cores(cur.idle - s.last.idle, cur.total - s.last.total, tick_s, cur.own_s - s.last.own_s,
                                static_cast<int>(s.cpus.size())),
                     std::memory_order_relaxed);
      }
      s.last = cur;
      s.last_ns.store(now, std::memory_order_relaxed);
    }
  }
  const int f = s.free_now.load(std::memory_order_relaxed);
  return f == 0 ? cap : std::min(f, cap);
}

int for_work(int64_t work, int64_t grain) {
  if (grain <= 0 || work < 2 * grain) return 1;
  const int64_t by_work = work / grain;
  const int avail = available();
  return static_cast<int>(std::min<int64_t>(avail, by_work));
}

void testing::ignore_load(bool on) { g_ignore_load.store(on, std::memory_order_relaxed); }

}  // namespace uma::threads
