// uma::ops::fft (pocketfft on the cpu) against a direct O(n^2) DFT computed here: the C++ API,
// the shape rule fft_shapes and the error kinds. The comparison with numpy.fft over dtypes,
// norms, axes and layouts is tests/python/test_fft.py.
#include <gtest/gtest.h>

#include <cmath>
#include <complex>
#include <numbers>
#include <vector>

#include "error_kind.h"
#include "uma/array.h"
#include "uma/error.h"
#include "uma/memory/cuda.h"
#include "uma/ops.h"
#include "uma/transfer.h"

namespace uma {
namespace {

using C = std::complex<double>;
using testing::error_kind;

template <class T> Array make(const std::vector<T>& values, Shape shape) {
  Array a = Array::empty(shape, dtype_of<T>::value);
  EXPECT_EQ(static_cast<std::size_t>(a.size()), values.size());
  T* p = a.data_as<T>();
  for (T v : values) *p++ = v;
  return a;
}

template <class T> std::vector<T> values(const Array& a) {
  const Array c = ops::contiguous(a);
  const T* p = c.data_as<T>();
  return std::vector<T>(p, p + c.size());
}

/// The DFT of x with n points (x trimmed or zero-padded), sign -1 forward, times fct.
std::vector<C> dft(const std::vector<C>& x, int64_t n, bool forward, double fct) {
  std::vector<C> out(static_cast<std::size_t>(n));
  const double sign = forward ? -1.0 : 1.0;
  for (int64_t k = 0; k < n; ++k) {
    C acc = 0;
    for (int64_t j = 0; j < n && j < static_cast<int64_t>(x.size()); ++j)
      acc += x[static_cast<std::size_t>(j)] * std::polar(1.0, sign * 2 * std::numbers::pi * double(j * k) / double(n));
    out[static_cast<std::size_t>(k)] = acc * fct;
  }
  return out;
}

std::vector<double> ramp(int64_t n) {
  std::vector<double> v;
  for (int64_t i = 0; i < n; ++i) v.push_back(std::sin(0.7 * double(i)) + 0.1 * double(i));
  return v;
}

void expect_near(const std::vector<C>& got, const std::vector<C>& want, double tol) {
  ASSERT_EQ(got.size(), want.size());
  for (std::size_t i = 0; i < want.size(); ++i) EXPECT_LT(std::abs(got[i] - want[i]), tol) << i;
}

TEST(Fft, ComplexTransformsOfEachRowAgainstTheDirectSum) {
  std::vector<C> x;
  for (double v : ramp(14)) x.push_back(C(v, 0.5 - v));
  const Array a = make(x, {2, 7});
  for (const char* norm : {"backward", "ortho", "forward"}) {
    for (bool forward : {true, false}) {
      const Array r = forward ? ops::fft::fft(a, 9, -1, norm) : ops::fft::ifft(a, 9, -1, norm);
      EXPECT_EQ(r.shape(), (Shape{2, 9}));
      EXPECT_EQ(r.dtype(), DType::Complex128);
      const std::string nm = norm;
      const double fct = nm == "ortho" ? 1 / std::sqrt(9.0) : (nm == "forward") == forward ? 1 / 9.0 : 1.0;
      const std::vector<C> got = values<C>(r);
      for (int row = 0; row < 2; ++row) {
        const std::vector<C> in(x.begin() + row * 7, x.begin() + row * 7 + 7);
        expect_near(std::vector<C>(got.begin() + row * 9, got.begin() + row * 9 + 9), dft(in, 9, forward, fct), 1e-12);
      }
    }
  }
}

TEST(Fft, RealTransformsKeepTheHalfSpectrumAndInvert) {
  const std::vector<double> x = ramp(10);
  const Array a = make(x, {10});
  const Array r = ops::fft::rfft(a, std::nullopt, 0, "backward");
  EXPECT_EQ(r.shape(), (Shape{6}));
  std::vector<C> xc(x.begin(), x.end());
  const std::vector<C> full = dft(xc, 10, true, 1.0);
  expect_near(values<C>(r), std::vector<C>(full.begin(), full.begin() + 6), 1e-12);
  const Array back = ops::fft::irfft(r, std::nullopt, 0, "backward");  // n = 2 * (6 - 1)
  EXPECT_EQ(back.dtype(), DType::Float64);
  const std::vector<double> got = values<double>(back);
  for (std::size_t i = 0; i < x.size(); ++i) EXPECT_NEAR(got[i], x[i], 1e-12) << i;
}

TEST(Fft, Float32GivesComplex64) {
  const Array a = ops::astype(make(ramp(8), {8}), DType::Float32);
  const Array r = ops::fft::fft(a, std::nullopt, -1, "backward");
  EXPECT_EQ(r.dtype(), DType::Complex64);
  EXPECT_EQ(ops::fft::irfft(r, std::nullopt, -1, "backward").dtype(), DType::Float32);
  const std::vector<double> x = ramp(8);
  const std::vector<C> want = dft(std::vector<C>(x.begin(), x.end()), 8, true, 1.0);
  const std::vector<std::complex<float>> got = values<std::complex<float>>(r);
  for (std::size_t i = 0; i < want.size(); ++i) EXPECT_LT(std::abs(C(got[i]) - want[i]), 1e-4) << i;
}

TEST(Fft, FftnOfTwoAxesIsTheTransformOfEachInTurn) {
  const Array a = make(ramp(12), {3, 4});
  const Array r = ops::fft::fftn(a, std::nullopt, std::nullopt, "backward");
  const Array rows = ops::fft::fft(ops::fft::fft(a, std::nullopt, 1, "backward"), std::nullopt, 0, "backward");
  expect_near(values<C>(r), values<C>(rows), 1e-12);
  // a negative-stride view reads the reversed rows
  const Array rev = a.view(static_cast<char*>(a.data()) + 8 * 8, {3, 4}, {-4, 1});
  const std::vector<C> got = values<C>(ops::fft::fft(rev, std::nullopt, 1, "backward"));
  const std::vector<double> x = ramp(12);
  const std::vector<C> last(x.begin() + 8, x.end());
  expect_near(std::vector<C>(got.begin(), got.begin() + 4), dft(last, 4, true, 1.0), 1e-12);
}

TEST(Fft, ShapeRule) {
  const ops::FftShapes a = ops::fft_shapes({4, 5, 6}, Shape{3, 8}, std::vector<int64_t>{-1, 0}, ops::FftKind::R2C, "rfftn");
  EXPECT_EQ(a.axes, (std::vector<int64_t>{2, 0}));
  EXPECT_EQ(a.lens, (Shape{3, 8}));
  EXPECT_EQ(a.input, (Shape{8, 5, 3}));
  EXPECT_EQ(a.result, (Shape{5, 5, 3}));
  const ops::FftShapes b = ops::fft_shapes({4, 5, 6}, std::nullopt, std::nullopt, ops::FftKind::C2R, "irfftn");
  EXPECT_EQ(b.lens, (Shape{4, 5, 10}));
  EXPECT_EQ(b.input, (Shape{4, 5, 6}));
  EXPECT_EQ(b.result, (Shape{4, 5, 10}));
  const ops::FftShapes c = ops::fft_shapes({4, 5, 6}, Shape{-1, 7}, std::nullopt, ops::FftKind::C2C, "fftn");
  EXPECT_EQ(c.axes, (std::vector<int64_t>{1, 2}));
  EXPECT_EQ(c.result, (Shape{4, 5, 7}));
}

TEST(Fft, Errors) {
  const Array a = make(ramp(6), {2, 3});
  EXPECT_EQ(error_kind([&] { ops::fft::fft(a, 0, -1, "backward"); }), ErrorKind::Value);
  EXPECT_EQ(error_kind([&] { ops::fft::fft(a, 4, -1, "sideways"); }), ErrorKind::Value);
  EXPECT_EQ(error_kind([&] { ops::fft::fft(a, 4, 2, "backward"); }), ErrorKind::Axis);
  EXPECT_EQ(error_kind([&] { ops::fft::fftn(a, std::nullopt, std::vector<int64_t>{1, -1}, "backward"); }),
            ErrorKind::Value);
  EXPECT_EQ(error_kind([&] { ops::fft::fftn(a, Shape{2}, std::vector<int64_t>{0, 1}, "backward"); }), ErrorKind::Value);
  EXPECT_EQ(error_kind([&] { ops::fft::fft(ops::astype(a, DType::Int64), 4, -1, "backward"); }), ErrorKind::Type);
  EXPECT_EQ(error_kind([&] { ops::fft::rfft(ops::astype(a, DType::Complex64), 4, -1, "backward"); }),
            ErrorKind::Type);
  EXPECT_EQ(error_kind([&] { ops::fft::fftfreq(0, 1.0, DType::Float64, Device::cpu()); }), ErrorKind::Value);
}

TEST(Fft, Frequencies) {
  EXPECT_EQ(values<double>(ops::fft::fftfreq(5, 0.5, DType::Float64, Device::cpu())),
            (std::vector<double>{0, 0.4, 0.8, -0.8, -0.4}));
  EXPECT_EQ(values<double>(ops::fft::rfftfreq(4, 1.0, DType::Float64, Device::cpu())),
            (std::vector<double>{0, 0.25, 0.5}));
}

// cuFFT (kernels/cuda/cufft.cpp) against pocketfft on the same inputs: shapes whose axes take both
// plan layouts (batched over the elements after the axis, or over the lines before it), a
// negative-stride input, both precisions, every kind. Skipped without a GPU; the Cuda prefix
// puts them under tests/gpu/run.sh's compute-sanitizer run.
TEST(CudaFft, MatchesTheCpu) {
  if (!cuda::is_available()) GTEST_SKIP() << "no usable CUDA GPU: " << cuda::unavailable_reason();
  const Device gpu{DeviceType::CUDA, 0};
  for (const Shape& shape : {Shape{3, 5, 4}, Shape{6, 2, 3}, Shape{1, 16, 2}}) {
    int64_t size = 1;
    for (int64_t n : shape) size *= n;
    for (DType t : {DType::Float64, DType::Float32}) {
      const Array x = ops::astype(make(ramp(size), shape), t);
      // the rows in reverse order: a view with a negative stride, on each device
      auto reversed = [&](const Array& a) {
        const int64_t last_row = (shape[0] - 1) * a.strides()[0] * static_cast<int64_t>(a.itemsize());
        return a.view(static_cast<char*>(a.data()) + last_row, shape, {-a.strides()[0], a.strides()[1], a.strides()[2]});
      };
      const Array g = to_device(x, gpu);
      const Array rev = reversed(x), grev = reversed(g);
      const double tol = t == DType::Float64 ? 1e-11 : 1e-3;
      auto check = [&](const Array& on_gpu, const Array& on_cpu) {
        const Array back = to_device(on_gpu, Device::cpu());
        ASSERT_EQ(back.shape(), on_cpu.shape());
        ASSERT_EQ(back.dtype(), on_cpu.dtype());
        const Array d = ops::astype(back, is_complex(back.dtype()) ? DType::Complex128 : DType::Float64);
        const Array w = ops::astype(on_cpu, d.dtype());
        if (is_complex(d.dtype())) {
          const auto a = values<C>(d), b = values<C>(w);
          for (std::size_t i = 0; i < a.size(); ++i) EXPECT_LT(std::abs(a[i] - b[i]), tol) << i;
        } else {
          const auto a = values<double>(d), b = values<double>(w);
          for (std::size_t i = 0; i < a.size(); ++i) EXPECT_NEAR(a[i], b[i], tol) << i;
        }
      };
      const std::optional<Shape> all;
      const std::optional<std::vector<int64_t>> axes_all;
      check(ops::fft::fftn(g, all, axes_all, "backward"), ops::fft::fftn(x, all, axes_all, "backward"));
      check(ops::fft::ifftn(grev, all, axes_all, "ortho"), ops::fft::ifftn(rev, all, axes_all, "ortho"));
      check(ops::fft::fft(g, 7, 1, "forward"), ops::fft::fft(x, 7, 1, "forward"));
      check(ops::fft::rfftn(g, all, axes_all, "backward"), ops::fft::rfftn(x, all, axes_all, "backward"));
      check(ops::fft::rfft(g, std::nullopt, 1, "ortho"), ops::fft::rfft(x, std::nullopt, 1, "ortho"));
      const Array spec = ops::fft::rfftn(x, all, axes_all, "backward");
      check(ops::fft::irfftn(to_device(spec, gpu), all, axes_all, "backward"), ops::fft::irfftn(spec, all, axes_all, "backward"));
      check(ops::fft::irfft(to_device(spec, gpu), 5, 0, "forward"), ops::fft::irfft(spec, 5, 0, "forward"));
      check(ops::fft::hfft(to_device(spec, gpu), std::nullopt, -1, "backward"), ops::fft::hfft(spec, std::nullopt, -1, "backward"));
      check(ops::fft::ihfft(g, std::nullopt, -1, "backward"), ops::fft::ihfft(x, std::nullopt, -1, "backward"));
    }
  }
}

}  // namespace
}  // namespace uma
