// uma.fft (Array API standard 2025.12, fft extension; NumPy 2's numpy.fft where the standard is
// silent). Each transform is one kernel call (kernels::fft_c2c / fft_r2c / fft_c2r: pocketfft on
// the cpu, cuFFT on cuda) after three decisions made here once: the dtypes (fft_dtypes), the
// shapes (fft_shapes, shape_rules.cpp) and the scale factor of `norm` (scale). The input is
// trimmed (a view) or zero-padded (a copy) to the transform lengths and converted to the
// compute dtype in at most one copy (fitted). hfft and ihfft are NumPy's compositions:
// hfft(x) = irfft(conj(x)) and ihfft(x) = conj(rfft(x)), each with the other direction's scale.
#include <cmath>
#include <string>

#include "kernels/kernels.h"
#include "ops/common.h"

namespace uma::ops::fft {

namespace {

enum class Norm { Backward, Ortho, Forward };

Norm norm_of(std::string_view norm, const char* op) {
  if (norm == "backward") return Norm::Backward;
  if (norm == "ortho") return Norm::Ortho;
  if (norm == "forward") return Norm::Forward;
  UMA_FAIL(Value, "uma.fft.", op, ": Invalid norm value '", norm, "'; should be 'backward', 'ortho' or 'forward'");
}

Norm swapped(Norm n) { return n == Norm::Backward ? Norm::Forward : n == Norm::Forward ? Norm::Backward : n; }

/// The factor of a transform of `points` points in direction `forward` under `norm`.
double scale(Norm norm, bool forward, double points) {
  if (norm == Norm::Ortho) return 1.0 / std::sqrt(points);
  const bool divide = forward ? norm == Norm::Forward : norm == Norm::Backward;
  return divide ? 1.0 / points : 1.0;
}

/// The dtypes a transform of kind `kind` reads (`in`) and writes (`out`) for input dtype t.
struct FftDTypes {
  DType in, out;
};
FftDTypes fft_dtypes(DType t, FftKind kind, const char* op) {
  UMA_CHECK(is_float(t) || is_complex(t), Type, "uma.fft.", op,
            ": x must have a floating-point dtype (Array API standard, fft extension), got ", dtype_name(t));
  UMA_CHECK(kind != FftKind::R2C || !is_complex(t), Type, "uma.fft.", op,
            ": x must have a real floating-point dtype (Array API standard, fft extension), got ", dtype_name(t));
  const bool f64 = t == DType::Float64 || t == DType::Complex128;
  const DType real = f64 ? DType::Float64 : DType::Float32, cplx = f64 ? DType::Complex128 : DType::Complex64;
  switch (kind) {
    case FftKind::C2C: return {cplx, cplx};
    case FftKind::R2C: return {real, cplx};
    case FftKind::C2R: return {cplx, real};
  }
  UMA_ASSERT(!"unknown FftKind");
  return {cplx, cplx};
}

/// x trimmed or zero-padded to `shape` (one length per axis of x) in dtype t: x itself when
/// nothing changes, a view when x only shrinks, else one copy.
Array fitted(const Array& x, const Shape& shape, DType t) {
  Shape common = x.shape();
  bool pad = false;
  for (std::size_t d = 0; d < shape.size(); ++d) {
    pad = pad || shape[d] > x.shape()[d];
    common[d] = std::min(shape[d], x.shape()[d]);
  }
  const Array part = common == x.shape() ? x : x.view(x.data(), common, x.strides());
  if (!pad) return part.dtype() == t ? part : astype(part, t);
  Array out = zeros(shape, t, x.device());
  if (part.size() > 0) assign(out.view(out.data(), common, out.strides()), part);
  return out;
}

Array transform(const Array& x, const std::optional<Shape>& s, const std::optional<std::vector<int64_t>>& axes,
                FftKind kind, bool forward, Norm norm, const char* op) {
  const FftDTypes t = fft_dtypes(x.dtype(), kind, op);
  const FftShapes sh = fft_shapes(x.shape(), s, axes, kind, op);
  const Array in = fitted(x, sh.input, t.in);
  Array out = Array::empty(sh.result, t.out, x.device());
  if (sh.axes.empty()) {  // fftn of a 0-d array, or over no axis: the identity
    assign(out, in);
    return out;
  }
  double points = 1;
  for (int64_t n : sh.lens) points *= static_cast<double>(n);
  const double fct = scale(norm, forward, points);
  switch (kind) {
    case FftKind::C2C: kernels::fft_c2c(in, out, sh.axes, forward, fct); break;
    case FftKind::R2C: kernels::fft_r2c(in, out, sh.axes, forward, fct); break;
    case FftKind::C2R: kernels::fft_c2r(in, out, sh.axes, forward, fct); break;
  }
  return out;
}

/// The s of a one-axis transform of length n (where -1 is an invalid length, not s's "keep").
std::optional<Shape> one_length(std::optional<int64_t> n, const char* op) {
  UMA_CHECK(!n || *n >= 1, Value, "uma.fft.", op, ": Invalid number of FFT data points (", *n, ") specified.");
  return n ? std::optional<Shape>(Shape{*n}) : std::nullopt;
}

Array one_axis(const Array& x, std::optional<int64_t> n, int64_t axis, FftKind kind, bool forward,
               std::string_view norm, const char* op) {
  const Norm nm = norm_of(norm, op);
  return transform(x, one_length(n, op), std::vector<int64_t>{axis}, kind, forward, nm, op);
}

}  // namespace

Array fft(const Array& x, std::optional<int64_t> n, int64_t axis, std::string_view norm) {
  return one_axis(x, n, axis, FftKind::C2C, true, norm, "fft");
}
Array ifft(const Array& x, std::optional<int64_t> n, int64_t axis, std::string_view norm) {
  return one_axis(x, n, axis, FftKind::C2C, false, norm, "ifft");
}
Array rfft(const Array& x, std::optional<int64_t> n, int64_t axis, std::string_view norm) {
  return one_axis(x, n, axis, FftKind::R2C, true, norm, "rfft");
}
Array irfft(const Array& x, std::optional<int64_t> n, int64_t axis, std::string_view norm) {
  return one_axis(x, n, axis, FftKind::C2R, false, norm, "irfft");
}

Array hfft(const Array& x, std::optional<int64_t> n, int64_t axis, std::string_view norm) {
  const Norm nm = swapped(norm_of(norm, "hfft"));
  fft_dtypes(x.dtype(), FftKind::C2R, "hfft");  // the dtype error before conj's
  const Array c = is_complex(x.dtype()) ? unary(UnaryOp::Conj, x) : x;
  return transform(c, one_length(n, "hfft"), std::vector<int64_t>{axis}, FftKind::C2R, false, nm, "hfft");
}

Array ihfft(const Array& x, std::optional<int64_t> n, int64_t axis, std::string_view norm) {
  const Norm nm = swapped(norm_of(norm, "ihfft"));
  Array r = transform(x, one_length(n, "ihfft"), std::vector<int64_t>{axis}, FftKind::R2C, true, nm, "ihfft");
  return unary(UnaryOp::Conj, r);
}

Array fftn(const Array& x, const std::optional<Shape>& s, const std::optional<std::vector<int64_t>>& axes,
           std::string_view norm) {
  return transform(x, s, axes, FftKind::C2C, true, norm_of(norm, "fftn"), "fftn");
}
Array ifftn(const Array& x, const std::optional<Shape>& s, const std::optional<std::vector<int64_t>>& axes,
            std::string_view norm) {
  return transform(x, s, axes, FftKind::C2C, false, norm_of(norm, "ifftn"), "ifftn");
}
Array rfftn(const Array& x, const std::optional<Shape>& s, const std::optional<std::vector<int64_t>>& axes,
            std::string_view norm) {
  return transform(x, s, axes, FftKind::R2C, true, norm_of(norm, "rfftn"), "rfftn");
}
Array irfftn(const Array& x, const std::optional<Shape>& s, const std::optional<std::vector<int64_t>>& axes,
             std::string_view norm) {
  return transform(x, s, axes, FftKind::C2R, false, norm_of(norm, "irfftn"), "irfftn");
}

namespace {
/// fftfreq (half = false) or rfftfreq: k / (d * n) for the integers k of the rule, as NumPy
/// computes them (k times the float64 1 / (d * n)).
Array frequencies(int64_t n, double d, DType dtype, Device device, bool half, const char* op) {
  UMA_CHECK(n >= 1, Value, "uma.fft.", op, ": n must be a positive integer, got ", n);
  UMA_CHECK(is_float(dtype), Type, "uma.fft.", op, ": dtype must be a real floating-point dtype, got ",
            dtype_name(dtype));
  const int64_t len = half ? n / 2 + 1 : n;
  Array f = Array::empty({len}, DType::Float64);
  auto* p = static_cast<double*>(f.data());
  const double val = 1.0 / (static_cast<double>(n) * d);
  const int64_t positive = half ? len : (n - 1) / 2 + 1;
  for (int64_t i = 0; i < len; ++i) p[i] = static_cast<double>(i < positive ? i : i - n) * val;
  return device.is_cpu() ? (dtype == DType::Float64 ? f : astype(f, dtype)) : to_device(f, device, dtype);
}
}  // namespace

Array fftfreq(int64_t n, double d, DType dtype, Device device) {
  return frequencies(n, d, dtype, device, false, "fftfreq");
}
Array rfftfreq(int64_t n, double d, DType dtype, Device device) {
  return frequencies(n, d, dtype, device, true, "rfftfreq");
}

}  // namespace uma::ops::fft
