// Creation, copies, casts and assignment.
#include <cmath>
#include <cstring>
#include <limits>

#include "kernels/cpu/convert.h"
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
// Whether the byte ranges spanned by two views on one device may overlap. The addresses decide,
// not the storages: two imports of one foreign buffer (a NumPy array and its transpose, each
// adopted) are two storages over the same bytes.
bool may_overlap(const Array& a, const Array& b) {
  if (a.size() == 0 || b.size() == 0) return false;
  if (a.device() != b.device()) return false;
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

void assign(const Array& dst, const Array& src1) {
  UMA_CHECK(dst.writable(), Value, "assignment destination is read-only");
  // NumPy's assignment rule: leading length-1 axes of the source beyond dst's rank drop.
  Array src0 = src1;
  while (src0.ndim() > dst.ndim() && src0.shape()[0] == 1)
    src0 = src0.view(src0.data(), Shape(src0.shape().begin() + 1, src0.shape().end()),
                     Strides(src0.strides().begin() + 1, src0.strides().end()));
  Shape s = broadcast_shapes(dst.shape(), src0.shape(), "assign");
  UMA_CHECK(s == dst.shape(), Value, "could not broadcast input array from shape ", shape_str(src0.shape()),
            " into shape ", shape_str(dst.shape()));
  // A source on another device moves to dst's device: the transfer is the write asked for.
  Array src = on_device(src0, dst.device());
  Array from = may_overlap(dst, src) ? copy(src) : src;
  Array view = from.broadcast_view(dst.shape());
  kernels::cast_into(view, dst);
}

Array scalar_array(const Scalar& v, DType dtype) {
  Array out = Array::empty({}, dtype);
  Array src;
  switch (v.kind) {
    case ScalarKind::Bool: {
      src = Array::empty({}, DType::Bool);
      *src.data_as<bool8>() = v.b;
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
                v.c.imag(), "j in an array of dtype ", dtype_name(dtype), " (uma never drops the imaginary part; take .real first, as NumPy's asarray and item "
                "assignment require)");
      src = Array::empty({}, DType::Complex128);
      *src.data_as<complex128>() = v.c;
      break;
    }
  }
  kernels::cpu::cast(src, out);
  return out;
}

Array full(const Shape& shape, const Scalar& value, DType dtype, Device device) {
  Array out = Array::empty(shape, dtype, device);
  kernels::fill(out, scalar_array(value, dtype));
  return out;
}

Array zeros(const Shape& shape, DType dtype, Device device) { return full(shape, Scalar::from_int(0), dtype, device); }
Array ones(const Shape& shape, DType dtype, Device device) { return full(shape, Scalar::from_int(1), dtype, device); }

namespace {
bool int_like(const Scalar& v) { return v.kind == ScalarKind::Int || v.kind == ScalarKind::Bool; }
// The exact value of an integer (or bool) scalar.
__int128 int_value(const Scalar& v) {
  if (v.kind == ScalarKind::Bool) return v.b ? 1 : 0;
  return v.big ? static_cast<__int128>(static_cast<uint64_t>(v.i)) : static_cast<__int128>(v.i);
}
double float_value(const Scalar& v) { return int_like(v) ? static_cast<double>(int_value(v)) : v.f; }
// The scalar of an exact integer value: OverflowError naming it when no integer dtype holds it.
Scalar int_scalar(__int128 v, const char* what) {
  if (v >= INT64_MIN && v <= INT64_MAX) return Scalar::from_int(static_cast<int64_t>(v));
  UMA_CHECK(v >= 0 && v <= static_cast<__int128>(UINT64_MAX), Overflow, "arange: ", what, " ",
            v < 0 ? "below -2**63" : "beyond 2**64", " does not fit any integer dtype");
  return Scalar::from_uint(static_cast<uint64_t>(v));
}

// NumPy's fill rule for element i >= 2 of a range whose first two elements are p[0], p[1]:
// start + i * (p[1] - p[0]) in the element type's arithmetic (integers modulo 2**bits, float16
// and bfloat16 in float32, complex per part).
template <class T>
void fill_range(T* p, int64_t n) {
  if constexpr (std::is_integral_v<T>) {
    const uint64_t start = static_cast<uint64_t>(p[0]);
    const uint64_t delta = static_cast<uint64_t>(p[1]) - start;
    for (int64_t i = 2; i < n; ++i) p[i] = static_cast<T>(start + static_cast<uint64_t>(i) * delta);
  } else if constexpr (std::is_same_v<T, float16> || std::is_same_v<T, bfloat16>) {
    auto f = [](T v) { return static_cast<float>(kernels::cpu::convert<float>(v)); };
    const float start = f(p[0]), delta = f(p[1]) - start;
    for (int64_t i = 2; i < n; ++i) p[i] = kernels::cpu::convert<T>(start + static_cast<float>(i) * delta);
  } else if constexpr (kernels::cpu::is_cplx_v<T>) {
    using R = typename T::value_type;
    const R sr = p[0].real(), si = p[0].imag(), dr = p[1].real() - sr, di = p[1].imag() - si;
    for (int64_t i = 2; i < n; ++i) p[i] = T(sr + static_cast<R>(i) * dr, si + static_cast<R>(i) * di);
  } else {  // float, double
    const T start = p[0], delta = p[1] - start;
    for (int64_t i = 2; i < n; ++i) p[i] = start + static_cast<T>(i) * delta;
  }
}
}  // namespace

DType arange_default_dtype(const Scalar& start, const Scalar& stop, const Scalar& step) {
  for (const Scalar* v : {&start, &stop, &step})
    if (!int_like(*v) || v->big) return DType::Float64;
  return DType::Int64;
}

Array arange(const Scalar& start, const Scalar& stop, const Scalar& step, DType dtype) {
  for (const Scalar* v : {&start, &stop, &step})
    UMA_CHECK(v->kind != ScalarKind::Complex, Type, "arange: complex arguments are not supported");
  // The length, as NumPy: ceil((stop - start) / step), exact for integers (Python's int
  // division is correctly rounded, and a feasible length is far below 2**53).
  int64_t n = 0;
  if (int_like(start) && int_like(stop) && int_like(step)) {
    const __int128 a = int_value(start), b = int_value(stop), s = int_value(step);
    UMA_CHECK(s != 0, Value, "arange: step must not be zero");
    const __int128 range = b - a;
    __int128 len = range / s;
    if (len * s != range && ((range > 0) == (s > 0))) ++len;  // ceil of the quotient
    UMA_CHECK(len < (static_cast<__int128>(1) << 62), Value, "arange: Maximum allowed size exceeded");
    n = len > 0 ? static_cast<int64_t>(len) : 0;
  } else {
    const double a = float_value(start), b = float_value(stop), s = float_value(step);
    UMA_CHECK(s != 0, Value, "arange: step must not be zero");
    // A quotient that underflows to zero (an infinite or huge step) leaves start alone in the
    // range when it has the step's sign: NumPy's length 1 (0 for -0.0).
    const double q = (b - a) / s;
    const double len = q == 0.0 && b - a != 0.0 ? (std::signbit(q) ? 0.0 : 1.0) : std::ceil(q);
    UMA_CHECK(!std::isnan(len), Value, "arange: cannot compute length (start ", a, ", stop ", b, ", step ", s, ")");
    UMA_CHECK(len < 0x1p62, Value, "arange: Maximum allowed size exceeded");
    n = len > 0 ? static_cast<int64_t>(len) : 0;
  }
  return arange_count(start, step, n, dtype);
}

Array arange_count(const Scalar& start, const Scalar& step, int64_t n, DType dtype) {
  for (const Scalar* v : {&start, &step})
    UMA_CHECK(v->kind != ScalarKind::Complex, Type, "arange: complex arguments are not supported");
  UMA_CHECK(n >= 0 && n < (int64_t{1} << 62), Value, "arange: Maximum allowed size exceeded");
  UMA_CHECK(dtype != DType::Bool || n <= 2, Type,
            "arange() is only supported for booleans when the result has at most length 2.");
  Array out = Array::empty({n}, dtype);
  if (n == 0) return out;
  // Elements 0 and 1 are start and start + step (computed exactly for integers) stored in the
  // dtype, with NumPy 2's OverflowError for values an integer dtype cannot hold.
  const std::size_t isz = out.itemsize();
  char* p = static_cast<char*>(out.data());
  std::memcpy(p, scalar_array(start, dtype).data(), isz);
  if (n == 1) return out;
  Scalar second = int_like(start) && int_like(step) ? int_scalar(int_value(start) + int_value(step), "start + step")
                                                    : Scalar::from_float(float_value(start) + float_value(step));
  if (second.kind == ScalarKind::Float && int_like(start) && int_like(step)) second = Scalar::from_float(second.f);
  std::memcpy(p + isz, scalar_array(second, dtype).data(), isz);
  if (dtype != DType::Bool)
    visit_dtype(dtype, [&](auto t) {
      using T = decltype(t);
      if constexpr (!std::is_same_v<T, bool8>) fill_range(out.data_as<T>(), n);
    });
  return out;
}

Array linspace(const Scalar& start, const Scalar& stop, int64_t num, bool endpoint, DType dtype) {
  UMA_CHECK(num >= 0, Value, "Number of samples, ", num, ", must be non-negative.");
  const bool cplx = start.kind == ScalarKind::Complex || stop.kind == ScalarKind::Complex;
  const int64_t div = endpoint ? num - 1 : num;
  Array y = Array::empty({num}, cplx ? DType::Complex128 : DType::Float64);
  // NumPy's linspace in the float64 (complex128) of Python scalars: y_i = start + i * step with
  // step = (stop - start) / div, or start + (i / div) * delta when step underflows to 0, and the
  // last element exactly stop when endpoint; integer dtypes take the floor.
  auto run = [&](auto zero) {
    using C = decltype(zero);
    auto value = [](const Scalar& v) -> C {
      if constexpr (std::is_same_v<C, double>) return float_value(v);
      else return v.kind == ScalarKind::Complex ? v.c : C(float_value(v), 0.0);
    };
    const C a = value(start), b = value(stop), delta = b - a;
    C* p = y.data_as<C>();
    if (div > 0) {
      const C step = delta / static_cast<double>(div);
      if (step == C(0)) {
        for (int64_t i = 0; i < num; ++i) p[i] = static_cast<double>(i) / static_cast<double>(div) * delta + a;
      } else {
        for (int64_t i = 0; i < num; ++i) p[i] = static_cast<double>(i) * step + a;
      }
    } else {
      for (int64_t i = 0; i < num; ++i) p[i] = static_cast<double>(i) * delta + a;
    }
    if (endpoint && num > 1) p[num - 1] = b;
    if constexpr (std::is_same_v<C, double>)
      if (is_integer(dtype))
        for (int64_t i = 0; i < num; ++i) p[i] = std::floor(p[i]);
  };
  if (cplx) run(complex128{});
  else run(0.0);
  return y.dtype() == dtype ? y : astype(y, dtype);
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
