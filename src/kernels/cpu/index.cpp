// CPU kernels of integer-array indexing: gather (take), scatter (set / add, np.add.at
// semantics for repeated indices) and dst += src on every dtype.
//
// take/scatter see their operands as (outer, n, inner) blocks of C-contiguous memory: the
// indexed axis in the middle, whole `inner` runs moved with memcpy (any dtype, by itemsize).
#include <cstring>

#include "kernels/axis_blocks.h"
#include "kernels/cpu/convert.h"
#include "kernels/cpu/loops.h"
#include "kernels/kernels.h"

namespace uma::kernels::cpu {

namespace {

// dst[i] += src[i] for n elements with byte strides; NumPy's add: bool is logical or, integers
// wrap, float16/bfloat16 add in float and round.
template <class T>
void add_run(char* d, const char* s, int64_t n, int64_t ds, int64_t ss) {
  for (int64_t i = 0; i < n; ++i) {
    T& x = *reinterpret_cast<T*>(d + i * ds);
    const T y = *reinterpret_cast<const T*>(s + i * ss);
    if constexpr (std::is_same_v<T, bool8>) x = x || y;  // the values x != 0, y != 0; stored as 0 or 1
    else if constexpr (std::is_integral_v<T>) x = static_cast<T>(static_cast<uint64_t>(x) + static_cast<uint64_t>(y));
    else if constexpr (std::is_same_v<T, bfloat16>) x = bfloat16::from_float(x.to_float() + y.to_float());
    else if constexpr (std::is_same_v<T, float16>) x = static_cast<float16>(static_cast<float>(x) + static_cast<float>(y));
    else x = x + y;
  }
}

using AddRun = void (*)(char*, const char*, int64_t, int64_t, int64_t);

AddRun add_run_for(DType t) {
  return visit_dtype(t, [](auto v) -> AddRun { return &add_run<decltype(v)>; });
}

struct AddInner {
  AddRun fn;
  void operator()(const std::array<char*, 2>& p, const std::array<int64_t, 2>& s, int64_t n) {
    fn(p[0], p[1], n, s[0], s[1]);
  }
};


}  // namespace

void add_into(const Array& dst, const Array& src) {
  UMA_ASSERT(dst.dtype() == src.dtype() && dst.shape() == src.shape());
  std::array<const Array*, 2> ops{&dst, &src};
  auto L = make_loop<2>(dst.shape(), ops);
  AddInner inner{add_run_for(dst.dtype())};
  run_range<2>(L, bases(ops), 0, L.size, inner);
}

void take(const Array& a, const Array& idx, int64_t axis, const Array& out) {
  UMA_ASSERT(a.is_c_contiguous() && out.is_c_contiguous() && idx.is_c_contiguous() && idx.dtype() == DType::Int64);
  const AxisBlocks b = blocks_of(a.shape(), axis);
  const int64_t n = a.shape()[axis], m = idx.size();
  const std::size_t run = static_cast<std::size_t>(b.inner) * a.itemsize();
  if (run == 0 || b.outer == 0 || m == 0) return;
  const int64_t* ix = idx.data_as<int64_t>();
  const char* src = static_cast<const char*>(a.data());
  char* dst = static_cast<char*>(out.data());
  for (int64_t o = 0; o < b.outer; ++o)
    for (int64_t j = 0; j < m; ++j)
      std::memcpy(dst + (o * m + j) * run, src + (o * n + ix[j]) * run, run);
}

void scatter(const Array& dst, const Array& idx, int64_t axis, const Array& src, bool accumulate) {
  UMA_ASSERT(dst.is_c_contiguous() && src.is_c_contiguous() && idx.is_c_contiguous() && idx.dtype() == DType::Int64 &&
             src.dtype() == dst.dtype());
  const AxisBlocks b = blocks_of(dst.shape(), axis);
  const int64_t n = dst.shape()[axis], m = idx.size();
  const int64_t isz = static_cast<int64_t>(dst.itemsize());
  const std::size_t run = static_cast<std::size_t>(b.inner) * dst.itemsize();
  if (run == 0 || b.outer == 0 || m == 0) return;
  const int64_t* ix = idx.data_as<int64_t>();
  const char* s = static_cast<const char*>(src.data());
  char* d = static_cast<char*>(dst.data());
  const AddRun add = add_run_for(dst.dtype());
  for (int64_t o = 0; o < b.outer; ++o)
    for (int64_t j = 0; j < m; ++j) {
      char* to = d + (o * n + ix[j]) * static_cast<int64_t>(run);
      const char* from = s + (o * m + j) * static_cast<int64_t>(run);
      if (accumulate) add(to, from, b.inner, isz, isz);
      else std::memcpy(to, from, run);
    }
}

}  // namespace uma::kernels::cpu
