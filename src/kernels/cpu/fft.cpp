// CPU FFTs through pocketfft (the header-only C++ library NumPy uses; BSD-3-Clause, fetched by
// CMake, never copied into the tree). The ops layer (ops/fft.cpp) has already decided every
// shape, dtype and scale factor; these kernels run one pocketfft call on views of any strides
// (pocketfft takes strides in bytes, negative ones included), the batch of lines spread over
// the threads uma's thread policy grants (uma/threads.h).
#include <complex>
#include <cstddef>

#include <pocketfft_hdronly.h>

#include "kernels/kernels.h"
#include "uma/threads.h"

namespace uma::kernels::cpu {

namespace {

pocketfft::shape_t dims(const Array& a) {
  pocketfft::shape_t s;
  for (int64_t n : a.shape()) s.push_back(static_cast<size_t>(n));
  return s;
}

pocketfft::stride_t byte_strides(const Array& a) {
  pocketfft::stride_t s;
  const auto item = static_cast<std::ptrdiff_t>(a.itemsize());
  for (int64_t st : a.strides()) s.push_back(static_cast<std::ptrdiff_t>(st) * item);
  return s;
}

pocketfft::shape_t axes_of(const std::vector<int64_t>& axes) {
  pocketfft::shape_t s;
  for (int64_t a : axes) s.push_back(static_cast<size_t>(a));
  return s;
}

// Lines of at least 2^15 output elements per thread: below that a thread team costs more than
// the transform.
size_t fft_threads(const Array& out) { return static_cast<size_t>(threads::for_work(out.size(), int64_t{1} << 15)); }

bool is_double(DType t) { return t == DType::Float64 || t == DType::Complex128; }

}  // namespace

void fft_c2c(const Array& in, const Array& out, const std::vector<int64_t>& axes, bool forward, double fct) {
  if (out.size() == 0) return;
  const auto shape = dims(out);
  if (is_double(out.dtype()))
    pocketfft::c2c<double>(shape, byte_strides(in), byte_strides(out), axes_of(axes), forward,
                           static_cast<const std::complex<double>*>(in.data()),
                           static_cast<std::complex<double>*>(out.data()), fct, fft_threads(out));
  else
    pocketfft::c2c<float>(shape, byte_strides(in), byte_strides(out), axes_of(axes), forward,
                          static_cast<const std::complex<float>*>(in.data()),
                          static_cast<std::complex<float>*>(out.data()), static_cast<float>(fct), fft_threads(out));
}

void fft_r2c(const Array& in, const Array& out, const std::vector<int64_t>& axes, bool forward, double fct) {
  if (out.size() == 0) return;
  const auto shape = dims(in);
  if (is_double(out.dtype()))
    pocketfft::r2c<double>(shape, byte_strides(in), byte_strides(out), axes_of(axes), forward,
                           static_cast<const double*>(in.data()), static_cast<std::complex<double>*>(out.data()), fct,
                           fft_threads(out));
  else
    pocketfft::r2c<float>(shape, byte_strides(in), byte_strides(out), axes_of(axes), forward,
                          static_cast<const float*>(in.data()), static_cast<std::complex<float>*>(out.data()),
                          static_cast<float>(fct), fft_threads(out));
}

void fft_c2r(const Array& in, const Array& out, const std::vector<int64_t>& axes, bool forward, double fct) {
  if (out.size() == 0) return;
  const auto shape = dims(out);
  if (is_double(out.dtype()))
    pocketfft::c2r<double>(shape, byte_strides(in), byte_strides(out), axes_of(axes), forward,
                           static_cast<const std::complex<double>*>(in.data()), static_cast<double*>(out.data()), fct,
                           fft_threads(out));
  else
    pocketfft::c2r<float>(shape, byte_strides(in), byte_strides(out), axes_of(axes), forward,
                          static_cast<const std::complex<float>*>(in.data()), static_cast<float*>(out.data()),
                          static_cast<float>(fct), fft_threads(out));
}

}  // namespace uma::kernels::cpu
