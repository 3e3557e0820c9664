// CPU cast kernel: every dtype to every dtype, any layouts.
#include <cstring>

#include "kernels/cpu/convert.h"
#include "kernels/cpu/loops.h"
#include "kernels/kernels.h"

namespace uma::kernels::cpu {

namespace {
template <class S, class D>
struct CastInner {
  void operator()(const std::array<char*, 2>& p, const std::array<int64_t, 2>& s, int64_t n) {
    const char* src = p[0];
    char* dst = p[1];
    if constexpr (std::is_same_v<S, D>) {
      if (s[0] == static_cast<int64_t>(sizeof(S)) && s[1] == static_cast<int64_t>(sizeof(D))) {
        std::memcpy(dst, src, static_cast<std::size_t>(n) * sizeof(S));
        return;
      }
    }
    if (s[0] == static_cast<int64_t>(sizeof(S)) && s[1] == static_cast<int64_t>(sizeof(D)) &&
        reinterpret_cast<uintptr_t>(src) % alignof(S) == 0 && reinterpret_cast<uintptr_t>(dst) % alignof(D) == 0) {
      const S* a = reinterpret_cast<const S*>(src);
      D* o = reinterpret_cast<D*>(dst);
      for (int64_t i = 0; i < n; ++i) o[i] = convert<D>(a[i]);
      return;
    }
    for (int64_t i = 0; i < n; ++i) {
      S v;
      std::memcpy(&v, src + i * s[0], sizeof(S));
      D r = convert<D>(v);
      std::memcpy(dst + i * s[1], &r, sizeof(D));
    }
  }
};
}  // namespace

void cast(const Array& src, const Array& dst) {
  UMA_ASSERT(src.shape() == dst.shape());
  std::array<const Array*, 2> ops{&src, &dst};
  auto L = make_loop<2>(dst.shape(), ops);
  visit_dtype(src.dtype(), [&](auto s) {
    using S = decltype(s);
    visit_dtype(dst.dtype(), [&](auto d) {
      using D = decltype(d);
      run_loop<2>(L, bases(ops), CastInner<S, D>{});
    });
  });
}

}  // namespace uma::kernels::cpu
