// src/kernels/cpu/reduce_impl.h — the reduction kernel template, shared by the per-dtype-group
// translation units reduce_int.cpp, reduce_float.cpp and reduce_complex.cpp (internal).
//
// Values are loaded as V (float for float16/bfloat16, bool for bool elements: byte != 0; the
// storage type otherwise). Sums and products accumulate in SumAcc: int64 for bool and signed
// integers and uint64 for unsigned ones (both wrap, as NumPy), double for real floats
// (float32/float16/bfloat16 results are rounded once at the end), complex128 for complex.
// max/min propagate NaN (a complex value is NaN when either part is); complex values compare
// lexicographically (real part, then imaginary part), as NumPy. argmax/argmin return the first
// occurrence (the first NaN).
#pragma once
#include <cmath>
#include <cstring>
#include <type_traits>

#include "kernels/cpu/convert.h"
#include "kernels/cpu/loops.h"
#include "kernels/kernels.h"
#include "uma/ops/table.h"

namespace uma::kernels::cpu::red {

template <class T> struct Load { using V = T; };
template <> struct Load<float16> { using V = float; };
template <> struct Load<bfloat16> { using V = float; };
template <> struct Load<bool8> { using V = bool; };
template <class T> using V_t = typename Load<T>::V;

/// Bool and the integer types: sums and products are exact (wrapping) integers, means float64.
template <class T> constexpr bool is_int_or_bool_v = std::is_integral_v<T> || std::is_same_v<T, bool8>;

template <class T>
using SumAcc_t = std::conditional_t<
    is_cplx_v<T>, complex128,
    std::conditional_t<std::is_same_v<T, bool8> || (std::is_integral_v<T> && std::is_signed_v<T>), int64_t,
                       std::conditional_t<std::is_integral_v<T>, uint64_t, double>>>;

/// The C++ type of the result of OP on T (the ops layer allocates that dtype; see ops/reduce.cpp).
template <class T, ReduceOp OP>
using Out_t = std::conditional_t<
    OP == ReduceOp::Sum || OP == ReduceOp::Prod,
    std::conditional_t<is_int_or_bool_v<T>, SumAcc_t<T>, T>,
    std::conditional_t<OP == ReduceOp::Mean, std::conditional_t<is_int_or_bool_v<T>, double, T>,
                       std::conditional_t<OP == ReduceOp::ArgMax || OP == ReduceOp::ArgMin, int64_t,
                                          std::conditional_t<OP == ReduceOp::All || OP == ReduceOp::Any, bool8, T>>>>;

template <class V>
inline bool is_nan(V v) {
  if constexpr (is_cplx_v<V>) return v.real() != v.real() || v.imag() != v.imag();
  else if constexpr (std::is_floating_point_v<V>) return v != v;
  else return false;
}
template <class V>
inline bool greater(V a, V b) {
  if constexpr (is_cplx_v<V>) return a.real() > b.real() || (a.real() == b.real() && a.imag() > b.imag());
  else return a > b;
}

template <class A>
inline A wrap_add(A x, A y) {
  if constexpr (std::is_integral_v<A>) return static_cast<A>(static_cast<uint64_t>(x) + static_cast<uint64_t>(y));
  else return x + y;
}
template <class A>
inline A wrap_mul(A x, A y) {
  if constexpr (std::is_integral_v<A>) return static_cast<A>(static_cast<uint64_t>(x) * static_cast<uint64_t>(y));
  else return x * y;
}

template <class T, ReduceOp OP>
struct Reducer {
  using V = V_t<T>;
  static constexpr bool kSum = OP == ReduceOp::Sum || OP == ReduceOp::Mean;
  static constexpr bool kArg = OP == ReduceOp::ArgMax || OP == ReduceOp::ArgMin;
  static constexpr bool kMax = OP == ReduceOp::Max || OP == ReduceOp::ArgMax;
  static constexpr bool kLogic = OP == ReduceOp::All || OP == ReduceOp::Any;
  using Acc = std::conditional_t<kSum || OP == ReduceOp::Prod, SumAcc_t<T>, std::conditional_t<kLogic, bool, V>>;
  Acc acc{};
  int64_t best = -1;  // argmax/argmin index; also "seen any" for max/min
  int64_t pos = 0;    // linear position within the reduced block

  void init() {
    pos = 0;
    best = -1;
    if constexpr (OP == ReduceOp::Prod) acc = Acc(1);
    else if constexpr (OP == ReduceOp::All) acc = true;
    else acc = Acc{};
  }
  // True when v should replace the current extreme.
  bool better(V v) const {
    if (best < 0) return true;
    if (is_nan(acc)) return false;
    if (is_nan(v)) return true;
    return kMax ? greater(v, acc) : greater(acc, v);
  }
  void push(V v) {
    if constexpr (kSum) acc = wrap_add(acc, static_cast<Acc>(v));
    else if constexpr (OP == ReduceOp::Prod) acc = wrap_mul(acc, static_cast<Acc>(v));
    else if constexpr (OP == ReduceOp::All) acc = acc && convert<bool>(v);
    else if constexpr (OP == ReduceOp::Any) acc = acc || convert<bool>(v);
    else if (better(v)) {
      acc = v;
      best = pos;
    }
    ++pos;
  }
  void merge(const Reducer& p, int64_t start) {
    if (p.pos == 0) return;
    if constexpr (kSum) acc = wrap_add(acc, p.acc);
    else if constexpr (OP == ReduceOp::Prod) acc = wrap_mul(acc, p.acc);
    else if constexpr (OP == ReduceOp::All) acc = acc && p.acc;
    else if constexpr (OP == ReduceOp::Any) acc = acc || p.acc;
    else if (p.best >= 0 && better(p.acc)) {
      acc = p.acc;
      best = start + p.best;
    }
    pos += p.pos;
  }
  void operator()(const std::array<char*, 1>& p, const std::array<int64_t, 1>& s, int64_t n) {
    if constexpr (kSum && (std::is_same_v<T, float> || std::is_same_v<T, double>)) {
      if (s[0] == static_cast<int64_t>(sizeof(T))) {
        const T* a = reinterpret_cast<const T*>(p[0]);
        double part[8] = {0, 0, 0, 0, 0, 0, 0, 0};
        int64_t i = 0;
        for (; i + 8 <= n; i += 8)
          for (int j = 0; j < 8; ++j) part[j] += static_cast<double>(a[i + j]);
        double t = ((part[0] + part[1]) + (part[2] + part[3])) + ((part[4] + part[5]) + (part[6] + part[7]));
        for (; i < n; ++i) t += static_cast<double>(a[i]);
        acc += t;
        pos += n;
        return;
      }
    }
    for (int64_t i = 0; i < n; ++i) push(convert<V>(*reinterpret_cast<const T*>(p[0] + i * s[0])));
  }
  template <class D>
  D result(int64_t rsize) const {
    if constexpr (kArg) return best;
    else if constexpr (OP == ReduceOp::Mean) {
      if constexpr (is_cplx_v<Acc>) return convert<D>(acc / static_cast<double>(rsize));
      else return convert<D>(static_cast<double>(acc) / static_cast<double>(rsize));
    } else {
      return convert<D>(acc);
    }
  }
};

// acc[j] += a[j] over one run (integers wrap, as the other integer sums).
template <class T, class Acc>
struct AccumulateInner {
  void operator()(const std::array<char*, 2>& p, const std::array<int64_t, 2>& s, int64_t n) {
    if (s[0] == static_cast<int64_t>(sizeof(T)) && s[1] == static_cast<int64_t>(sizeof(Acc))) {
      // A contiguous row into a contiguous accumulator row (sum over axis 0 of a C-contiguous
      // matrix): the same additions in the same order, in a loop the compiler vectorizes.
      const T* src = reinterpret_cast<const T*>(p[0]);
      Acc* dst = reinterpret_cast<Acc*>(p[1]);
      for (int64_t i = 0; i < n; ++i) dst[i] = wrap_add(dst[i], static_cast<Acc>(convert<V_t<T>>(src[i])));
      return;
    }
    for (int64_t i = 0; i < n; ++i) {
      Acc& dst = *reinterpret_cast<Acc*>(p[1] + i * s[1]);
      dst = wrap_add(dst, static_cast<Acc>(convert<V_t<T>>(*reinterpret_cast<const T*>(p[0] + i * s[0]))));
    }
  }
};

template <class T, ReduceOp OP>
void reduce_typed(const Array& a, const std::vector<bool>& mask, const Array& out) {
  using R = Reducer<T, OP>;
  using D = Out_t<T, OP>;
  UMA_ASSERT(out.dtype() == dtype_of<D>::value);
  Shape kshape, rshape;
  Strides kstr, rstr;
  for (int64_t d = 0; d < a.ndim(); ++d) {
    if (mask[d]) {
      rshape.push_back(a.shape()[d]);
      rstr.push_back(a.strides()[d]);
    } else {
      kshape.push_back(a.shape()[d]);
      kstr.push_back(a.strides()[d]);
    }
  }
  Array inner = a.view(a.data(), rshape, rstr);
  auto L = make_loop<1>(rshape, {&inner});
  const int64_t rsize = L.size;
  const int64_t nout = checked_size(kshape);
  Strides kcontig = contiguous_strides(kshape);
  const int64_t isz = static_cast<int64_t>(sizeof(T));
  D* dst = static_cast<D*>(out.data());
  if (nout == 0) return;

  if (nout == 1 && rsize >= 2 * kGrain) {
    // One output, large input: the reduced range is cut into pieces that depend on its length
    // only, reduced by as many threads as the policy gives and merged in order, so the result
    // is the same bits whatever the number of threads.
    const int64_t npieces = std::min<int64_t>(rsize / kGrain, 1024);
    const int64_t piece = (rsize + npieces - 1) / npieces;
    std::vector<R> parts(static_cast<std::size_t>(npieces));
    const int nth = omp_in_parallel() ? 1 : threads::for_work(rsize, kGrain);
#pragma omp parallel for schedule(static) num_threads(nth) if (nth > 1)
    for (int64_t p = 0; p < npieces; ++p) {
      const int64_t b = p * piece, e = std::min(rsize, b + piece);
      parts[p].init();
      if (b < e) run_range<1>(L, {static_cast<char*>(a.data())}, b, e, parts[p]);
    }
    R r;
    r.init();
    for (int64_t p = 0; p < npieces; ++p) r.merge(parts[p], p * piece);
    dst[0] = r.template result<D>(rsize);
    return;
  }

  if constexpr (R::kSum) {
    // The innermost axis is kept (e.g. a bias gradient, sum over axis 0): accumulate in the
    // input's memory order into a buffer of the accumulator type, instead of walking each
    // output's strided column.
    if (!mask.empty() && !mask.back() && rsize > 1 && nout > 1) {
      using Acc = typename R::Acc;
      Array acc = Array::empty(kshape, dtype_of<Acc>::value);
      std::memset(acc.data(), 0, static_cast<std::size_t>(acc.nbytes()));
      Strides ast(a.ndim(), 0);
      for (int64_t d = 0, k = 0; d < a.ndim(); ++d)
        if (!mask[d]) ast[d] = kcontig[k++];
      Array accv = acc.view(acc.data(), a.shape(), ast);
      auto L2 = make_loop<2>(a.shape(), {&a, &accv});
      AccumulateInner<T, Acc> accumulate;
      run_range<2>(L2, {static_cast<char*>(a.data()), static_cast<char*>(acc.data())}, 0, L2.size, accumulate);
      const Acc* ap = acc.data_as<Acc>();
      for (int64_t o = 0; o < nout; ++o) {
        R r;
        r.init();
        r.acc = ap[o];
        dst[o] = r.template result<D>(rsize);
      }
      return;
    }
  }

  auto body = [&](int64_t o) {
    int64_t off = 0;
    for (std::size_t d = 0; d < kshape.size(); ++d) off += (o / kcontig[d]) % kshape[d] * kstr[d];
    R r;
    r.init();
    char* base = static_cast<char*>(a.data()) + off * isz;
    run_range<1>(L, {base}, 0, rsize, r);
    dst[o] = r.template result<D>(rsize);
  };
  const int nth = nout > 1 && !omp_in_parallel() ? threads::for_work(nout * rsize, kGrain) : 1;
  if (nth > 1) {
#pragma omp parallel for schedule(static) num_threads(nth)
    for (int64_t o = 0; o < nout; ++o) body(o);
  } else {
    for (int64_t o = 0; o < nout; ++o) body(o);
  }
}

template <class T>
void reduce_op(ReduceOp op, const Array& a, const std::vector<bool>& mask, const Array& out) {
  switch (op) {
#define UMA_CASE(X) case ReduceOp::X: reduce_typed<T, ReduceOp::X>(a, mask, out); return;
    UMA_CASE(Sum) UMA_CASE(Mean) UMA_CASE(Max) UMA_CASE(Min) UMA_CASE(Prod) UMA_CASE(ArgMax)
    UMA_CASE(ArgMin) UMA_CASE(All) UMA_CASE(Any)
#undef UMA_CASE
  }
}

// One entry per dtype group (separate translation units keep compile times down).
void reduce_bool_int(ReduceOp op, const Array& a, const std::vector<bool>& mask, const Array& out);
void reduce_real(ReduceOp op, const Array& a, const std::vector<bool>& mask, const Array& out);
void reduce_complex(ReduceOp op, const Array& a, const std::vector<bool>& mask, const Array& out);

}  // namespace uma::kernels::cpu::red
