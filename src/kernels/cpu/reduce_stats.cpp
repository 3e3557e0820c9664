// CPU kernels of the statistics reductions (var/std, logsumexp) and of the cumulative ones
// (cumsum/cumprod), on every dtype.
//
// var/std: each output's block is converted to double (complex128 for complex inputs), then
// var = sum(|x - mean|^2) / max(n - ddof, 0) (two passes, as NumPy); std = sqrt(var).
// logsumexp: m = max(x); log(sum(exp(x - m))) + m, with m = 0 when it is not finite (so all
// -inf gives -inf, a +inf gives +inf, a NaN gives NaN), computed in double.
// cumsum/cumprod accumulate in the sum accumulator of reduce_impl.h (integers wrap, floats in
// double) and round each partial result to the output dtype.
#include <cmath>
#include <vector>

#include "kernels/cpu/reduce_impl.h"

namespace uma::kernels::cpu {

namespace {

template <class T, class C>
struct Gather {
  std::vector<C>* buf;
  void operator()(const std::array<char*, 1>& p, const std::array<int64_t, 1>& s, int64_t n) {
    for (int64_t i = 0; i < n; ++i) buf->push_back(convert<C>(*reinterpret_cast<const T*>(p[0] + i * s[0])));
  }
};

// Calls f(o, block) for each output o (C order over the kept axes) with the reduced block's
// values converted to C.
template <class T, class C, class F>
void for_each_block(const Array& a, const std::vector<bool>& mask, F&& f) {
  Shape kshape, rshape;
  Strides kstr, rstr;
  for (int64_t d = 0; d < a.ndim(); ++d) {
    (mask[d] ? rshape : kshape).push_back(a.shape()[d]);
    (mask[d] ? rstr : kstr).push_back(a.strides()[d]);
  }
  Array inner = a.view(a.data(), rshape, rstr);
  auto L = make_loop<1>(rshape, {&inner});
  const int64_t nout = checked_size(kshape);
  const Strides kc = contiguous_strides(kshape);
  std::vector<C> block;
  block.reserve(static_cast<std::size_t>(L.size));
  for (int64_t o = 0; o < nout; ++o) {
    int64_t off = 0;
    for (std::size_t d = 0; d < kshape.size(); ++d) off += (o / kc[d]) % kshape[d] * kstr[d];
    block.clear();
    Gather<T, C> g{&block};
    run_range<1>(L, {static_cast<char*>(a.data()) + off * static_cast<int64_t>(sizeof(T))}, 0, L.size, g);
    f(o, block);
  }
}

template <class D>
void store_real(const Array& out, int64_t o, double v) {
  out.data_as<D>()[o] = convert<D>(v);
}

void store(const Array& out, int64_t o, double v) {
  switch (out.dtype()) {
    case DType::Float16: return store_real<float16>(out, o, v);
    case DType::BFloat16: return store_real<bfloat16>(out, o, v);
    case DType::Float32: return store_real<float>(out, o, v);
    case DType::Float64: return store_real<double>(out, o, v);
    default: UMA_ASSERT(false && "statistics reduction: output must be a real float");
  }
}

}  // namespace

void var(const Array& a, const std::vector<bool>& mask, double ddof, bool take_sqrt, const Array& out) {
  visit_dtype(a.dtype(), [&](auto t) {
    using T = decltype(t);
    using C = std::conditional_t<is_cplx_v<T>, complex128, double>;
    for_each_block<T, C>(a, mask, [&](int64_t o, const std::vector<C>& x) {
      const double n = static_cast<double>(x.size());
      C s{};
      for (const C& v : x) s += v;
      const C mean = s / n;
      double ss = 0;
      for (const C& v : x) {
        const C d = v - mean;
        if constexpr (is_cplx_v<C>) ss += d.real() * d.real() + d.imag() * d.imag();
        else ss += d * d;
      }
      const double denom = n - ddof > 0 ? n - ddof : 0.0;
      double r = ss / denom;
      if (take_sqrt) r = std::sqrt(r);
      store(out, o, r);
    });
  });
}

void logsumexp(const Array& a, const std::vector<bool>& mask, const Array& out) {
  visit_dtype(a.dtype(), [&](auto t) {
    using T = decltype(t);
    if constexpr (is_cplx_v<T>) {
      UMA_ASSERT(false && "logsumexp: complex input");
    } else {
      for_each_block<T, double>(a, mask, [&](int64_t o, const std::vector<double>& x) {
        double m = -INFINITY;
        bool nan = false;
        for (double v : x) {
          if (v != v) nan = true;
          else if (v > m) m = v;
        }
        if (nan) return store(out, o, NAN);
        const double shift = std::isfinite(m) ? m : 0.0;
        double s = 0;
        for (double v : x) s += std::exp(v - shift);
        store(out, o, std::log(s) + shift);
      });
    }
  });
}

namespace {

template <class T, bool PROD>
void cumulate_typed(const Array& a, int64_t axis, const Array& out) {
  using D = red::Out_t<T, ReduceOp::Sum>;
  using Acc = red::SumAcc_t<T>;
  UMA_ASSERT(out.dtype() == dtype_of<D>::value && out.is_c_contiguous());
  const int64_t nd = a.ndim();
  const int64_t len = a.shape()[axis];
  if (a.size() == 0) return;
  Shape oshape;
  Strides astr, ostr;
  const Strides oc = contiguous_strides(out.shape());
  for (int64_t d = 0; d < nd; ++d)
    if (d != axis) {
      oshape.push_back(a.shape()[d]);
      astr.push_back(a.strides()[d]);
      ostr.push_back(oc[d]);
    }
  const int64_t nlines = checked_size(oshape);
  const Strides lc = contiguous_strides(oshape);
  const int64_t as = a.strides()[axis], os = oc[axis];
  const T* src = a.data_as<T>();
  D* dst = out.data_as<D>();
  for (int64_t l = 0; l < nlines; ++l) {
    int64_t ao = 0, oo = 0;
    for (std::size_t d = 0; d < oshape.size(); ++d) {
      const int64_t i = (l / lc[d]) % oshape[d];
      ao += i * astr[d];
      oo += i * ostr[d];
    }
    // The first element is taken as it is, as NumPy's accumulate does (1 * (1+infj) would be
    // nan+infj, 0 + -0.0 would be +0.0).
    Acc acc{};
    for (int64_t k = 0; k < len; ++k) {
      const Acc v = static_cast<Acc>(convert<red::V_t<T>>(src[ao + k * as]));
      acc = k == 0 ? v : PROD ? red::wrap_mul(acc, v) : red::wrap_add(acc, v);
      dst[oo + k * os] = convert<D>(acc);
    }
  }
}

}  // namespace

void cumulate(const Array& a, int64_t axis, bool product, const Array& out) {
  visit_dtype(a.dtype(), [&](auto t) {
    using T = decltype(t);
    if (product) cumulate_typed<T, true>(a, axis, out);
    else cumulate_typed<T, false>(a, axis, out);
  });
}

}  // namespace uma::kernels::cpu
