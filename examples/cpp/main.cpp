// examples/cpp/main.cpp — uma from C++, against the installed package (find_package(uma)).
//
// 1. An array adopted from a buffer the program owns (a std::vector): uma reads and writes it
//    in place, never caches it, and calls the deleter exactly once when the last view goes.
// 2. A compiled uma::runtime::Program: y = sum((x * w + b) ** 2) on the adopted array, the
//    kind of straight-line program the Python `cpu` linker builds from a graph.
// Prints the result and exits 0 only when every check holds.
#include <cmath>
#include <cstdio>
#include <memory>
#include <vector>

#include "uma/array.h"
#include "uma/error.h"
#include "uma/ops.h"
#include "uma/runtime/program.h"

namespace {

int released = 0;
void on_release(void*, void*, std::size_t) noexcept { ++released; }

int failures = 0;
void check(bool ok, const char* what) {
  std::printf("%s %s\n", ok ? "ok  " : "FAIL", what);
  if (!ok) ++failures;
}

}  // namespace

int main() {
  using namespace uma;
  std::vector<double> buffer = {1, 2, 3, 4, 5, 6};
  {
    // The vector's memory becomes a 2x3 float64 array, shared, not copied.
    const Shape shape{2, 3};
    auto storage = std::make_shared<Storage>(
        adopt(buffer.data(), buffer.size() * sizeof(double), Device::cpu(), &on_release, nullptr));
    void* p = storage->data.get();
    Array x(std::move(storage), p, shape, contiguous_strides(shape), DType::Float64, /*writable=*/true);
    check(x.is_adopted() && x.data() == buffer.data(), "the array adopts the buffer (same address)");
    buffer[0] = 10;  // visible through the array: one memory
    check(x.data_as<double>()[0] == 10, "a write to the buffer shows in the array");

    // y = sum((x * w + b) ** 2), w = 0.5 and b = 1 constants.
    runtime::Program prog;
    const int in = prog.add_input();
    const int w = prog.add_constant(ops::scalar_array(Scalar::from_float(0.5), DType::Float64));
    const int b = prog.add_constant(ops::scalar_array(Scalar::from_float(1.0), DType::Float64));
    const int xw = prog.add_op("multiply", {in, w}, {});
    const int z = prog.add_op("add", {xw, b}, {});
    const int sq = prog.add_op("multiply", {z, z}, {});
    const int y = prog.add_op("sum", {sq}, {});
    prog.set_outputs({y, z});
    std::vector<Array> out = prog.run({x});

    double expect = 0;
    for (double v : buffer) expect += (v * 0.5 + 1) * (v * 0.5 + 1);
    const double got = ops::copy(out[0]).data_as<double>()[0];
    std::printf("sum((x * 0.5 + 1) ** 2) = %g (expected %g)\n", got, expect);
    check(out[0].ndim() == 0 && std::fabs(got - expect) < 1e-12, "the compiled program computes the sum");
    check(out[1].shape() == shape && !out[1].is_adopted(), "an intermediate result is uma's own memory");

    bool refused = false;
    try {
      prog.run({x, x});
    } catch (const Error&) {
      refused = true;
    }
    check(refused, "a wrong argument count is an error");
    check(released == 0, "the buffer is not released while the array lives");
  }
  check(released == 1, "the buffer's deleter ran exactly once");
  std::printf("%s\n", failures ? "uma C++ example: FAILED" : "uma C++ example: OK");
  return failures ? 1 : 0;
}
