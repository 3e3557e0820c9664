// libmvec dispatch. This file is compiled with -mavx2 -mfma (CMakeLists.txt); its vector
// code runs only after the run-time check in vmath_unary.
#include "kernels/cpu/vmath.h"

#include <immintrin.h>

#include <cstring>

extern "C" {
__m256d _ZGVdN4v_exp(__m256d);
__m256d _ZGVdN4v_log(__m256d);
__m256d _ZGVdN4v_log1p(__m256d);
__m256d _ZGVdN4v_expm1(__m256d);
__m256d _ZGVdN4v_tanh(__m256d);
__m256d _ZGVdN4v_sin(__m256d);
__m256d _ZGVdN4v_cos(__m256d);
__m256 _ZGVdN8v_expf(__m256);
__m256 _ZGVdN8v_logf(__m256);
__m256 _ZGVdN8v_log1pf(__m256);
__m256 _ZGVdN8v_expm1f(__m256);
__m256 _ZGVdN8v_tanhf(__m256);
__m256 _ZGVdN8v_sinf(__m256);
__m256 _ZGVdN8v_cosf(__m256);
}

namespace uma::kernels::cpu {

namespace {

bool cpu_ok() noexcept {
  static const bool ok = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
  return ok;
}

template <class V, class T, int W, class F>
void run(F f, const T* a, T* o, int64_t n) {
  int64_t i = 0;
  for (; i + W <= n; i += W) {
    V v;
    std::memcpy(&v, a + i, sizeof(V));
    V r = f(v);
    std::memcpy(o + i, &r, sizeof(V));
  }
  if (i < n) {
    T buf[W] = {};
    std::memcpy(buf, a + i, static_cast<std::size_t>(n - i) * sizeof(T));
    V v;
    std::memcpy(&v, buf, sizeof(V));
    V r = f(v);
    std::memcpy(buf, &r, sizeof(V));
    std::memcpy(o + i, buf, static_cast<std::size_t>(n - i) * sizeof(T));
  }
}

__m256d sigmoid4(__m256d x) {
  const __m256d one = _mm256_set1_pd(1.0);
  __m256d e = _ZGVdN4v_exp(_mm256_sub_pd(_mm256_setzero_pd(), x));
  return _mm256_div_pd(one, _mm256_add_pd(one, e));
}
__m256 sigmoid8(__m256 x) {
  const __m256 one = _mm256_set1_ps(1.0f);
  __m256 e = _ZGVdN8v_expf(_mm256_sub_ps(_mm256_setzero_ps(), x));
  return _mm256_div_ps(one, _mm256_add_ps(one, e));
}

}  // namespace

bool vmath_unary(UnaryOp op, const double* a, double* o, int64_t n) noexcept {
  if (!cpu_ok()) return false;
  switch (op) {
    case UnaryOp::Exp: run<__m256d, double, 4>(_ZGVdN4v_exp, a, o, n); return true;
    case UnaryOp::Log: run<__m256d, double, 4>(_ZGVdN4v_log, a, o, n); return true;
    case UnaryOp::Log1p: run<__m256d, double, 4>(_ZGVdN4v_log1p, a, o, n); return true;
    case UnaryOp::Expm1: run<__m256d, double, 4>(_ZGVdN4v_expm1, a, o, n); return true;
    case UnaryOp::Tanh: run<__m256d, double, 4>(_ZGVdN4v_tanh, a, o, n); return true;
    case UnaryOp::Sin: run<__m256d, double, 4>(_ZGVdN4v_sin, a, o, n); return true;
    case UnaryOp::Cos: run<__m256d, double, 4>(_ZGVdN4v_cos, a, o, n); return true;
    case UnaryOp::Sigmoid: run<__m256d, double, 4>(sigmoid4, a, o, n); return true;
    default: return false;
  }
}

bool vmath_unary(UnaryOp op, const float* a, float* o, int64_t n) noexcept {
  if (!cpu_ok()) return false;
  switch (op) {
    case UnaryOp::Exp: run<__m256, float, 8>(_ZGVdN8v_expf, a, o, n); return true;
    case UnaryOp::Log: run<__m256, float, 8>(_ZGVdN8v_logf, a, o, n); return true;
    case UnaryOp::Log1p: run<__m256, float, 8>(_ZGVdN8v_log1pf, a, o, n); return true;
    case UnaryOp::Expm1: run<__m256, float, 8>(_ZGVdN8v_expm1f, a, o, n); return true;
    case UnaryOp::Tanh: run<__m256, float, 8>(_ZGVdN8v_tanhf, a, o, n); return true;
    case UnaryOp::Sin: run<__m256, float, 8>(_ZGVdN8v_sinf, a, o, n); return true;
    case UnaryOp::Cos: run<__m256, float, 8>(_ZGVdN8v_cosf, a, o, n); return true;
    case UnaryOp::Sigmoid: run<__m256, float, 8>(sigmoid8, a, o, n); return true;
    default: return false;
  }
}

}  // namespace uma::kernels::cpu
