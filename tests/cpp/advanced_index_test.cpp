// NumPy advanced indexing in C++ (ops::advanced_index_layout, ops::index, ops::index_assign):
// the layout's placement rule and errors, and the gathered and scattered values against a
// reference loop over the same indices. The random comparison with NumPy itself lives in
// tests/python/test_advanced_indexing.py.
#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

#include "uma/array.h"
#include "uma/error.h"
#include "error_kind.h"
#include "uma/ops.h"

namespace uma {
namespace {

Array iota(const Shape& shape) {  // float64 0, 1, 2, ... in C order
  Array a = Array::empty(shape, DType::Float64);
  for (int64_t i = 0; i < a.size(); ++i) a.data_as<double>()[i] = static_cast<double>(i);
  return a;
}

Array ints(std::vector<int64_t> v, Shape shape, DType t = DType::Int64) {
  Array a = Array::empty(shape, DType::Int64);
  for (std::size_t i = 0; i < v.size(); ++i) a.data_as<int64_t>()[i] = v[i];
  return t == DType::Int64 ? a : ops::astype(a, t);
}

Array bools(std::vector<bool> v, Shape shape) {
  Array a = Array::empty(shape, DType::Bool);
  for (std::size_t i = 0; i < v.size(); ++i) a.data_as<bool8>()[i] = static_cast<bool>(v[i]);
  return a;
}

IndexKey arr(Array a) { return IndexKey{IndexItem{}, std::move(a)}; }
IndexKey num(int64_t i) { return IndexKey{IndexItem{IndexItem::Int, i, {}, {}, {}}, Array()}; }
IndexKey all() { return IndexKey{IndexItem{IndexItem::Slice, 0, {}, {}, {}}, Array()}; }
IndexKey rev() { return IndexKey{IndexItem{IndexItem::Slice, 0, {}, {}, -1}, Array()}; }
IndexKey none() { return IndexKey{IndexItem{IndexItem::NewAxis, 0, {}, {}, {}}, Array()}; }
IndexKey ellipsis() { return IndexKey{IndexItem{IndexItem::Ellipsis, 0, {}, {}, {}}, Array()}; }

double at(const Array& a, std::vector<int64_t> idx) { return *reinterpret_cast<const double*>(a.ptr_at(idx.data())); }

TEST(AdvancedIndex, AdjacentArraysKeepTheirPlaceSeparatedOnesGoFirst) {
  const Array a = iota({2, 5, 3, 4});
  const Array i = ints({0, 2, 1}, {3}), j = ints({2, 0}, {2, 1});
  // a[:, i, j]: adjacent, the broadcast (2, 3) in place of axes 1-2
  Array r = ops::index(a, {all(), arr(i), arr(j)});
  ASSERT_EQ(r.shape(), (Shape{2, 2, 3, 4}));
  for (int64_t p = 0; p < 2; ++p)
    for (int64_t q = 0; q < 2; ++q)
      for (int64_t s = 0; s < 3; ++s)
        for (int64_t t = 0; t < 4; ++t)
          EXPECT_EQ(at(r, {p, q, s, t}), at(a, {p, i.data_as<int64_t>()[s] , j.data_as<int64_t>()[q], t}));
  // a[1, :, i]: separated (the integer is advanced), the broadcast (3,) first
  r = ops::index(a, {num(1), all(), arr(i)});
  ASSERT_EQ(r.shape(), (Shape{3, 5, 4}));
  for (int64_t s = 0; s < 3; ++s)
    for (int64_t q = 0; q < 5; ++q) EXPECT_EQ(at(r, {s, q, 3}), at(a, {1, q, i.data_as<int64_t>()[s], 3}));
  // an Ellipsis between arrays separates them (here it stands for axis 2)
  EXPECT_EQ(ops::index(a, {all(), arr(i), ellipsis(), arr(i)}).shape(), (Shape{3, 2, 3}));
  EXPECT_EQ(ops::index(a, {all(), arr(i), arr(i), all()}).shape(), (Shape{2, 3, 4}));
}

TEST(AdvancedIndex, BoolArraysAreTheirNonzeroCoordinates) {
  const Array a = iota({3, 4});
  const Array m = bools({true, false, false, true, false, true, true, false, false, false, false, true}, {3, 4});
  Array r = ops::index(a, {arr(m)});
  ASSERT_EQ(r.shape(), (Shape{5}));
  std::vector<double> want;
  for (int64_t k = 0; k < 12; ++k)
    if (m.data_as<bool8>()[k]) want.push_back(static_cast<double>(k));
  for (int64_t k = 0; k < 5; ++k) EXPECT_EQ(r.data_as<double>()[k], want[static_cast<std::size_t>(k)]);
  // a 0-d bool adds an axis: a[True] is (1, 3, 4), a[..., False] (3, 4, 0)
  EXPECT_EQ(ops::index(a, {arr(bools({true}, {}))}).shape(), (Shape{1, 3, 4}));
  EXPECT_EQ(ops::index(a, {ellipsis(), arr(bools({false}, {}))}).shape(), (Shape{3, 4, 0}));
}

TEST(AdvancedIndex, EveryIntegerDtypeNegativeIndicesAndStridedSources) {
  const Array base = iota({4, 6});
  const Array a = ops::index(base, {rev(), all()});  // a reversed view
  for (DType t : {DType::Int8, DType::UInt16, DType::Int32, DType::UInt64}) {
    const bool is_signed = t == DType::Int8 || t == DType::Int32;
    Array r = ops::index(a, {arr(ints({is_signed ? -1 : 3, 0}, {2}, t)), arr(ints({5, 2}, {2}, t))});
    ASSERT_EQ(r.shape(), (Shape{2}));
    EXPECT_EQ(r.data_as<double>()[0], at(base, {0, 5}));
    EXPECT_EQ(r.data_as<double>()[1], at(base, {3, 2}));
  }
}

TEST(AdvancedIndex, Errors) {
  const Array a = iota({2, 3});
  EXPECT_EQ(testing::error_kind([&] { ops::index(a, {all(), arr(ints({3}, {1}))}); }), ErrorKind::Index);
  EXPECT_EQ(testing::error_kind([&] { ops::index(a, {arr(ints({0, 1}, {2})), arr(ints({0, 1, 2}, {3}))}); }), ErrorKind::Index);
  EXPECT_EQ(testing::error_kind([&] { ops::index(a, {arr(bools({true}, {1}))}); }), ErrorKind::Index);
  EXPECT_EQ(testing::error_kind([&] { ops::index(a, {arr(ints({0}, {1})), num(5)}); }), ErrorKind::Index);
  EXPECT_EQ(testing::error_kind([&] { ops::index(a, {num(0), num(0), arr(ints({0}, {1}))}); }), ErrorKind::Index);
  EXPECT_EQ(testing::error_kind([&] { ops::index(a, {arr(ops::astype(ints({0}, {1}), DType::Float32))}); }), ErrorKind::Index);
  try {
    ops::index(a, {none(), arr(ints({0}, {1})), arr(ints({-4}, {1}))});
    ADD_FAILURE() << "no error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("index -4 is out of bounds for axis 1 with size 3"), std::string::npos) << e.what();
  }
  // the layout alone: a known-length rule that the graph could ask with unknown counts
  ops::IndexSpec mask{ops::IndexSpec::BoolArray, {}, {2, 3}, ops::kUnknownLength};
  ops::AdvancedIndexLayout L = ops::advanced_index_layout({2, 3, 4}, {mask}, "getitem");
  EXPECT_EQ(L.shape, (Shape{ops::kUnknownLength, 4}));
  EXPECT_EQ(L.entries.size(), 2u);
}

TEST(AdvancedIndex, AssignWritesThePicksLastWriteWins) {
  Array a = iota({3, 4});
  const Array want = ops::copy(a);
  // a[[0, 2, 0], 1] = [0, 1, 2]: a[0, 1] gets 2 (the last write), a[2, 1] gets 1
  Array v = iota({3});
  ops::index_assign(a, {arr(ints({0, 2, 0}, {3})), num(1)}, v);
  for (int64_t r = 0; r < 3; ++r)
    for (int64_t c = 0; c < 4; ++c) {
      const double expect = c != 1 || r == 1 ? at(want, {r, c}) : (r == 0 ? 2.0 : 1.0);
      EXPECT_EQ(at(a, {r, c}), expect) << r << "," << c;
    }
  // a broadcast 0-d value through a mask, into a reversed view of a
  Array view = ops::getitem(a, {IndexItem{IndexItem::Slice, 0, {}, {}, -1}});
  ops::index_assign(view, {arr(bools({true, false, true}, {3}))}, ops::scalar_array(Scalar::from_int(-1), DType::Int64));
  for (int64_t c = 0; c < 4; ++c) {
    EXPECT_EQ(at(a, {0, c}), -1.0);
    EXPECT_EQ(at(a, {2, c}), -1.0);
  }
  // read-only destinations refuse, and nothing changes
  Array ro = a.as_readonly();
  EXPECT_EQ(testing::error_kind([&] { ops::index_assign(ro, {arr(ints({0}, {1}))}, v); }), ErrorKind::Value);
  EXPECT_EQ(at(a, {1, 1}), at(want, {1, 1}));
}

}  // namespace
}  // namespace uma
