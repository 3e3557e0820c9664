// CPU reductions. Sums of floats accumulate in double (float32 results are rounded once at
// the end), integer sums in int64 with wrap-around; max/min propagate NaN; argmax/argmin
// return the first occurrence (the first NaN, if any), as NumPy.
#include <cmath>
#include <type_traits>

#include "kernels/cpu/convert.h"
#include "kernels/cpu/loops.h"
#include "kernels/kernels.h"
#include "uma/ops.h"

namespace uma::kernels::cpu {

namespace {

template <class T>
using SumAcc = std::conditional_t<std::is_floating_point_v<T>, double, int64_t>;

template <class T, ReduceOp OP>
struct Reducer {
  static constexpr bool kSum = OP == ReduceOp::Sum || OP == ReduceOp::Mean;
  static constexpr bool kArg = OP == ReduceOp::ArgMax || OP == ReduceOp::ArgMin;
  static constexpr bool kMax = OP == ReduceOp::Max || OP == ReduceOp::ArgMax;
  using Acc = std::conditional_t<kSum || OP == ReduceOp::Prod, SumAcc<T>,
                                 std::conditional_t<OP == ReduceOp::All || OP == ReduceOp::Any, bool, T>>;
  Acc acc{};
  int64_t best = -1;  // argmax/argmin index; also "seen any" for max/min
  int64_t pos = 0;    // linear position within the reduced block

  void init() {
    pos = 0;
    best = -1;
    if constexpr (OP == ReduceOp::Prod) acc = 1;
    else if constexpr (OP == ReduceOp::All) acc = true;
    else acc = Acc{};
  }
  static bool isnan(T v) { if constexpr (std::is_floating_point_v<T>) return v != v; else return false; }
  // True when v should replace the current extreme.
  bool better(T v) const {
    if (best < 0) return true;
    if (isnan(acc)) return false;
    if (isnan(v)) return true;
    return kMax ? v > acc : v < acc;
  }
  void push(T v) {
    if constexpr (kSum) {
      if constexpr (std::is_integral_v<Acc>) acc = static_cast<Acc>(static_cast<uint64_t>(acc) + static_cast<uint64_t>(static_cast<Acc>(v)));
      else acc += static_cast<Acc>(v);
    } else if constexpr (OP == ReduceOp::Prod) {
      if constexpr (std::is_integral_v<Acc>) acc = static_cast<Acc>(static_cast<uint64_t>(acc) * static_cast<uint64_t>(static_cast<Acc>(v)));
      else acc *= static_cast<Acc>(v);
    } else if constexpr (OP == ReduceOp::All) {
      acc = acc && static_cast<bool>(v);
    } else if constexpr (OP == ReduceOp::Any) {
      acc = acc || static_cast<bool>(v);
    } else {
      if (better(v)) {
        acc = v;
        best = pos;
      }
    }
    ++pos;
  }
  void operator()(const std::array<char*, 1>& p, const std::array<int64_t, 1>& s, int64_t n) {
    if constexpr (kSum && std::is_floating_point_v<T>) {
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
    for (int64_t i = 0; i < n; ++i) push(*reinterpret_cast<const T*>(p[0] + i * s[0]));
  }
};

// acc[j] += a[j] over one run (integers wrap, as the other integer sums).
template <class T, class Acc>
struct AccumulateInner {
  void operator()(const std::array<char*, 2>& p, const std::array<int64_t, 2>& s, int64_t n) {
    for (int64_t i = 0; i < n; ++i) {
      Acc& dst = *reinterpret_cast<Acc*>(p[1] + i * s[1]);
      const T v = *reinterpret_cast<const T*>(p[0] + i * s[0]);
      if constexpr (std::is_integral_v<Acc>)
        dst = static_cast<Acc>(static_cast<uint64_t>(dst) + static_cast<uint64_t>(static_cast<Acc>(v)));
      else
        dst += static_cast<Acc>(v);
    }
  }
};

template <class T, ReduceOp OP>
void reduce_typed(const Array& a, const std::vector<bool>& mask, const Array& out) {
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
  Array outer = a.view(a.data(), kshape, kstr);
  const int64_t nout = outer.size();
  Strides kcontig = contiguous_strides(kshape);
  const int64_t isz = static_cast<int64_t>(sizeof(T));

  auto finish = [&](Reducer<T, OP>& r, int64_t o) {
    visit_dtype(out.dtype(), [&](auto d) {
      using D = decltype(d);
      D* dst = static_cast<D*>(out.data()) + o;
      if constexpr (Reducer<T, OP>::kArg) {
        if constexpr (std::is_same_v<D, int64_t>) *dst = r.best;
      } else if constexpr (OP == ReduceOp::Mean) {
        *dst = convert<D>(static_cast<double>(r.acc) / static_cast<double>(rsize));
      } else {
        *dst = convert<D>(r.acc);
      }
    });
  };

  auto offset_of = [&](int64_t o) {
    int64_t off = 0;
    for (std::size_t d = 0; d < kshape.size(); ++d) off += (o / kcontig[d]) % kshape[d] * kstr[d];
    return off;
  };

  if (nout == 1 && rsize >= kParallelThreshold && omp_get_max_threads() > 1 && !omp_in_parallel()) {
    // One output, large input: split the reduced range across threads and merge in order.
    int T_ = omp_get_max_threads();
    std::vector<Reducer<T, OP>> parts(T_);
    std::vector<int64_t> starts(T_);
#pragma omp parallel num_threads(T_)
    {
      int t = omp_get_thread_num(), nt = omp_get_num_threads();
      int64_t chunk = (rsize + nt - 1) / nt;
      int64_t b = t * chunk, e = b + chunk < rsize ? b + chunk : rsize;
      parts[t].init();
      starts[t] = b;
      if (b < e) run_range<1>(L, {static_cast<char*>(a.data())}, b, e, parts[t]);
    }
    Reducer<T, OP> r;
    r.init();
    for (int t = 0; t < T_; ++t) {
      auto& p = parts[t];
      if (p.pos == 0) continue;
      if constexpr (Reducer<T, OP>::kSum || OP == ReduceOp::Prod || OP == ReduceOp::All || OP == ReduceOp::Any) {
        Reducer<T, OP> tmp = r;
        if constexpr (OP == ReduceOp::Prod) {
          if constexpr (std::is_integral_v<typename Reducer<T, OP>::Acc>)
            r.acc = static_cast<typename Reducer<T, OP>::Acc>(static_cast<uint64_t>(tmp.acc) * static_cast<uint64_t>(p.acc));
          else r.acc = tmp.acc * p.acc;
        } else if constexpr (OP == ReduceOp::All) r.acc = tmp.acc && p.acc;
        else if constexpr (OP == ReduceOp::Any) r.acc = tmp.acc || p.acc;
        else if constexpr (std::is_integral_v<typename Reducer<T, OP>::Acc>)
          r.acc = static_cast<typename Reducer<T, OP>::Acc>(static_cast<uint64_t>(tmp.acc) + static_cast<uint64_t>(p.acc));
        else r.acc = tmp.acc + p.acc;
      } else {
        if (p.best >= 0 && r.better(p.acc)) {
          r.acc = p.acc;
          r.best = starts[t] + p.best;
        }
      }
    }
    finish(r, 0);
    return;
  }

  if constexpr (OP == ReduceOp::Sum || OP == ReduceOp::Mean) {
    // The innermost axis is kept (e.g. a bias gradient, sum over axis 0): accumulate in the
    // input's memory order into a buffer of the accumulator type, instead of walking each
    // output's strided column.
    if (!mask.empty() && !mask.back() && rsize > 1 && nout > 1) {
      using Acc = typename Reducer<T, OP>::Acc;
      Array acc = ops::zeros(kshape, std::is_floating_point_v<Acc> ? DType::Float64 : DType::Int64);
      Strides ast(a.ndim(), 0);
      for (int64_t d = 0, k = 0; d < a.ndim(); ++d)
        if (!mask[d]) ast[d] = kcontig[k++];
      Array accv = acc.view(acc.data(), a.shape(), ast);
      auto L2 = make_loop<2>(a.shape(), {&a, &accv});
      AccumulateInner<T, Acc> accumulate;
      run_range<2>(L2, {static_cast<char*>(a.data()), static_cast<char*>(acc.data())}, 0, L2.size, accumulate);
      const Acc* ap = acc.data_as<Acc>();
      visit_dtype(out.dtype(), [&](auto d) {
        using D = decltype(d);
        D* dst = static_cast<D*>(out.data());
        for (int64_t o = 0; o < nout; ++o) {
          if constexpr (OP == ReduceOp::Mean) dst[o] = convert<D>(static_cast<double>(ap[o]) / static_cast<double>(rsize));
          else dst[o] = convert<D>(ap[o]);
        }
      });
      return;
    }
  }

  auto body = [&](int64_t o) {
    Reducer<T, OP> r;
    r.init();
    char* base = static_cast<char*>(a.data()) + offset_of(o) * isz;
    run_range<1>(L, {base}, 0, rsize, r);
    finish(r, o);
  };
  if (nout * rsize >= kParallelThreshold && nout > 1 && omp_get_max_threads() > 1 && !omp_in_parallel()) {
#pragma omp parallel for schedule(static)
    for (int64_t o = 0; o < nout; ++o) body(o);
  } else {
    for (int64_t o = 0; o < nout; ++o) body(o);
  }
}

template <class F>
void visit_compute(DType t, F&& f) {
  switch (t) {
    case DType::Bool: f(bool{}); return;
    case DType::Int32: f(int32_t{}); return;
    case DType::Int64: f(int64_t{}); return;
    case DType::Float32: f(float{}); return;
    case DType::Float64: f(double{}); return;
    default: UMA_ASSERT(false && "not a compute dtype");
  }
}

}  // namespace

void reduce(ReduceOp op, const Array& a, const std::vector<bool>& mask, const Array& out) {
  visit_compute(a.dtype(), [&](auto t) {
    using T = decltype(t);
    switch (op) {
#define UMA_CASE(X) case ReduceOp::X: reduce_typed<T, ReduceOp::X>(a, mask, out); return;
      UMA_CASE(Sum) UMA_CASE(Mean) UMA_CASE(Max) UMA_CASE(Min) UMA_CASE(Prod) UMA_CASE(ArgMax)
      UMA_CASE(ArgMin) UMA_CASE(All) UMA_CASE(Any)
#undef UMA_CASE
    }
  });
}

}  // namespace uma::kernels::cpu
