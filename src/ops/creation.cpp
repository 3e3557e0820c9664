// Creation, copies, casts and assignment.
#include <cmath>
#include <limits>

#include "kernels/kernels.h"
#include "ops/common.h"

namespace uma::ops {

Array astype(const Array& a, DType dtype) {
  Array out = Array::empty(a.shape(), dtype, a.device());
  kernels::cast(a, out);
  return out;
}

Array copy(const Array& a) { return astype(a, a.dtype()); }

Array contiguous(const Array& a) { return a.is_c_contiguous() ? a : copy(a); }

namespace {
// Whether the byte ranges spanned by two views may overlap.
bool may_overlap(const Array& a, const Array& b) {
  if (a.size() == 0 || b.size() == 0) return false;
  if (a.storage() != b.storage()) return false;
  auto span = [](const Array& x) {
    char* lo = static_cast<char*>(x.data());
    char* hi = lo;
    for (int64_t d = 0; d < x.ndim(); ++d) {
      int64_t ext = (x.shape()[d] - 1) * x.strides()[d] * static_cast<int64_t>(x.itemsize());
      (ext < 0 ? lo : hi) += ext;
    }
    return std::pair{lo, hi + x.itemsize()};
  };
  auto [alo, ahi] = span(a);
  auto [blo, bhi] = span(b);
  return alo < bhi && blo < ahi;
}
}  // namespace

void assign(const Array& dst, const Array& src0) {
  UMA_CHECK(dst.writable(), Value, "assignment destination is read-only");
  Shape s = broadcast_shapes(dst.shape(), src0.shape(), "assign");
  UMA_CHECK(s == dst.shape(), Value, "could not broadcast input array from shape ", shape_str(src0.shape()),
            " into shape ", shape_str(dst.shape()));
  // A source on another device moves to dst's device: the transfer is the write asked for.
  Array src = src0.device() == dst.device() ? src0 : to_device(src0, dst.device());
  Array from = may_overlap(dst, src) ? copy(src) : src;
  Array view = detail::broadcast_view(from, dst.shape());
  if (dst.device().is_cpu()) {
    kernels::cpu::cast(view, dst);
  } else if (dst.is_c_contiguous()) {
    kernels::cuda::cast(view, dst);
  } else {  // a strided device view: convert into contiguous memory, then scatter into the view
    Array tmp = Array::empty(dst.shape(), dst.dtype(), dst.device());
    kernels::cuda::cast(view, tmp);
    kernels::cuda::unpack(tmp, dst);
  }
}

Array scalar_array(const Scalar& v, DType dtype) {
  Array out = Array::empty({}, dtype);
  Array src;
  switch (v.kind) {
    case ScalarKind::Bool: {
      src = Array::empty({}, DType::Bool);
      *src.data_as<bool>() = v.b;
      break;
    }
    case ScalarKind::Int: {
      if (v.big) {  // a Python int in [2**63, 2**64): only uint64 (and float/complex) hold it
        const uint64_t u = static_cast<uint64_t>(v.i);
        UMA_CHECK(!is_integer(dtype) || dtype == DType::UInt64, Overflow, "Python integer ", u, " out of bounds for ",
                  dtype_name(dtype));
        src = Array::empty({}, DType::UInt64);
        *src.data_as<uint64_t>() = u;
        break;
      }
      if (is_integer(dtype)) {
        bool ok = visit_dtype(dtype, [&](auto t) {
          using T = decltype(t);
          if constexpr (std::is_integral_v<T> && !std::is_same_v<T, bool>) {
            if constexpr (std::is_unsigned_v<T>) return v.i >= 0 && static_cast<uint64_t>(v.i) <= std::numeric_limits<T>::max();
            else return v.i >= std::numeric_limits<T>::min() && v.i <= std::numeric_limits<T>::max();
          }
          return true;
        });
        UMA_CHECK(ok, Overflow, "Python integer ", v.i, " out of bounds for ", dtype_name(dtype));
      }
      src = Array::empty({}, DType::Int64);
      *src.data_as<int64_t>() = v.i;
      break;
    }
    case ScalarKind::Float: {
      if (is_integer(dtype)) {
        // NumPy 2: a Python float stored into an integer array must be finite and in range.
        UMA_CHECK(!std::isnan(v.f), Value, "cannot convert float NaN to integer (", dtype_name(dtype), ")");
        UMA_CHECK(!std::isinf(v.f), Overflow, "cannot convert float infinity to integer (", dtype_name(dtype), ")");
        bool ok = visit_dtype(dtype, [&](auto t) {
          using T = decltype(t);
          if constexpr (std::is_integral_v<T> && !std::is_same_v<T, bool>)
            return v.f > static_cast<double>(std::numeric_limits<T>::min()) - 1.0 &&
                   v.f < static_cast<double>(std::numeric_limits<T>::max()) + 1.0;
          return true;
        });
        UMA_CHECK(ok, Overflow, "Python float ", v.f, " out of bounds for ", dtype_name(dtype));
      }
      src = Array::empty({}, DType::Float64);
      *src.data_as<double>() = v.f;
      break;
    }
    case ScalarKind::Complex: {
      UMA_CHECK(is_complex(dtype), Type, "cannot store a Python complex ", v.c.real(), (v.c.imag() < 0 ? "" : "+"),
                v.c.imag(), "j in an array of dtype ", dtype_name(dtype), " (NumPy 2 refuses to drop the imaginary part)");
      src = Array::empty({}, DType::Complex128);
      *src.data_as<complex128>() = v.c;
      break;
    }
  }
  kernels::cpu::cast(src, out);
  return out;
}

Array full(const Shape& shape, const Scalar& value, DType dtype) {
  Array out = Array::empty(shape, dtype);
  assign(out, scalar_array(value, dtype));
  return out;
}

Array zeros(const Shape& shape, DType dtype) { return full(shape, Scalar::from_int(0), dtype); }
Array ones(const Shape& shape, DType dtype) { return full(shape, Scalar::from_int(1), dtype); }

Array arange(double start, double stop, double step, DType dtype) {
  UMA_CHECK(step != 0, Value, "arange: step must not be zero");
  UMA_CHECK(std::isfinite(start) && std::isfinite(stop) && std::isfinite(step), Value,
            "arange: start, stop and step must be finite");
  double len = std::ceil((stop - start) / step);
  UMA_CHECK(len < 0x1p62, Value, "arange: Maximum allowed size exceeded (", len, " elements)");
  int64_t n = len > 0 ? static_cast<int64_t>(len) : 0;
  Array out = Array::empty({n}, DType::Float64);
  double* p = out.data_as<double>();
  for (int64_t i = 0; i < n; ++i) p[i] = start + static_cast<double>(i) * step;
  if (is_integer(dtype)) {
    // Integer ranges are exact: NumPy computes them in the integer type.
    Array r = Array::empty({n}, DType::Int64);
    int64_t s0 = static_cast<int64_t>(start), st = static_cast<int64_t>(step);
    for (int64_t i = 0; i < n; ++i) r.data_as<int64_t>()[i] = s0 + i * st;
    return dtype == DType::Int64 ? r : astype(r, dtype);
  }
  return dtype == DType::Float64 ? out : astype(out, dtype);
}

Array eye(int64_t n, int64_t m, int64_t k, DType dtype) {
  UMA_CHECK(n >= 0 && m >= 0, Value, "eye: negative dimensions are not allowed: N=", n, ", M=", m);
  Array out = zeros({n, m}, dtype);
  Array one = scalar_array(Scalar::from_int(1), dtype);
  for (int64_t i = 0; i < n; ++i) {
    int64_t j = i + k;
    if (j < 0 || j >= m) continue;
    std::memcpy(static_cast<char*>(out.data()) + (i * m + j) * static_cast<int64_t>(out.itemsize()), one.data(),
                out.itemsize());
  }
  return out;
}

}  // namespace uma::ops
