// CPU kernels of softmax cross-entropy with integer labels (ops/nn.cpp defines the op):
//
//   forward[i]  = log(sum_j exp(z_ij)) - z_{i,y_i} = m_i + log(sum_j exp(z_ij - m_i)) - z_{i,y_i}
//   grad[i, j]  = g_i * (softmax(z)_ij - [j == y_i]),  m_i = max_j z_ij
//
// One pass per row instead of the max/subtract/exp/sum/log/one-hot chain.
//
// one_hot_cross_entropy (one-hot rows): a label outside [0, C) is a zero row of one_hot, whose
// loss and gradient are 0 as in the product they stand for, -sum(0 * log_softmax(z)), and NaN
// where that product is NaN without a limit: a row whose sum of exponentials is NaN (a NaN or
// +inf logit, or every logit -inf), and for the gradient also a NaN or infinite upstream
// gradient (0 * g). (A -inf logit beside finite ones gives the product's 0 * -inf = NaN and the
// closed form its limit, 0.)
#include <cmath>
#include <limits>
#include <memory>
#include <vector>

#include "kernels/cpu/vmath.h"
#include "kernels/kernels.h"

namespace uma::kernels::cpu {

namespace {

struct Rows {
  const Array& z;  // contiguous logits (N, C)
  const int64_t* y;  // labels (N,): in [0, C), or any (one-hot rows: outside [0, C) is a zero row)
  int64_t n, c;
  bool in_range(int64_t i) const { return y[i] >= 0 && y[i] < c; }
};

// e[i, j] = exp(z[i, j] - m_i) for the whole (N, C) block in one vectorised pass; returns m.
template <class T>
std::vector<T> shifted_exp(const Rows& a, T* e) {
  const T* z = a.z.data_as<T>();
  std::vector<T> m(static_cast<std::size_t>(a.n));
  for (int64_t i = 0; i < a.n; ++i) {
    const T* row = z + i * a.c;
    T mi = row[0];
    bool nan = row[0] != row[0];
    for (int64_t j = 1; j < a.c; ++j) {  // no branch on the data: a max and a NaN flag
      mi = row[j] > mi ? row[j] : mi;
      nan |= row[j] != row[j];
    }
    m[i] = nan ? std::numeric_limits<T>::quiet_NaN() : mi;  // a NaN row is NaN (NumPy's max)
    for (int64_t j = 0; j < a.c; ++j) e[i * a.c + j] = row[j] - mi;
  }
  const int64_t total = a.n * a.c;
  if (!vmath_unary(UnaryOp::Exp, e, e, total))
    for (int64_t k = 0; k < total; ++k) e[k] = std::exp(e[k]);
  return m;
}

template <class T>
void forward(const Rows& a, T* out) {
  const T* z = a.z.data_as<T>();
  std::unique_ptr<T[]> e(new T[static_cast<std::size_t>(a.n * a.c)]);
  const std::vector<T> m = shifted_exp(a, e.get());
  for (int64_t i = 0; i < a.n; ++i) {
    T s = 0;
    for (int64_t j = 0; j < a.c; ++j) s += e[i * a.c + j];
    out[i] = a.in_range(i) ? std::log(s) + m[i] - z[i * a.c + a.y[i]] : s == s ? T(0) : s;
  }
}

template <class T>
void backward(const Rows& a, const T* g, int64_t gstride, T* out) {
  shifted_exp(a, out);
  for (int64_t i = 0; i < a.n; ++i) {
    T* o = out + i * a.c;
    T s = 0;
    for (int64_t j = 0; j < a.c; ++j) s += o[j];
    const T gi = g[i * gstride];
    if (!a.in_range(i)) {  // a zero row of one_hot: no gradient, unless the product is NaN
      const T v = s == s && std::isfinite(gi) ? T(0) : std::numeric_limits<T>::quiet_NaN();
      for (int64_t j = 0; j < a.c; ++j) o[j] = v;
      continue;
    }
    const T scale = gi / s;
    for (int64_t j = 0; j < a.c; ++j) o[j] *= scale;
    o[a.y[i]] -= gi;
  }
}

}  // namespace

void check_labels(const char* op, const Array& labels, int64_t nclasses) {
  const int64_t* y = labels.data_as<int64_t>();
  for (int64_t i = 0; i < labels.size(); ++i)
    UMA_CHECK(y[i] >= 0 && y[i] < nclasses, Value, op, ": label ", y[i], " at position ", i, " is out of range [0, ",
              nclasses, ")");
}

void softmax_xent(const char* op, const Array& logits, const Array& labels, const Array* grad, int64_t gstride,
                  const Array& out, bool one_hot_rows) {
  const int64_t n = logits.shape()[0], c = logits.shape()[1];
  if (!one_hot_rows) check_labels(op, labels, c);  // else Rows::in_range guards every read
  const Rows a{logits, labels.data_as<int64_t>(), n, c};
  if (logits.dtype() == DType::Float32) {
    if (grad) backward<float>(a, grad->data_as<float>(), gstride, out.data_as<float>());
    else forward<float>(a, out.data_as<float>());
  } else {
    if (grad) backward<double>(a, grad->data_as<double>(), gstride, out.data_as<double>());
    else forward<double>(a, out.data_as<double>());
  }
}

}  // namespace uma::kernels::cpu
