// fuzz_shapes — shape, stride and broadcast arithmetic, overflow included.
//
// The input is a small program: a base array (dtype, shape with small dims) and a sequence of
// ops on a "current" view of it: reshape, basic indexing (ints, slices with any int64 start /
// stop / step, None, Ellipsis) and advanced indexing (those mixed with int64 and bool arrays of
// any values and shapes: read, then written back), transpose, broadcast_to, expand_dims, squeeze, and the pure
// functions broadcast_shapes / checked_size / contiguous_strides on arbitrary (huge, negative)
// shapes. Checks, beyond "no crash, no sanitizer report (UBSAN: signed overflow), only
// uma::Error":
//   * every view's elements lie inside its storage (128-bit reference), size == prod(shape);
//   * broadcast_shapes agrees with a reference implementation of NumPy's rule;
//   * checked_size accepts exactly the shapes whose product fits in int64 (reference);
//   * small views can be read element by element (ASAN) and binary ops broadcast them.
#include <algorithm>
#include <optional>

#include "fuzz_common.h"

using namespace uma;

namespace {

Shape read_shape(fuzz::Reader& r, std::size_t max_nd) {
  Shape s(r.u8() % (max_nd + 1));
  for (auto& d : s) d = r.dim();
  return s;
}

// NumPy's broadcasting rule; nullopt when the shapes do not broadcast.
std::optional<Shape> ref_broadcast(const Shape& a, const Shape& b) {
  const std::size_t n = std::max(a.size(), b.size());
  Shape out(n);
  for (std::size_t i = 0; i < n; ++i) {
    const int64_t x = i < n - a.size() ? 1 : a[i - (n - a.size())];
    const int64_t y = i < n - b.size() ? 1 : b[i - (n - b.size())];
    if (x == y || y == 1) out[i] = x;
    else if (x == 1) out[i] = y;
    else return std::nullopt;
  }
  return out;
}

void check_view(const Array& v) {
  __int128 n = 1;
  for (int64_t d : v.shape()) {
    FUZZ_CHECK(d >= 0);
    n = d == 0 || n == 0 ? 0 : std::min<__int128>(n * d, static_cast<__int128>(1) << 64);
  }
  FUZZ_CHECK(n == v.size());
  FUZZ_CHECK(v.strides().size() == v.shape().size());
  fuzz::check_inside_storage(v);
  fuzz::touch(v, 4096);
}

IndexItem read_item(fuzz::Reader& r) {
  IndexItem it;
  const uint8_t k = r.u8();
  auto val = [&]() -> std::optional<int64_t> {
    const uint8_t b = r.u8();
    if (b < 0x40) return std::nullopt;                   // None
    if (b < 0xc0) return static_cast<int64_t>(b & 15) - 8;  // small, negative included
    switch (b & 3) {                                     // extremes
      case 0: return INT64_MIN;
      case 1: return INT64_MAX;
      case 2: return INT64_MIN + 1;
      default: return r.i64();
    }
  };
  switch (k % 6) {
    case 0: case 1:
      it.kind = IndexItem::Int;
      it.i = val().value_or(0);
      break;
    case 2: case 3:
      it.kind = IndexItem::Slice;
      it.start = val();
      it.stop = val();
      it.step = val();
      break;
    case 4: it.kind = IndexItem::NewAxis; break;
    default: it.kind = IndexItem::Ellipsis; break;
  }
  return it;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, std::size_t size) {
  fuzz::init_once();
  fuzz::Reader r{data, size};
  const DType t = fuzz::dtype_at(r.u8());
  Shape base_shape(r.u8() % 5);
  for (auto& d : base_shape) d = r.u8() % 6;  // at most 5^4 elements
  Array base = Array::empty(base_shape, t);
  std::memset(base.data(), 0, static_cast<std::size_t>(base.nbytes()));
  Array cur = base;

  for (int step = 0; step < 24 && !r.empty(); ++step) {
    const uint8_t op = r.u8();
    switch (op % 10) {
      case 0: {  // broadcast_shapes on arbitrary shapes
        Shape a = read_shape(r, 6), b = read_shape(r, 6);
        std::optional<Shape> ref = ref_broadcast(a, b);
        std::optional<Shape> got;
        fuzz::accepts([&] { got = ops::broadcast_shapes(a, b, "fuzz"); });
        bool neg = false;
        for (int64_t d : a) neg = neg || d < 0;
        for (int64_t d : b) neg = neg || d < 0;
        if (!neg) FUZZ_CHECK(got == ref);
        break;
      }
      case 1: {  // checked_size / contiguous_strides on an arbitrary shape
        Shape s = read_shape(r, 8);
        bool neg = false, zero = false, over = false;
        __int128 n = 1;
        for (int64_t d : s) {
          neg = neg || d < 0;
          zero = zero || d == 0;
          if (d > 0 && !over) {
            n *= d;
            over = n > INT64_MAX;
          }
        }
        std::optional<int64_t> got;
        fuzz::accepts([&] { got = checked_size(s); });
        if (neg || (over && !zero)) FUZZ_CHECK(!got);
        if (got) {
          FUZZ_CHECK(*got == (zero ? 0 : static_cast<int64_t>(n)));
          Strides c = contiguous_strides(s);
          FUZZ_CHECK(c.size() == s.size());
        }
        break;
      }
      case 2: {  // reshape
        Shape s = read_shape(r, 6);
        // A non-contiguous view (a broadcast one can be huge) is copied by reshape; keep that
        // copy small, or the harness itself runs out of memory (libFuzzer's malloc limit).
        if (!cur.is_c_contiguous() && cur.size() > (int64_t{1} << 16)) break;
        fuzz::accepts([&] {
          Array v = ops::reshape(cur, s);
          FUZZ_CHECK(v.size() == cur.size());
          cur = v;
        });
        break;
      }
      case 3: {  // basic indexing, or advanced (index arrays mixed in: a copy, then a write)
        std::vector<IndexItem> idx(r.u8() % 6);
        for (auto& it : idx) it = read_item(r);
        if (!(op & 0x20)) {
          fuzz::accepts([&] { cur = ops::getitem(cur, idx); });
          break;
        }
        std::vector<IndexKey> key;
        for (const auto& it : idx) {
          IndexKey k{it, Array()};
          const uint8_t kind = r.u8();
          if (kind % 3 == 1) {  // an int64 array of any values (in range or not)
            k.array = Array::empty({r.u8() % 4}, DType::Int64);
            for (int64_t j = 0; j < k.array.size(); ++j) k.array.data_as<int64_t>()[j] = r.u8() & 0x80 ? r.stride() : r.u8() % 6 - 3;
          } else if (kind % 3 == 2) {  // a bool array of rank 0-2 (its shape may not match)
            Shape ms(r.u8() % 3);
            for (auto& d : ms) d = r.u8() % 6;
            k.array = Array::empty(ms, DType::Bool);
            for (int64_t j = 0; j < k.array.size(); ++j) k.array.data_as<bool8>()[j] = bool8((r.u8() & 1) != 0);
          }
          key.push_back(k);
        }
        if (cur.size() > 4096) break;
        fuzz::accepts([&] {
          std::vector<ops::IndexSpec> spec;
          for (const auto& k : key) {
            if (!k.array.defined()) spec.push_back({ops::IndexSpec::Basic, k.item, {}, ops::kUnknownLength});
            else if (k.array.dtype() == DType::Bool) spec.push_back({ops::IndexSpec::BoolArray, {}, k.array.shape(), ops::kUnknownLength});
            else spec.push_back({ops::IndexSpec::IntArray, {}, k.array.shape(), ops::kUnknownLength});
          }
          const Shape rule = ops::advanced_index_layout(cur.shape(), spec, "fuzz").shape;
          Array v = ops::index(cur, key);
          FUZZ_CHECK(v.shape().size() == rule.size());
          for (std::size_t d = 0; d < rule.size(); ++d) FUZZ_CHECK(rule[d] == ops::kUnknownLength || rule[d] == v.shape()[d]);
          if (v.size() > 4096) return;
          Array w = ops::copy(cur);
          ops::index_assign(w, key, v);  // writes back what it read
          FUZZ_CHECK(ops::index(w, key).shape() == v.shape());
          cur = v;
        });
        break;
      }
      case 4: {  // transpose
        std::vector<int64_t> axes(r.u8() % 7);
        for (auto& a : axes) a = r.stride();
        fuzz::accepts([&] { cur = ops::transpose(cur, axes); });
        break;
      }
      case 5: {  // broadcast_to
        Shape s = read_shape(r, 6);
        fuzz::accepts([&] {
          Array v = ops::broadcast_to(cur, s);
          FUZZ_CHECK(v.shape() == s && !v.writable());
          cur = v;
        });
        break;
      }
      case 6: {  // expand_dims / squeeze
        const int64_t axis = r.stride();
        if (r.u8() & 1) {
          fuzz::accepts([&] { cur = ops::expand_dims(cur, axis); });
        } else {
          std::vector<int64_t> axes(r.u8() % 3);
          for (auto& a : axes) a = r.stride();
          const auto which = axes.empty() ? std::nullopt : std::optional(axes);  // none: every length-1 axis
          fuzz::accepts([&] { cur = ops::squeeze(cur, which); });
        }
        break;
      }
      case 7: {  // a binary op with a broadcast partner
        Shape s(r.u8() % 4);
        for (auto& d : s) d = r.u8() % 4;
        fuzz::accepts([&] {
          Array b = ops::zeros(s, t);
          std::optional<Shape> ref = ref_broadcast(cur.shape(), s);
          __int128 n = 1;
          if (ref) for (int64_t d : *ref) n *= d;
          if (cur.size() > 4096 || n > 4096) return;  // keep it fast
          Array c = ops::binary(BinaryOp::Add, cur, b);
          FUZZ_CHECK(ref && c.shape() == *ref);
        });
        break;
      }
      case 8:  // back to the base array (or stay)
        cur = (op & 0x10) ? base : cur;
        break;
      default:  // copy the current view and continue from the copy
        if (cur.size() <= 4096) cur = ops::copy(cur);
        break;
    }
    check_view(cur);
  }
  return 0;
}
