// CPU kernels of integer-array indexing: index checks, mask positions, gather (take), scatter
// (set / add, np.add.at semantics for repeated indices), NumPy's advanced-indexing gather and
// scatter by element offsets (gather, scatter_at), one_hot and dst += src on every dtype.
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

// Copies one element of `Size` bytes between rest's element at `p` and the contiguous `c`.
template <std::size_t Size, bool Scatter>
void move_one(char* p, char* c) {
  if constexpr (Scatter) std::memcpy(p, c, Size);
  else std::memcpy(c, p, Size);
}

// Moves m single elements of `Size` bytes between base + off[j] elements and the contiguous c.
template <std::size_t Size, bool Scatter>
void move_elements(char* base, const int64_t* off, int64_t m, char* c) {
  for (int64_t j = 0; j < m; ++j, c += Size) move_one<Size, Scatter>(base + off[j] * static_cast<int64_t>(Size), c);
}

template <bool Scatter>
auto move_elements_for(std::size_t isz) -> void (*)(char*, const int64_t*, int64_t, char*) {
  switch (isz) {
    case 1: return &move_elements<1, Scatter>;
    case 2: return &move_elements<2, Scatter>;
    case 4: return &move_elements<4, Scatter>;
    case 8: return &move_elements<8, Scatter>;
    case 16: return &move_elements<16, Scatter>;
    default: UMA_ASSERT(false);
  }
  return nullptr;
}

// Moves the block of `shape`/`strides` (elements of `isz` bytes) at `p` from (gather) or to
// (scatter) the contiguous bytes at `c`, in C order: one memcpy where the block is contiguous.
template <bool Scatter>
class BlockMover {
 public:
  BlockMover(Shape shape, Strides strides, std::size_t isz) : shape_(std::move(shape)), isz_(isz) {
    int64_t expect = 1;
    size_ = 1;
    contiguous_ = true;
    for (std::size_t d = shape_.size(); d-- > 0;) {
      if (shape_[d] != 1 && strides[d] != expect) contiguous_ = false;
      expect *= shape_[d];
      size_ *= shape_[d];
    }
    for (int64_t st : strides) bstrides_.push_back(st * static_cast<int64_t>(isz));
    switch (isz) {
      case 1: one_ = &move_one<1, Scatter>; break;
      case 2: one_ = &move_one<2, Scatter>; break;
      case 4: one_ = &move_one<4, Scatter>; break;
      case 8: one_ = &move_one<8, Scatter>; break;
      case 16: one_ = &move_one<16, Scatter>; break;
      default: UMA_ASSERT(false);
    }
  }
  /// Bytes of contiguous memory one block takes.
  std::size_t bytes() const { return static_cast<std::size_t>(size_) * isz_; }
  /// Whether a block is one element.
  bool single() const { return size_ == 1; }
  void operator()(char* p, char* c) const {
    if (size_ == 1) return one_(p, c);
    if (contiguous_) {
      if (Scatter) std::memcpy(p, c, bytes());
      else std::memcpy(c, p, bytes());
      return;
    }
    const auto nd = static_cast<int64_t>(shape_.size());
    const int64_t n = shape_[nd - 1], step = bstrides_[nd - 1];
    std::vector<int64_t> at(static_cast<std::size_t>(nd - 1), 0);
    for (int64_t done = 0; done < size_; done += n) {
      char* q = p;
      for (int64_t d = 0; d + 1 < nd; ++d) q += at[d] * bstrides_[d];
      for (int64_t i = 0; i < n; ++i, q += step, c += isz_) one_(q, c);
      for (int64_t d = nd - 2; d >= 0; --d) {  // the odometer of the outer axes
        if (++at[d] < shape_[d]) break;
        at[d] = 0;
      }
    }
  }

 private:
  Shape shape_;
  Strides bstrides_;
  std::size_t isz_;
  int64_t size_;
  bool contiguous_;
  void (*one_)(char*, char*) = nullptr;
};

// gather (Scatter = false) and scatter_at: rest's axes before `position` (the outer block), the
// offsets, then rest's axes after it (the inner block, moved by BlockMover), in C order.
template <bool Scatter>
void gather_scatter(const Array& rest, const Array& offsets, int64_t position, const Array& flat) {
  UMA_ASSERT(flat.is_c_contiguous() && offsets.is_c_contiguous() && offsets.dtype() == DType::Int64 &&
             flat.dtype() == rest.dtype());
  if (flat.size() == 0) return;
  const auto pos = static_cast<std::size_t>(position);
  const Shape outer(rest.shape().begin(), rest.shape().begin() + static_cast<std::ptrdiff_t>(pos));
  const Strides ostr(rest.strides().begin(), rest.strides().begin() + static_cast<std::ptrdiff_t>(pos));
  const BlockMover<Scatter> inner(Shape(rest.shape().begin() + static_cast<std::ptrdiff_t>(pos), rest.shape().end()),
                                  Strides(rest.strides().begin() + static_cast<std::ptrdiff_t>(pos), rest.strides().end()),
                                  rest.itemsize());
  const auto isz = static_cast<int64_t>(rest.itemsize());
  const int64_t* off = offsets.data_as<int64_t>();
  const int64_t m = offsets.size();
  int64_t n_outer = 1;
  for (int64_t len : outer) n_outer *= len;
  char* base = static_cast<char*>(rest.data());
  char* c = static_cast<char*>(flat.data());
  const auto elements = move_elements_for<Scatter>(rest.itemsize());
  std::vector<int64_t> at(outer.size(), 0);
  for (int64_t o = 0; o < n_outer; ++o) {
    int64_t start = 0;
    for (std::size_t d = 0; d < outer.size(); ++d) start += at[d] * ostr[d];
    if (inner.single()) {  // one element per pick: a typed loop
      elements(base + start * isz, off, m, c);
      c += m * isz;
    } else {
      for (int64_t j = 0; j < m; ++j, c += inner.bytes()) inner(base + (start + off[j]) * isz, c);
    }
    for (auto d = static_cast<int64_t>(outer.size()) - 1; d >= 0; --d) {
      if (++at[static_cast<std::size_t>(d)] < outer[static_cast<std::size_t>(d)]) break;
      at[static_cast<std::size_t>(d)] = 0;
    }
  }
}

}  // namespace

void gather(const Array& rest, const Array& offsets, int64_t position, const Array& out) {
  gather_scatter<false>(rest, offsets, position, out);
}

void scatter_at(const Array& rest, const Array& offsets, int64_t position, const Array& src) {
  gather_scatter<true>(rest, offsets, position, src);
}

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

void normalize_indices(const char* op, const Array& idx, int64_t n, int64_t axis, DType src_dtype) {
  int64_t* p = idx.data_as<int64_t>();
  for (int64_t i = 0; i < idx.size(); ++i) {
    if (src_dtype == DType::UInt64 && p[i] < 0)  // a uint64 index >= 2**63
      UMA_FAIL(Index, op, ": index ", static_cast<uint64_t>(p[i]), " is out of bounds for axis ", axis, " with size ", n);
    UMA_CHECK(p[i] >= -n && p[i] < n, Index, op, ": index ", p[i], " is out of bounds for axis ", axis,
              " with size ", n);
    if (p[i] < 0) p[i] += n;
  }
}

Array mask_positions(const Array& mask) {
  const bool8* mp = mask.data_as<bool8>();  // true where the byte is not 0
  int64_t count = 0;
  for (int64_t i = 0; i < mask.size(); ++i) count += mp[i] ? 1 : 0;
  Array pos = Array::empty({count}, DType::Int64);
  int64_t* pp = pos.data_as<int64_t>();
  for (int64_t i = 0, k = 0; i < mask.size(); ++i)
    if (mp[i]) pp[k++] = i;
  return pos;
}

Array one_of(DType t) {
  Array b = Array::empty({}, DType::Bool), one = Array::empty({}, t);
  *b.data_as<bool8>() = bool8(true);
  cast(b, one);
  return one;
}

void one_hot(const Array& idx, int64_t depth, const Array& out) {
  const std::size_t isz = out.itemsize();
  std::memset(out.data(), 0, static_cast<std::size_t>(out.nbytes()));
  const Array one = one_of(out.dtype());
  const int64_t* p = idx.data_as<int64_t>();
  char* o = static_cast<char*>(out.data());
  for (int64_t i = 0; i < idx.size(); ++i)
    if (p[i] >= 0 && p[i] < depth) std::memcpy(o + static_cast<std::size_t>(i * depth + p[i]) * isz, one.data(), isz);
}

}  // namespace uma::kernels::cpu
