// Per-call overhead of a compiled function through the C++ API (uma::runtime::Function), the
// C++ half of bench/bench_call.py: the call overhead of a compiled function from C++.
//
// Build and run (the benchmark target is off by default; one command, three lines):
//   cmake -S . -B build/bench -G Ninja -DCMAKE_BUILD_TYPE=Release -DUMA_BUILD_TESTS=OFF
//         -DUMA_BUILD_PYTHON=OFF -DUMA_BUILD_BENCH=ON
//   cmake --build build/bench --target uma_bench_call && build/bench/uma_bench_call [--quick] [--json PATH]
//
// Instructions per call (callgrind; no timing, each row's call run N times after a warm-up of
// 1000): `--count N [--only ROW]` (ROW: a row number from 0, in the table's order); then
//   valgrind --tool=callgrind build/bench/uma_bench_call --count N --only ROW
// for two values of N, and the difference of the totals divided by the difference of N.
//
// Functions (the same graphs the Python benchmark compiles with the cpu linker):
//   counter      f = function([], [], updates={c: c + 1}) on a float64 scalar c
//   3-in/2-upd   f = function([x, y, z], [], updates={a: a + x * y, b: b + z}), all float64 scalars
// and, for scale, the bare Program::run_into of the counter's Program (no locks, no cells).
// 3-in/2-upd runs twice through Function::call: with its inputs moved into the vector the call
// consumes (one reference per input taken and dropped per call), and on borrowed inputs (the
// pointer-and-count overload, which takes no reference when the call runs on elements).
// Each row: median and best of `repeat` timed loops of `number` calls, in ns per call.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "uma/ops.h"
#include "uma/runtime/function.h"

using uma::Array;
using uma::DType;
namespace rt = uma::runtime;

namespace {

Array scalar(double v) { return uma::ops::scalar_array(uma::Scalar::from_float(v), DType::Float64); }

struct Row {
  std::string name;
  double median_ns, best_ns;
  long number;
};

Row measure(const std::string& name, const std::function<void()>& fn, int repeat) {
  using clock = std::chrono::steady_clock;
  for (int i = 0; i < 1000; ++i) fn();  // warm up (allocator cache, branch predictors)
  long number = 1;
  for (;;) {  // auto-size the loop to at least 20 ms
    auto t0 = clock::now();
    for (long i = 0; i < number; ++i) fn();
    double s = std::chrono::duration<double>(clock::now() - t0).count();
    if (s >= 0.02 || number >= (1L << 26)) break;
    number *= 2;
  }
  std::vector<double> runs;
  for (int r = 0; r < repeat; ++r) {
    auto t0 = clock::now();
    for (long i = 0; i < number; ++i) fn();
    runs.push_back(std::chrono::duration<double, std::nano>(clock::now() - t0).count() / number);
  }
  std::sort(runs.begin(), runs.end());
  return {name, runs[runs.size() / 2], runs.front(), number};
}

}  // namespace

int main(int argc, char** argv) {
  int repeat = 7;
  long count = -1;  // --count: run each row's call this many times, untimed
  int only = -1;
  const char* json = nullptr;
  for (int i = 1; i < argc; ++i) {
    if (!std::strcmp(argv[i], "--quick")) {
      repeat = 3;
    } else if (!std::strcmp(argv[i], "--json") && i + 1 < argc) {
      json = argv[++i];
    } else if (!std::strcmp(argv[i], "--count") && i + 1 < argc) {
      count = std::atol(argv[++i]);
    } else if (!std::strcmp(argv[i], "--only") && i + 1 < argc) {
      only = std::atoi(argv[++i]);
    } else {
      std::fprintf(stderr, "usage: %s [--quick] [--json PATH] [--count N [--only ROW]]\n", argv[0]);
      return 2;
    }
  }

  // counter: c <- c + 1
  auto counter_prog = std::make_shared<rt::Program>();
  int c = counter_prog->add_input();
  int one = counter_prog->add_constant(scalar(1.0));
  counter_prog->set_outputs({counter_prog->add_op("add", {c, one}, {})});
  auto cell = std::make_shared<rt::SharedCell>(scalar(0.0));
  rt::Function counter(counter_prog, {}, {cell}, {0}, 0);

  // 3 inputs, 2 updates: a <- a + x * y, b <- b + z
  auto prog3 = std::make_shared<rt::Program>();
  int x = prog3->add_input(), y = prog3->add_input(), z = prog3->add_input();
  int a = prog3->add_input(), b = prog3->add_input();
  int xy = prog3->add_op("multiply", {x, y}, {});
  prog3->set_outputs({prog3->add_op("add", {a, xy}, {}), prog3->add_op("add", {b, z}, {})});
  auto ca = std::make_shared<rt::SharedCell>(scalar(0.0));
  auto cb = std::make_shared<rt::SharedCell>(scalar(0.0));
  std::vector<rt::InputSpec> specs(3);
  for (int i = 0; i < 3; ++i) specs[i] = {DType::Float64, {}, "input " + std::to_string(i)};
  rt::Function f3(prog3, specs, {ca, cb}, {0, 1}, 0);
  const Array xv = scalar(1.0), yv = scalar(2.0), zv = scalar(3.0);
  const Array args3[3] = {xv, yv, zv};

  std::vector<Array> in, out;
  const Array zero = scalar(0.0);
  const std::vector<std::pair<std::string, std::function<void()>>> cases = {
      {"counter: Function::call", [&] {
         in.clear();
         counter.call(in, out);
       }},
      {"counter: Function::operator()", [&] { out = counter({}); }},
      {"counter: Program::run_into only", [&] {
         in.assign(1, zero);
         counter_prog->run_into(in, out);
       }},
      {"3-in/2-upd: Function::call", [&] {
         in.clear();  // the cheapest fill: one reference per input (call consumes them)
         in.push_back(xv);
         in.push_back(yv);
         in.push_back(zv);
         f3.call(in, out);
       }},
      {"3-in/2-upd: call, borrowed inputs", [&] { f3.call(args3, 3, out); }},
      {"3-in/2-upd: Function::operator()", [&] { out = f3({xv, yv, zv}); }},
      {"scalar add: ops::binary (one op, for scale)", [&] { Array r = uma::ops::binary(uma::BinaryOp::Add, xv, yv); }},
  };
  if (count >= 0) {
    for (std::size_t k = 0; k < cases.size(); ++k) {
      if (only >= 0 && static_cast<std::size_t>(only) != k) continue;
      for (long i = 0; i < 1000 + count; ++i) cases[k].second();
      std::printf("%s: %ld calls\n", cases[k].first.c_str(), 1000 + count);
    }
    return 0;
  }
  std::vector<Row> rows;
  for (const auto& [name, fn] : cases) rows.push_back(measure(name, fn, repeat));

  cell->lock();
  const double got = *cell->host().data_as<double>();
  cell->unlock();
  std::printf("uma C++ call overhead (ns per call; counter value after the runs: %.0f)\n", got);
  std::printf("%-46s %12s %12s %12s\n", "", "median ns", "best ns", "calls/rep");
  std::printf("%s\n", std::string(86, '-').c_str());
  for (const Row& r : rows) std::printf("%-46s %12.1f %12.1f %12ld\n", r.name.c_str(), r.median_ns, r.best_ns, r.number);
  if (json) {
    FILE* f = std::fopen(json, "w");
    if (!f) {
      std::perror(json);
      return 1;
    }
    std::fprintf(f, "{\"cpp\": [");
    for (std::size_t i = 0; i < rows.size(); ++i)
      std::fprintf(f, "%s\n {\"name\": \"%s\", \"median_ns\": %.2f, \"best_ns\": %.2f, \"number\": %ld}", i ? "," : "",
                   rows[i].name.c_str(), rows[i].median_ns, rows[i].best_ns, rows[i].number);
    std::fprintf(f, "]}\n");
    std::fclose(f);
  }
  return 0;
}
