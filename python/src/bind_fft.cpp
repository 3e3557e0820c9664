// uma.fft's transforms (uma._core.fft_*): argument conversion only; the rules (shapes, dtypes,
// norms, errors) are uma::ops::fft's. python/uma/fft.py gives them the Array API standard's
// signatures.
#include <nanobind/stl/optional.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include <string>
#include <vector>

#include "common.h"

namespace uma::py {

namespace {
using OptInt = std::optional<int64_t>;
using OptInts = std::optional<std::vector<int64_t>>;
using OneAxis = Array (*)(const Array&, OptInt, int64_t, std::string_view);
using ManyAxes = Array (*)(const Array&, const OptInts&, const OptInts&, std::string_view);
}  // namespace

void bind_fft(nb::module_& m) {
  const std::pair<const char*, OneAxis> one[] = {{"fft", ops::fft::fft},   {"ifft", ops::fft::ifft},
                                                 {"rfft", ops::fft::rfft}, {"irfft", ops::fft::irfft},
                                                 {"hfft", ops::fft::hfft}, {"ihfft", ops::fft::ihfft}};
  for (const auto& [name, f] : one)
    m.def((std::string("fft_") + name).c_str(),
          [f, name](nb::handle x, OptInt n, int64_t axis, const std::string& norm) {
            return f(operand(x, nullptr, name), n, axis, norm);
          },
          param("x"), nb::arg("n"), nb::arg("axis"), nb::arg("norm"),
          "One-dimensional transform (uma::ops::fft; python/uma/fft.py documents it).");
  const std::pair<const char*, ManyAxes> many[] = {{"fftn", ops::fft::fftn}, {"ifftn", ops::fft::ifftn},
                                                   {"rfftn", ops::fft::rfftn}, {"irfftn", ops::fft::irfftn}};
  for (const auto& [name, f] : many)
    m.def((std::string("fft_") + name).c_str(),
          [f, name](nb::handle x, OptInts s, OptInts axes, const std::string& norm) {
            return f(operand(x, nullptr, name), s, axes, norm);
          },
          param("x"), nb::arg("s"), nb::arg("axes"), nb::arg("norm"),
          "n-dimensional transform (uma::ops::fft; python/uma/fft.py documents it).");
  m.def("fft_fftfreq", [](int64_t n, double d, nb::handle dtype, nb::handle device) {
        return ops::fft::fftfreq(n, d, to_dtype(dtype).value_or(DType::Float64), target_device(device, "fftfreq"));
      }, nb::arg("n"), nb::arg("d"), param("dtype"), param("device"), "fftfreq (uma::ops::fft).");
  m.def("fft_rfftfreq", [](int64_t n, double d, nb::handle dtype, nb::handle device) {
        return ops::fft::rfftfreq(n, d, to_dtype(dtype).value_or(DType::Float64), target_device(device, "rfftfreq"));
      }, nb::arg("n"), nb::arg("d"), param("dtype"), param("device"), "rfftfreq (uma::ops::fft).");
}

}  // namespace uma::py
