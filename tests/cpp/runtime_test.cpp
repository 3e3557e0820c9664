// The runtime layer: Program::run_into (include/uma/runtime/program.h), SharedCell
// (shared_cell.h) and the C++ call path runtime::Function (function.h). The 8-thread
// serializability test of Function is in threads_test.cpp (it also runs under TSAN).
#include <gtest/gtest.h>

#include <condition_variable>
#include <functional>
#include <cstring>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "uma/error.h"
#include "error_kind.h"
#include "uma/ops.h"
#include "uma/runtime/function.h"

namespace uma::runtime {
namespace {

Array f64(double v) { return ops::scalar_array(Scalar::from_float(v), DType::Float64); }
Array vec(std::vector<double> v) {
  Array a = Array::empty({static_cast<int64_t>(v.size())}, DType::Float64);
  for (std::size_t i = 0; i < v.size(); ++i) a.data_as<double>()[i] = v[i];
  return a;
}
std::vector<double> values(const Array& a) {
  Array c = ops::copy(a);
  return std::vector<double>(c.data_as<double>(), c.data_as<double>() + c.size());
}
double host_value(SharedCell& c) {
  std::lock_guard<SharedCell> g(c);
  return values(c.read_host()).at(0);
}
std::vector<double> host_values(SharedCell& c) {
  std::lock_guard<SharedCell> g(c);
  return values(c.read_host());
}
// c <- c + 1 on a float64 scalar (uma.function([], [], updates={c: c + 1})).
struct Counter {
  std::shared_ptr<Program> prog = std::make_shared<Program>();
  std::shared_ptr<SharedCell> cell;
  std::unique_ptr<Function> fn;
  explicit Counter(double start = 0.0) : cell(std::make_shared<SharedCell>(f64(start))) {
    int c = prog->add_input();
    int one = prog->add_constant(f64(1.0));
    prog->set_outputs({prog->add_op("add", {c, one}, {})});
    fn = std::make_unique<Function>(prog, std::vector<InputSpec>{}, std::vector<std::shared_ptr<SharedCell>>{cell},
                                    std::vector<int>{0}, 0);
  }
};

// A residency of native values (a backend's own arrays): a std::vector<double> per value, with
// conversion counters.
struct ListResidency final : Residency {
  explicit ListResidency(std::string name = "list") : Residency(std::move(name)) {}
  mutable int to_here = 0, to_host_count = 0;
  static Value make(std::vector<double> v) { return Value(NativeRef(std::make_shared<std::vector<double>>(std::move(v)))); }
  static const std::vector<double>& list(const Value& v) { return *static_cast<const std::vector<double>*>(v.native.get()); }
  Value from_host(const Array& host, const TypeSpec&) const override {
    ++to_here;
    return make(values(host));
  }
  Array to_host(const Value& v, const TypeSpec&) const override {
    ++to_host_count;
    return to_scalar_ ? f64(list(v).at(0)) : vec(list(v));
  }
  std::optional<std::pair<std::string, Shape>> describe(const Value& v) const override {
    if (to_scalar_) return std::make_pair(std::string("float64"), Shape{});
    return std::make_pair(std::string("float64"), Shape{static_cast<int64_t>(list(v).size())});
  }
  bool to_scalar_ = false;
};

// ---- Program::run_into -------------------------------------------------------------------

TEST(Program, RunIntoMatchesRunWhenASlotIsReadTwiceAndAnOutputRepeats) {
  Program p;
  int x = p.add_input();
  int sq = p.add_op("multiply", {x, x}, {});  // the same slot twice in one step
  int s = p.add_op("add", {sq, x}, {});
  p.set_outputs({s, sq, s});
  std::vector<Array> in{vec({1, 2, 3})};
  std::vector<Array> expect = p.run(in);
  std::vector<Array> got;
  p.run_into(in, got);
  EXPECT_TRUE(in.empty());  // consumed
  ASSERT_EQ(got.size(), 3u);
  for (std::size_t k = 0; k < 3; ++k) EXPECT_EQ(values(got[k]), values(expect[k]));
  EXPECT_EQ(values(got[0]), (std::vector<double>{2, 6, 12}));
}

TEST(Program, RunIntoLeavesInputsAndConstantsIntact) {
  Program p;
  int x = p.add_input();
  int k = p.add_constant(vec({10, 20}));
  p.set_outputs({p.add_op("add", {x, k}, {}), k});
  Array keep = vec({1, 2});
  for (int rep = 0; rep < 3; ++rep) {  // constants survive every run
    std::vector<Array> in{keep}, out;
    p.run_into(in, out);
    EXPECT_EQ(values(out[0]), (std::vector<double>{11, 22}));
    EXPECT_EQ(values(out[1]), (std::vector<double>{10, 20}));
  }
  EXPECT_EQ(values(keep), (std::vector<double>{1, 2}));
}

TEST(Program, AddOpChecksTheOpsInputCountAndAConstantKeepsItsValue) {
  Program p;
  int x = p.add_input();
  for (const auto& [name, n] : std::vector<std::pair<std::string, int>>{{"add", 1}, {"add", 3}, {"exp", 2},
                                                                          {"clip", 2}, {"concatenate", 0}})
    EXPECT_EQ(testing::error_kind([&] { p.add_op(name, std::vector<int>(n, x), {}); }), ErrorKind::Value) << name;
  EXPECT_EQ(p.num_steps(), 0u);
  ASSERT_NE(runtime::find_op("clip"), nullptr);
  EXPECT_EQ(runtime::find_op("clip")->arity, 3);
  EXPECT_EQ(runtime::find_op("stack")->arity, runtime::kOneOrMore);
  EXPECT_EQ(runtime::find_op("nonesuch"), nullptr);
  Array src = vec({1, 2});
  int k = p.add_constant(src);
  static_cast<double*>(src.data())[0] = 9;  // the source changes after the program took it
  p.set_outputs({k});
  std::vector<Array> in{vec({0})}, out;
  p.run_into(in, out);
  EXPECT_EQ(values(out[0]), (std::vector<double>{1, 2}));
  EXPECT_FALSE(out[0].writable());
}

TEST(Program, ASealedProgramRefusesChanges) {
  auto p = std::make_shared<Program>();
  int x = p->add_input();
  p->set_outputs({p->add_op("negative", {x}, {})});
  p->seal();
  EXPECT_TRUE(p->sealed());
  EXPECT_EQ(testing::error_kind([&] { p->add_op("negative", {x}, {}); }), ErrorKind::Value);
  EXPECT_EQ(testing::error_kind([&] { p->add_input(); }), ErrorKind::Value);
  EXPECT_EQ(testing::error_kind([&] { p->set_outputs({x}); }), ErrorKind::Value);
  EXPECT_EQ(p->num_steps(), 1u);
  std::vector<Array> in{vec({2})}, out;
  p->run_into(in, out);
  EXPECT_EQ(values(out[0]), (std::vector<double>{-2}));
}

TEST(Program, RunIntoWrongArityIsATypeError) {
  Program p;
  p.set_outputs({p.add_input()});
  std::vector<Array> in, out;
  EXPECT_EQ(testing::error_kind([&] { p.run_into(in, out); }), ErrorKind::Type);
}

// ---- Note [Scalar programs]: 0-d inputs run on the elements, as the general path would ----

Array scalar_of(DType t, double v) {
  return is_complex(t) ? ops::scalar_array(Scalar::from_complex({v, -v / 2}), t)
         : is_float(t) ? ops::scalar_array(Scalar::from_float(v), t)
         : t == DType::Bool ? ops::scalar_array(Scalar::from_bool(v != 0), t)
                            : ops::scalar_array(Scalar::from_int(static_cast<int64_t>(v)), t);
}
// Bitwise equal: same dtype, shape and bytes.
void expect_same(const Array& got, const Array& want, const std::string& what) {
  ASSERT_EQ(got.dtype(), want.dtype()) << what;
  ASSERT_EQ(got.shape(), want.shape()) << what;
  ASSERT_EQ(got.nbytes(), want.nbytes()) << what;
  EXPECT_EQ(std::memcmp(got.data(), want.data(), static_cast<std::size_t>(got.nbytes())), 0) << what;
}
// run_into (the scalar path for 0-d inputs) against run (the general path, op by op).
void expect_run_into_matches_run(const Program& p, const std::vector<Array>& inputs, const std::string& what) {
  std::vector<Array> want = p.run(inputs);
  std::vector<Array> in = inputs, got;
  p.run_into(in, got);
  EXPECT_TRUE(in.empty()) << what;
  ASSERT_EQ(got.size(), want.size()) << what;
  for (std::size_t k = 0; k < got.size(); ++k) expect_same(got[k], want[k], what + ", output " + std::to_string(k));
}

TEST(Program, ScalarInputsGiveTheGeneralPathsValuesAndDtypes) {
  const DType types[] = {DType::Float64, DType::Float32, DType::Int64, DType::Int32, DType::Int8,
                         DType::UInt16,  DType::Bool,    DType::Complex128, DType::Float16};
  const char* ops_[] = {"add", "subtract", "multiply", "divide", "maximum", "minimum", "power", "floor_divide",
                        "remainder", "less", "equal", "logical_and", "arctan2"};
  for (DType t : types) {
    for (const char* op : ops_) {
      Program p;
      int x = p.add_input(), y = p.add_input();
      int k = p.add_constant(scalar_of(t, 3));
      int a = p.add_op(op, {x, y}, {});
      p.set_outputs({a, p.add_op(op, {y, k}, {})});
      const std::string what = std::string(op) + " on " + dtype_name(t);
      bool general_fails = false;
      try {
        p.run({scalar_of(t, 7), scalar_of(t, 2)});
      } catch (const Error& e) {
        general_fails = true;  // the same error from run_into (below)
        std::vector<Array> in{scalar_of(t, 7), scalar_of(t, 2)}, out;
        EXPECT_EQ(testing::error_kind([&] { p.run_into(in, out); }), e.kind()) << what;
      }
      const std::vector<Array> in{scalar_of(t, 7), scalar_of(t, 2)};
      // The elements path runs exactly where binary()'s small-operand path would.
      BinaryOp bop = BinaryOp::Add;
      for (int i = 0; i < kNumBinaryOps; ++i)
        if (std::string(ops::op_name(static_cast<BinaryOp>(i))) == op) bop = static_cast<BinaryOp>(i);
      EXPECT_EQ(p.runs_on_elements(in), ops::binary_one_dtype(bop, t).has_value()) << what;
      if (!general_fails) expect_run_into_matches_run(p, in, what);
    }
  }
  // Spot checks of where it runs: the arithmetic of the kernel dtypes, complex, comparisons.
  auto runs = [](const char* op, DType t) {
    Program p;
    int x = p.add_input(), y = p.add_input();
    p.set_outputs({p.add_op(op, {x, y}, {})});
    return p.runs_on_elements({scalar_of(t, 7), scalar_of(t, 2)});
  };
  EXPECT_TRUE(runs("add", DType::Float64));
  EXPECT_TRUE(runs("multiply", DType::Int32));
  EXPECT_TRUE(runs("add", DType::Complex128));
  EXPECT_TRUE(runs("less", DType::Float64));
  EXPECT_FALSE(runs("add", DType::Float16));   // computed in float32, rounded back
  EXPECT_FALSE(runs("power", DType::Int64));   // the negative-exponent check
  EXPECT_FALSE(runs("divide", DType::Int8));   // a float64 result
}

TEST(Program, ScalarInputsThroughAFusedChainMatchTheGeneralPath) {
  for (DType t : {DType::Float64, DType::Float32, DType::Int64}) {
    Program p;
    int x = p.add_input(), y = p.add_input(), z = p.add_input();
    // r2 = (x * y) + z, r3 = r2 - x (registers: inputs 0..2, then one per instruction)
    std::vector<FusedInstr> code = {{true, static_cast<int>(BinaryOp::Multiply), 0, 1},
                                    {true, static_cast<int>(BinaryOp::Add), 3, 2},
                                    {true, static_cast<int>(BinaryOp::Subtract), 4, 0}};
    int f = p.add_fused({x, y, z}, code, t);
    p.set_outputs({f, p.add_op("add", {f, z}, {})});
    const std::vector<Array> good{scalar_of(t, 1.5), scalar_of(t, -2.25), scalar_of(t, 4)};
    EXPECT_TRUE(p.runs_on_elements(good)) << dtype_name(t);
    expect_run_into_matches_run(p, good, dtype_name(t));
    // An input of another dtype: the general path's TypeError, nothing computed.
    std::vector<Array> in{scalar_of(t, 1), scalar_of(DType::Int8, 2), scalar_of(t, 3)}, out;
    EXPECT_FALSE(p.runs_on_elements(in));
    EXPECT_EQ(testing::error_kind([&] { p.run_into(in, out); }), ErrorKind::Type) << dtype_name(t);
    EXPECT_FALSE(p.runs_on_elements({vec({1}), vec({2}), vec({3})}));  // not 0-d
  }
}

TEST(Program, ASumWithAnEpilogueIsTheSumThenTheChain) {
  // b - 0.5 * sum(g, axis=0) as one sum_fused step: one array, the values of the two steps
  Program p;
  int g = p.add_input(), b = p.add_input(), lr = p.add_constant(f64(0.5));
  OpAttrs axes;
  axes.axes = std::vector<int64_t>{0};
  const std::vector<FusedInstr> code = {{true, static_cast<int>(BinaryOp::Multiply), 2, 0},
                                        {true, static_cast<int>(BinaryOp::Subtract), 1, 3}};
  p.set_outputs({p.add_fused({g, b, lr}, code, DType::Float64, "sum", axes)});
  Array gv = ops::reshape(vec({1, 2, 3, 4, 5, 6}), {3, 2});
  const std::vector<Array> out = p.run({gv, vec({10, 20})});
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].shape(), (Shape{2}));
  EXPECT_EQ(values(out[0]), (std::vector<double>{10 - 0.5 * 9, 20 - 0.5 * 12}));
  // Another head, or a reduction head without its operand: ValueError, nothing added.
  EXPECT_EQ(testing::error_kind([&] { p.add_fused({g, b, lr}, code, DType::Float64, "max", axes); }), ErrorKind::Value);
  EXPECT_EQ(testing::error_kind([&] { p.add_fused({}, code, DType::Float64, "sum", axes); }), ErrorKind::Value);
}

TEST(Program, ScalarInputsOfMixedDtypesPromoteAsTheGeneralPath) {
  Program p;
  int x = p.add_input(), y = p.add_input();
  p.set_outputs({p.add_op("add", {x, y}, {}), p.add_op("divide", {y, y}, {})});
  EXPECT_FALSE(p.runs_on_elements({scalar_of(DType::Float32, 1.5), scalar_of(DType::Float64, 2)}));
  expect_run_into_matches_run(p, {scalar_of(DType::Float32, 1.5), scalar_of(DType::Float64, 2)}, "f32 + f64");
  expect_run_into_matches_run(p, {scalar_of(DType::Int32, 3), scalar_of(DType::Int64, 2)}, "i32 + i64, i64 / i64");
  // One-element arrays that are not 0-d, and 0-d with a 1-d: the general path's shapes.
  expect_run_into_matches_run(p, {vec({1.5}), f64(2)}, "(1,) + ()");
}

TEST(Program, ScalarInputsKeepTheAliasingOfInputConstantAndRepeatedOutputs) {
  Program p;
  int x = p.add_input();
  int k = p.add_constant(f64(10));
  int s = p.add_op("add", {x, k}, {});
  p.set_outputs({s, x, k, s});
  Array in0 = f64(1);
  std::vector<Array> in{in0}, out;
  EXPECT_TRUE(p.runs_on_elements(in));
  p.run_into(in, out);
  ASSERT_EQ(out.size(), 4u);
  EXPECT_EQ(values(out[0]), (std::vector<double>{11}));
  EXPECT_EQ(out[1].storage(), in0.storage());     // an input output is the input itself (as run())
  EXPECT_EQ(out[2].storage(), p.run({in0})[2].storage());  // the constant itself
  EXPECT_EQ(out[3].storage(), out[0].storage());  // one slot output twice: one array (as run())
  EXPECT_NE(out[0].storage(), in0.storage());     // a computed value is a new array
  EXPECT_TRUE(out[0].writable());
}

// ---- SharedCell --------------------------------------------------------------------------

TEST(SharedCell, AReadConvertsOnceThroughTheHostAndAWriteDropsTheOtherCopies) {
  auto list = std::make_shared<ListResidency>();
  SharedCell c(vec({1, 2}));
  std::lock_guard<SharedCell> g(c);
  EXPECT_EQ(c.current(), std::vector<std::string>{"cpu"});
  Value v = c.read(list);  // converted once, then kept
  EXPECT_EQ(ListResidency::list(v), (std::vector<double>{1, 2}));
  EXPECT_EQ(ListResidency::list(c.read(list)), (std::vector<double>{1, 2}));
  EXPECT_EQ(list->to_here, 1);
  EXPECT_EQ(c.current(), (std::vector<std::string>{"cpu", "list"}));
  c.write(list, ListResidency::make({5, 6, 7}));  // the list copy is the only current one
  EXPECT_FALSE(c.host_current());
  EXPECT_EQ(c.current(), std::vector<std::string>{"list"});
  EXPECT_EQ(testing::error_kind([&] { c.host(); }), ErrorKind::Runtime);
  EXPECT_EQ(values(c.read_host()), (std::vector<double>{5, 6, 7}));  // one conversion, kept
  EXPECT_EQ(values(c.read_host()), (std::vector<double>{5, 6, 7}));
  EXPECT_EQ(list->to_host_count, 1);
  EXPECT_EQ(c.current(), (std::vector<std::string>{"cpu", "list"}));
  ListResidency other("list");  // another object of the same name: the same residency
  EXPECT_EQ(ListResidency::list(*c.copy_in(other.name())), (std::vector<double>{5, 6, 7}));
  c.write_host(vec({0}));
  EXPECT_EQ(c.current(), std::vector<std::string>{"cpu"});
  EXPECT_EQ(c.copy_in("list"), nullptr);
}

TEST(SharedCell, KeptConversionsAreCountedPerPairOfResidencies) {
  conversion_counts(/*reset=*/true);
  auto list = std::make_shared<ListResidency>();
  SharedCell c(vec({1, 2, 3}));
  std::lock_guard<SharedCell> g(c);
  c.read(list);
  c.read(list);  // kept: no second conversion
  c.write(list, ListResidency::make({5, 6}));
  c.read_host();
  c.read_host();
  auto counts = conversion_counts(/*reset=*/true);
  ASSERT_EQ(counts.size(), 2u);
  EXPECT_EQ(counts[0].from, "cpu");
  EXPECT_EQ(counts[0].to, "list");
  EXPECT_EQ(counts[0].conversions, 1u);
  EXPECT_EQ(counts[0].bytes, 24u);  // three float64
  EXPECT_EQ(counts[1].from, "list");
  EXPECT_EQ(counts[1].to, "cpu");
  EXPECT_EQ(counts[1].conversions, 1u);
  EXPECT_EQ(counts[1].bytes, 16u);
  EXPECT_TRUE(conversion_counts().empty());  // reset after reading
}

// A residency whose input_filter gives values of another length, or nothing describable.
struct BadResidency final : Residency {
  bool describable = true;
  BadResidency() : Residency("bad") {}
  Value from_host(const Array& host, const TypeSpec&) const override {
    std::vector<double> v = values(host);
    v.push_back(0);
    return ListResidency::make(v);
  }
  Array to_host(const Value& v, const TypeSpec&) const override { return vec(ListResidency::list(v)); }
  std::optional<std::pair<std::string, Shape>> describe(const Value& v) const override {
    if (!describable) return std::nullopt;
    return std::make_pair(std::string("float64"), Shape{static_cast<int64_t>(ListResidency::list(v).size())});
  }
};

TEST(SharedCell, AConvertedCopyOfAnotherTypeIsRefusedAndNotKept) {
  auto bad = std::make_shared<BadResidency>();
  SharedCell c(vec({1, 2}), TypeSpec{DType::Float64, {-1}, "'w'", "TensorType(float64, (None,))"});
  std::lock_guard<SharedCell> g(c);
  EXPECT_EQ(testing::error_kind([&] { c.read(bad); }), ErrorKind::Type);
  bad->describable = false;
  EXPECT_EQ(testing::error_kind([&] { c.read(bad); }), ErrorKind::Type);
  EXPECT_EQ(c.current(), std::vector<std::string>{"cpu"});
}

// A residency whose conversion writes the cell first (a filter running code): the read gives
// the value written, never the stale conversion.
struct WritingResidency final : Residency {
  SharedCell* cell = nullptr;
  mutable int writes_left = 1;
  WritingResidency() : Residency("writing") {}
  Value from_host(const Array& host, const TypeSpec&) const override {
    if (writes_left-- > 0) cell->write_host(vec({42}));
    return ListResidency::make(values(host));
  }
  Array to_host(const Value& v, const TypeSpec&) const override { return vec(ListResidency::list(v)); }
  std::optional<std::pair<std::string, Shape>> describe(const Value& v) const override {
    return std::make_pair(std::string("float64"), Shape{static_cast<int64_t>(ListResidency::list(v).size())});
  }
};

TEST(SharedCell, AWriteDuringAConversionIsWhatTheReadSees) {
  auto w = std::make_shared<WritingResidency>();
  SharedCell c(vec({1, 2}));
  w->cell = &c;
  std::lock_guard<SharedCell> g(c);
  EXPECT_EQ(ListResidency::list(c.read(w)), std::vector<double>{42});
  EXPECT_EQ(values(c.host()), std::vector<double>{42});
  w->writes_left = 100;  // a filter that always writes: a clear error, not a loop
  c.write_host(vec({1}));
  EXPECT_EQ(testing::error_kind([&] { c.read(w); }), ErrorKind::Runtime);
}

TEST(SharedCell, AClearedCellHoldsNoValue) {
  auto list = std::make_shared<ListResidency>();
  SharedCell c(vec({1, 2}));
  std::lock_guard<SharedCell> g(c);
  c.write(list, ListResidency::make({3, 4}));
  c.clear();
  EXPECT_TRUE(c.current().empty());
  EXPECT_EQ(testing::error_kind([&] { c.read_host(); }), ErrorKind::Runtime);
}

TEST(SharedCell, AConversionThatBreaksTheTypeChangesNothing) {
  auto list = std::make_shared<ListResidency>();
  TypeSpec t = TypeSpec::of(vec({1, 2}), "'w'");
  t.shape = {2};
  SharedCell c(vec({1, 2}), t);
  std::lock_guard<SharedCell> g(c);
  c.write(list, ListResidency::make({1, 2, 3}));  // a backend broke the type (not checked here)
  EXPECT_EQ(testing::error_kind([&] { c.read_host(); }), ErrorKind::Type);
  EXPECT_FALSE(c.host_current());
  EXPECT_EQ(c.current(), std::vector<std::string>{"list"});
  EXPECT_EQ(testing::error_kind([&] { SharedCell(vec({1, 2, 3}), t); }), ErrorKind::Type);  // the declared type
}

TEST(SharedCell, SerialsFollowCreationOrder) {
  SharedCell a(f64(0)), b(f64(0));
  EXPECT_LT(a.serial(), b.serial());
}

TEST(SharedCell, LockIsReentrantAndOwned) {
  SharedCell c(f64(0));
  c.lock();
  EXPECT_TRUE(c.try_lock());  // re-entrant
  EXPECT_TRUE(c.held_by_this_thread());
  bool other_got_it = true, other_unlock_failed = false;
  std::thread t([&] {
    other_got_it = c.try_lock();
    other_unlock_failed = testing::error_kind([&] { c.unlock(); }) == ErrorKind::Runtime;
  });
  t.join();
  EXPECT_FALSE(other_got_it);
  EXPECT_TRUE(other_unlock_failed);
  c.unlock();
  EXPECT_TRUE(c.held_by_this_thread());  // still held once
  c.unlock();
  EXPECT_FALSE(c.held_by_this_thread());
  std::thread t2([&] {
    other_got_it = c.try_lock();
    if (other_got_it) c.unlock();
  });
  t2.join();
  EXPECT_TRUE(other_got_it);
}

TEST(SharedCell, RejectsAnUndefinedValue) {
  EXPECT_EQ(testing::error_kind([] { SharedCell c{Array()}; }), ErrorKind::Value);
}

// ---- Function ----------------------------------------------------------------------------

TEST(Function, CounterUpdatesItsCell) {
  Counter k(5);
  for (int i = 0; i < 3; ++i) EXPECT_TRUE((*k.fn)({}).empty());
  EXPECT_EQ(host_value(*k.cell), 8.0);
}

TEST(Function, UpdatesReadOldValuesSoTheyCanSwap) {
  auto p = std::make_shared<Program>();
  int a = p->add_input(), b = p->add_input();
  p->set_outputs({b, a});  // {a: b, b: a}
  auto ca = std::make_shared<SharedCell>(f64(1)), cb = std::make_shared<SharedCell>(f64(2));
  Function f(p, {}, {ca, cb}, {0, 1}, 0);
  f({});
  EXPECT_EQ(host_value(*ca), 2.0);
  EXPECT_EQ(host_value(*cb), 1.0);
  f({});
  EXPECT_EQ(host_value(*ca), 1.0);
  EXPECT_EQ(host_value(*cb), 2.0);
}

TEST(Function, AFailingCallChangesNoSharedVariable) {
  // outputs: a + x (fails when x has another length), then updates b <- b + 1, a <- a + x
  auto p = std::make_shared<Program>();
  int x = p->add_input(), a = p->add_input(), b = p->add_input();
  int one = p->add_constant(f64(1));
  int bb = p->add_op("add", {b, one}, {});  // computed before the failing op
  int ax = p->add_op("add", {a, x}, {});
  p->set_outputs({bb, ax});
  auto ca = std::make_shared<SharedCell>(vec({1, 2, 3})), cb = std::make_shared<SharedCell>(f64(7));
  Function f(p, {InputSpec{DType::Float64, {-1}, "input 0 ('x')"}}, {ca, cb}, {1, 0}, 0);
  EXPECT_EQ(testing::error_kind([&] { f({vec({1, 2})}); }), ErrorKind::Value);
  EXPECT_EQ(host_values(*ca), (std::vector<double>{1, 2, 3}));
  EXPECT_EQ(host_value(*cb), 7.0);
  f({vec({1, 1, 1})});
  EXPECT_EQ(host_values(*ca), (std::vector<double>{2, 3, 4}));
  EXPECT_EQ(host_value(*cb), 8.0);
}

TEST(Function, AStaleHostCopyIsConvertedOnceByTheCall) {
  Counter k(1);
  auto list = std::make_shared<ListResidency>();
  list->to_scalar_ = true;
  {
    std::lock_guard<SharedCell> g(*k.cell);
    k.cell->write(list, ListResidency::make({10}));
  }
  std::vector<Array> in, out;
  k.fn->call(in, out);
  EXPECT_EQ(list->to_host_count, 1);
  EXPECT_EQ(host_value(*k.cell), 11.0);
  EXPECT_FALSE(k.cell->held_by_this_thread());  // every lock was released
  k.fn->call(in, out);
  EXPECT_EQ(list->to_host_count, 1);
  EXPECT_EQ(host_value(*k.cell), 12.0);
}

TEST(Function, CallNowRunsSmallCallsWhoseLocksAreFreeAndOtherwiseChangesNothing) {
  Counter k(1);
  std::vector<Array> in, out;
  EXPECT_TRUE(k.fn->call_now(in, out, 1));  // one shared element
  EXPECT_EQ(host_value(*k.cell), 2.0);
  EXPECT_FALSE(k.fn->call_now(in, out, 0));  // too many elements
  EXPECT_FALSE(k.cell->held_by_this_thread());
  EXPECT_EQ(host_value(*k.cell), 2.0);
  {
    // Another thread holds the cell: NotNow at once (no wait), nothing changed.
    std::mutex mu;
    std::condition_variable cv;
    bool locked = false, done = false;
    std::thread holder([&] {
      std::lock_guard<SharedCell> g(*k.cell);
      std::unique_lock<std::mutex> l(mu);
      locked = true;
      cv.notify_all();
      cv.wait(l, [&] { return done; });
    });
    {
      std::unique_lock<std::mutex> l(mu);
      cv.wait(l, [&] { return locked; });
    }
    EXPECT_FALSE(k.fn->call_now(in, out, 100));
    {
      std::lock_guard<std::mutex> l(mu);
      done = true;
    }
    cv.notify_all();
    holder.join();
  }
  EXPECT_EQ(host_value(*k.cell), 2.0);
  auto list = std::make_shared<ListResidency>();
  list->to_scalar_ = true;
  {
    std::lock_guard<SharedCell> g(*k.cell);
    k.cell->write(list, ListResidency::make({5}));
  }
  EXPECT_FALSE(k.fn->call_now(in, out, 100));  // a conversion: not now
  EXPECT_FALSE(k.cell->held_by_this_thread());
  EXPECT_EQ(list->to_host_count, 0);
  k.fn->call(in, out);
  EXPECT_TRUE(k.fn->call_now(in, out, 100));
  EXPECT_EQ(host_value(*k.cell), 7.0);
}

TEST(Function, OutputsNeverAliasSharedStorageOrEachOther) {
  // f = function([], [a, a], updates={a: a * 2}): the linker compiles copies for the outputs
  auto p = std::make_shared<Program>();
  int a = p->add_input();
  int two = p->add_constant(f64(2));
  p->set_outputs({p->add_op("copy", {a}, {}), p->add_op("copy", {a}, {}), p->add_op("multiply", {a, two}, {})});
  auto ca = std::make_shared<SharedCell>(vec({1, 2}));
  Function f(p, {}, {ca}, {0}, 2);
  std::vector<Array> out = f({});
  ASSERT_EQ(out.size(), 2u);
  std::lock_guard<SharedCell> g(*ca);
  EXPECT_NE(out[0].data(), out[1].data());
  EXPECT_NE(out[0].data(), ca->host().data());
  EXPECT_EQ(values(out[0]), (std::vector<double>{1, 2}));
  EXPECT_EQ(values(ca->host()), (std::vector<double>{2, 4}));
}

// ---- updates on elements (Note [Scalar programs], Note [Updates in place]) ---------------

const void* host_data(SharedCell& c) {
  std::lock_guard<SharedCell> g(c);
  return c.host().data();
}

TEST(Function, AScalarUpdateGoesInPlaceOnlyWhenNoOneElseHoldsTheValue) {
  Counter k(0);
  const void* p0 = host_data(*k.cell);
  (*k.fn)({});
  EXPECT_EQ(host_value(*k.cell), 1.0);
  EXPECT_EQ(host_data(*k.cell), p0);  // the cell held the only reference: written in place

  Array held;  // as get_value(borrow=True) holds it
  {
    std::lock_guard<SharedCell> g(*k.cell);
    held = k.cell->host();
  }
  (*k.fn)({});
  EXPECT_EQ(host_value(*k.cell), 2.0);
  EXPECT_NE(host_data(*k.cell), p0);        // a new buffer
  EXPECT_EQ(*held.data_as<double>(), 1.0);  // the held value never changes
  EXPECT_EQ(held.data(), p0);

  const void* p1 = host_data(*k.cell);
  held = Array();
  (*k.fn)({});
  EXPECT_EQ(host_value(*k.cell), 3.0);
  EXPECT_EQ(host_data(*k.cell), p1);

  // A copy in another residency is current too: not in place (the write drops that copy).
  auto list = std::make_shared<ListResidency>();
  list->to_scalar_ = true;
  {
    std::lock_guard<SharedCell> g(*k.cell);
    k.cell->read(list);
  }
  (*k.fn)({});
  EXPECT_EQ(host_value(*k.cell), 4.0);
  EXPECT_NE(host_data(*k.cell), p1);
  {
    std::lock_guard<SharedCell> g(*k.cell);
    EXPECT_EQ(k.cell->current(), std::vector<std::string>{"cpu"});
  }
  const void* p2 = host_data(*k.cell);
  (*k.fn)({});
  EXPECT_EQ(host_value(*k.cell), 5.0);
  EXPECT_EQ(host_data(*k.cell), p2);
}

void count_release(void* ctx, void*, std::size_t) noexcept { ++*static_cast<int*>(ctx); }

TEST(Function, AdoptedAndReadOnlyHostValuesAreNeverWrittenInPlace) {
  double foreign = 5;  // someone else's memory, adopted by the cell
  int released = 0;
  auto st = std::make_shared<Storage>(
      DataPtr(&foreign, sizeof foreign, Device::cpu(), Origin::Adopted, &count_release, &released));
  {
    Counter k(0);
    {
      std::lock_guard<SharedCell> g(*k.cell);
      k.cell->write_host(Array(std::move(st), &foreign, {}, {}, DType::Float64, true));
    }
    (*k.fn)({});
    EXPECT_EQ(host_value(*k.cell), 6.0);
    EXPECT_EQ(foreign, 5.0);  // never written
    EXPECT_EQ(released, 1);   // the cell let go of it, once
    (*k.fn)({});
    EXPECT_EQ(host_value(*k.cell), 7.0);
  }
  EXPECT_EQ(released, 1);

  Counter r(0);
  {
    std::lock_guard<SharedCell> g(*r.cell);
    r.cell->write_host(f64(3).as_readonly());  // the only reference, but read-only
  }
  const void* p = host_data(*r.cell);
  (*r.fn)({});
  EXPECT_EQ(host_value(*r.cell), 4.0);
  EXPECT_NE(host_data(*r.cell), p);
}

// The same program on 0-d cells (runs on elements) and on 1-element vectors (general path):
// the updates must agree. `make` builds the program for its Function's cells.
struct BothPaths {
  std::vector<double> scalar_path, vector_path;
};
BothPaths run_both(const std::function<std::shared_ptr<Program>(bool vec_path)>& make, std::vector<double> start,
                   std::vector<int> cell_of_input, std::vector<int> updates, int calls) {
  BothPaths r;
  for (bool vec_path : {false, true}) {
    std::vector<std::shared_ptr<SharedCell>> cells, listed;
    for (double v : start) cells.push_back(std::make_shared<SharedCell>(vec_path ? vec({v}) : f64(v)));
    for (int c : cell_of_input) listed.push_back(cells[c]);
    Function f(make(vec_path), {}, listed, updates, 0);
    for (int i = 0; i < calls; ++i) f({});
    auto& out = vec_path ? r.vector_path : r.scalar_path;
    for (auto& c : cells) out.push_back(host_value(*c));
  }
  return r;
}

TEST(Function, UpdatesOnElementsAgreeWithTheGeneralPath) {
  auto scalar_one = [](bool vec_path) { return vec_path ? vec({1}) : f64(1); };
  // {a: a + 1, b: a}: b must get a's old value although a's update may go in place
  auto keep_old = [&](bool v) {
    auto p = std::make_shared<Program>();
    int a = p->add_input(), b = p->add_input();
    (void)b;
    p->set_outputs({p->add_op("add", {a, p->add_constant(scalar_one(v))}, {}), a});
    return p;
  };
  BothPaths r = run_both(keep_old, {1, 10}, {0, 1}, {0, 1}, 3);
  EXPECT_EQ(r.scalar_path, r.vector_path);
  EXPECT_EQ(r.scalar_path, (std::vector<double>{4, 3}));
  // {a: b, b: a} swaps
  auto swap = [](bool) {
    auto p = std::make_shared<Program>();
    int a = p->add_input(), b = p->add_input();
    p->set_outputs({b, a});
    return p;
  };
  r = run_both(swap, {1, 2}, {0, 1}, {0, 1}, 3);
  EXPECT_EQ(r.scalar_path, r.vector_path);
  EXPECT_EQ(r.scalar_path, (std::vector<double>{2, 1}));
  // one cell listed twice, updated twice: the later update wins on both paths
  auto twice = [&](bool v) {
    auto p = std::make_shared<Program>();
    int a = p->add_input(), a2 = p->add_input();
    int one = p->add_constant(scalar_one(v));
    p->set_outputs({p->add_op("add", {a, one}, {}), p->add_op("multiply", {a2, p->add_op("add", {one, one}, {})}, {})});
    return p;
  };
  r = run_both(twice, {3}, {0, 0}, {0, 1}, 2);
  EXPECT_EQ(r.scalar_path, r.vector_path);
  EXPECT_EQ(r.scalar_path, (std::vector<double>{12}));
  // {a: a * 2, b: a * 2} (one step feeds two updates), and {a: a + b, b: a + b} in place
  auto shared_step = [](bool) {
    auto p = std::make_shared<Program>();
    int a = p->add_input(), b = p->add_input();
    int s = p->add_op("add", {a, b}, {});
    p->set_outputs({s, s});
    return p;
  };
  r = run_both(shared_step, {1, 2}, {0, 1}, {0, 1}, 3);
  EXPECT_EQ(r.scalar_path, r.vector_path);
  EXPECT_EQ(r.scalar_path, (std::vector<double>{12, 12}));
}

TEST(Function, AnOutputThatIsAlsoAnUpdateDoesNotAliasTheCell) {
  // f = function([], a * 2, updates={a: a * 2}): one step is both the output and the update
  auto p = std::make_shared<Program>();
  int a = p->add_input();
  int s = p->add_op("multiply", {a, p->add_constant(f64(2))}, {});
  p->set_outputs({s, s});
  auto ca = std::make_shared<SharedCell>(f64(3));
  Function f(p, {}, {ca}, {0}, 1);
  std::vector<Array> out = f({});
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(*out[0].data_as<double>(), 6.0);
  EXPECT_EQ(host_value(*ca), 6.0);
  EXPECT_NE(out[0].data(), host_data(*ca));
  f({});
  EXPECT_EQ(*out[0].data_as<double>(), 6.0);  // the returned value is not the cell's buffer
  EXPECT_EQ(host_value(*ca), 12.0);
}

TEST(Function, ACallOnBorrowedInputsLeavesThemAsTheyAre) {
  // {a: a + x * y, b: b + z} (bench_call.cpp's 3-in/2-upd function), on elements and on vectors
  for (bool vectors : {false, true}) {
    auto make = [&](double v) { return vectors ? vec({v}) : f64(v); };
    auto p = std::make_shared<Program>();
    int x = p->add_input(), y = p->add_input(), z = p->add_input(), a = p->add_input(), b = p->add_input();
    p->set_outputs({p->add_op("add", {a, p->add_op("multiply", {x, y}, {})}, {}), p->add_op("add", {b, z}, {})});
    auto ca = std::make_shared<SharedCell>(make(0)), cb = std::make_shared<SharedCell>(make(0));
    std::vector<InputSpec> specs(3);
    for (auto& s : specs) s = {DType::Float64, vectors ? std::vector<int64_t>{1} : std::vector<int64_t>{}, "x"};
    Function f(p, specs, {ca, cb}, {0, 1}, 0);
    const Array in[3] = {make(2), make(3), make(4)};
    std::vector<Array> out;
    for (int i = 0; i < 2; ++i) f.call(in, 3, out);
    EXPECT_TRUE(out.empty());
    EXPECT_EQ(host_value(*ca), 12.0);
    EXPECT_EQ(host_value(*cb), 8.0);
    for (int i = 0; i < 3; ++i) {
      ASSERT_TRUE(in[i].defined());
      EXPECT_EQ(values(in[i]).at(0), 2.0 + i);
      EXPECT_EQ(in[i].storage().use_count(), 1);  // no reference kept
    }
    EXPECT_EQ(testing::error_kind([&] { f.call(in, 2, out); }), ErrorKind::Type);
  }
}

TEST(Function, InputsFollowTheCastingRules) {
  auto p = std::make_shared<Program>();
  int x = p->add_input();
  p->set_outputs({p->add_op("copy", {x}, {})});
  Function f(p, {InputSpec{DType::Float64, {2}, "input 0 ('x')"}}, {}, {}, 1);
  Array i32 = ops::astype(vec({1, 2}), DType::Int32);
  EXPECT_FALSE(f.accepts(0, i32));
  Array conv = f({i32}).at(0);  // int32 -> float64 is safe
  EXPECT_EQ(conv.dtype(), DType::Float64);
  EXPECT_EQ(values(conv), (std::vector<double>{1, 2}));
  EXPECT_TRUE(f.accepts(0, vec({1, 2})));
  EXPECT_EQ(testing::error_kind([&] { f({vec({1, 2, 3})}); }), ErrorKind::Value);  // static length 2
  EXPECT_EQ(testing::error_kind([&] { f({f64(1)}); }), ErrorKind::Type);           // ndim
  EXPECT_EQ(testing::error_kind([&] { f({}); }), ErrorKind::Type);                 // arity

  Function g(p, {InputSpec{DType::Int32, {-1}, "input 0 ('n')"}}, {}, {}, 1);
  EXPECT_EQ(testing::error_kind([&] { g({vec({1.5})}); }), ErrorKind::Type);  // float64 -> int32 is unsafe
  Function h(p, {InputSpec{DType::Int32, {-1}, "input 0 ('n')"}}, {}, {}, 1, /*allow_input_downcast=*/true);
  Array down = h({vec({1.0, 2.0})}).at(0);
  EXPECT_EQ(down.dtype(), DType::Int32);
}

TEST(Function, ShapeCheckRunsOncePerShapeCombination) {
  auto p = std::make_shared<Program>();
  int x = p->add_input();
  p->set_outputs({p->add_op("copy", {x}, {})});
  Function f(p, {InputSpec{DType::Float64, {-1}, "x"}}, {}, {}, 1);
  int checks = 0;
  f.set_shape_check([&](const std::vector<Array>& v) {
    ++checks;
    UMA_CHECK(v.at(0).shape()[0] != 5, Value, "length 5 refused");
  });
  f({vec({1, 2})});
  f({vec({3, 4})});
  f({vec({1, 2, 3})});
  EXPECT_EQ(checks, 2);
  EXPECT_EQ(testing::error_kind([&] { f({vec({1, 2, 3, 4, 5})}); }), ErrorKind::Value);
}

std::string message_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::Type);
    return e.what();
  }
  ADD_FAILURE() << "no uma::Error thrown";
  return "";
}

Array i32(int v) { return ops::scalar_array(Scalar::from_int(v), DType::Int32); }

TEST(Function, AnUpdateOfAnotherDtypeOrNdimIsATypeErrorAndNothingIsWritten) {
  // {a: a + 1, b: b + 0.5} on an int32 cell b: the Program's add returns float64 for b, which
  // must not be stored (the cell keeps its int32 value, and a's good update is not written).
  for (bool vec_path : {false, true}) {
    auto p = std::make_shared<Program>();
    int a = p->add_input(), b = p->add_input();
    int one = p->add_constant(vec_path ? vec({1}) : f64(1));
    int half = p->add_constant(vec_path ? vec({0.5}) : f64(0.5));
    p->set_outputs({p->add_op("add", {a, one}, {}), p->add_op("add", {b, half}, {})});
    Array b0 = vec_path ? ops::astype(vec({7}), DType::Int32) : i32(7);
    auto ca = std::make_shared<SharedCell>(vec_path ? vec({1}) : f64(1));
    auto cb = std::make_shared<SharedCell>(b0);
    Function f(p, {}, {ca, cb}, {0, 1}, 0);
    std::string msg = message_of([&] { f({}); });
    const std::string got = std::string("backend 'cpu' returned float64 of shape ") + (vec_path ? "(1,)" : "()");
    EXPECT_NE(msg.find(got), std::string::npos) << msg;
    EXPECT_NE(msg.find("shared variable #1 of type int32"), std::string::npos) << msg;
    EXPECT_EQ(host_value(*ca), 1.0);
    std::lock_guard<SharedCell> g(*cb);
    EXPECT_EQ(cb->host().data(), b0.data());  // the same buffer, int32
    EXPECT_EQ(cb->host().dtype(), DType::Int32);
  }
  // {a: sum(a)}: a 0-d value for a vector
  auto p = std::make_shared<Program>();
  int a = p->add_input();
  p->set_outputs({p->add_op("sum", {a}, {})});
  auto ca = std::make_shared<SharedCell>(vec({1, 2}), TypeSpec{DType::Float64, {-1}, "'a'", "TensorType(float64, (None,))"});
  Function f(p, {}, {ca}, {0}, 0);
  EXPECT_EQ(message_of([&] { f({}); }),
            "function: backend 'cpu' returned float64 of shape () for shared variable 'a' of type "
            "TensorType(float64, (None,)); no shared variable was changed");
  EXPECT_EQ(host_values(*ca), (std::vector<double>{1, 2}));
}

TEST(Function, UpdatesAreCheckedAgainstTheDeclaredStaticLengths) {
  // {a: b + 1} where a is declared of static shape (3,) and b holds 2 elements: the value's
  // length breaks a's type (TypeError), unless the graph left that axis open (ValueError).
  auto p = std::make_shared<Program>();
  int b = p->add_input();
  p->add_input();  // a
  p->set_outputs({p->add_op("add", {b, p->add_constant(f64(1))}, {})});
  auto ca = std::make_shared<SharedCell>(vec({1, 2, 3}), TypeSpec{DType::Float64, {3}, "'a'", "TensorType(float64, (3,))"});
  auto cb = std::make_shared<SharedCell>(vec({5, 6}));
  Function f(p, {}, {cb, ca}, {1}, 0);
  EXPECT_EQ(message_of([&] { f({}); }),
            "function: backend 'cpu' returned float64 of shape (2,) for shared variable 'a' of type "
            "TensorType(float64, (3,)); no shared variable was changed");
  EXPECT_EQ(host_values(*ca), (std::vector<double>{1, 2, 3}));
  EXPECT_EQ(testing::error_kind([&] { f.set_open_axes({}); }), ErrorKind::Value);  // one list per update
  f.set_open_axes({{0}});
  try {
    f({});
    ADD_FAILURE() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::Value);
    EXPECT_EQ(std::string(e.what()), "function: the update of shared variable 'a' has shape (2,), but the "
                                     "variable's static shape is (3,); no shared variable was changed");
  }
  EXPECT_EQ(host_values(*ca), (std::vector<double>{1, 2, 3}));
  {
    std::lock_guard<SharedCell> g(*cb);
    cb->write_host(vec({7, 8, 9}));
  }
  f({});
  EXPECT_EQ(host_values(*ca), (std::vector<double>{8, 9, 10}));
}

// A thunk of native values: {a: a appended with x} on ListResidency values.
struct AppendThunk final : Thunk {
  void run(const std::vector<Value>& values, std::vector<Value>& outputs) const override {
    std::vector<double> a = ListResidency::list(values[1]);
    a.push_back(ListResidency::list(values[0]).at(0));
    outputs.push_back(ListResidency::make({static_cast<double>(a.size())}));  // output: the length
    outputs.push_back(ListResidency::make(a));
  }
  std::optional<std::pair<std::string, Shape>> describe(const Value& v) const override {
    return std::make_pair(std::string("float64"), Shape{static_cast<int64_t>(ListResidency::list(v).size())});
  }
  std::string kind(const Value&) const override { return "list"; }
  Array to_array(const Value& v) const override { return vec(ListResidency::list(v)); }
};

TEST(Function, AThunkReadsAndWritesItsResidencyThroughTheSamePhases) {
  auto list = std::make_shared<ListResidency>();
  auto ca = std::make_shared<SharedCell>(vec({1}), TypeSpec{DType::Float64, {-1}, "'a'", "TensorType(float64, (None,))"});
  Function f(std::make_shared<AppendThunk>(), {InputSpec{DType::Float64, {}, "input 0 ('x')"}}, {ca}, {0}, 1,
             FunctionOptions{"list", list, false, false});
  std::vector<Value> in{ListResidency::make({2})}, out;
  f.call(in, out);
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(ListResidency::list(out[0]), std::vector<double>{2});
  EXPECT_EQ(list->to_here, 1);
  {
    std::lock_guard<SharedCell> g(*ca);
    EXPECT_EQ(ca->current(), std::vector<std::string>{"list"});  // lazy: the host copy is dropped
  }
  in = {ListResidency::make({3})};
  EXPECT_TRUE(f.call_now(in, out));
  EXPECT_EQ(list->to_here, 1);  // its own copy was current
  EXPECT_EQ(list->to_host_count, 0);
  EXPECT_EQ(host_values(*ca), (std::vector<double>{1, 2, 3}));
  EXPECT_EQ(list->to_host_count, 1);

  // update_policy="eager": the host copy is refreshed too; a host residency stores Arrays.
  Function eager(std::make_shared<AppendThunk>(), {InputSpec{DType::Float64, {}, "x"}}, {ca}, {0}, 1,
                 FunctionOptions{"list", list, false, true});
  in = {ListResidency::make({4})};
  eager.call(in, out);
  {
    std::lock_guard<SharedCell> g(*ca);
    EXPECT_EQ(ca->current(), (std::vector<std::string>{"cpu", "list"}));
  }
  EXPECT_EQ(host_values(*ca), (std::vector<double>{1, 2, 3, 4}));
}

struct LiarThunk final : Thunk {
  int n_out;
  explicit LiarThunk(int n) : n_out(n) {}
  void run(const std::vector<Value>&, std::vector<Value>& outputs) const override {
    for (int i = 0; i < n_out; ++i) outputs.push_back(ListResidency::make({1, 2}));
  }
  std::optional<std::pair<std::string, Shape>> describe(const Value&) const override {
    return std::make_pair(std::string(">f8"), Shape{2});  // a dtype uma lacks
  }
  std::string kind(const Value&) const override { return "list"; }
  Array to_array(const Value& v) const override { return vec(ListResidency::list(v)); }
};

TEST(Function, AThunkBreakingItsContractChangesNothing) {
  auto list = std::make_shared<ListResidency>();
  auto ca = std::make_shared<SharedCell>(vec({1}), TypeSpec{DType::Float64, {-1}, "'a'", "TensorType(float64, (None,))"});
  Function wrong_count(std::make_shared<LiarThunk>(2), {}, {ca}, {0}, 0, FunctionOptions{"liar", list, false, false});
  std::vector<Value> in, out;
  EXPECT_NE(message_of([&] { wrong_count.call(in, out); }).find("'liar''s thunk returned 2 values, expected 1"),
            std::string::npos);
  Function wrong_dtype(std::make_shared<LiarThunk>(1), {}, {ca}, {0}, 0, FunctionOptions{"liar", list, false, false});
  in.clear();
  EXPECT_EQ(message_of([&] { wrong_dtype.call(in, out); }),
            "function: backend 'liar' returned >f8 of shape (2,) for shared variable 'a' of type "
            "TensorType(float64, (None,)); no shared variable was changed");
  EXPECT_EQ(host_values(*ca), std::vector<double>{1});
  std::lock_guard<SharedCell> g(*ca);
  EXPECT_EQ(ca->current(), (std::vector<std::string>{"cpu", "list"}));  // read, never written
}

TEST(Function, ConstructorChecksThatProgramAndSpecsFit) {
  Counter k;
  auto cell = std::make_shared<SharedCell>(f64(0));
  EXPECT_EQ(testing::error_kind([&] { Function(k.prog, {}, {}, {}, 0); }), ErrorKind::Value);            // reads 1, gets 0
  EXPECT_EQ(testing::error_kind([&] { Function(k.prog, {}, {cell}, {}, 0); }), ErrorKind::Value);        // returns 1, 0 used
  EXPECT_EQ(testing::error_kind([&] { Function(k.prog, {}, {cell}, {3}, 0); }), ErrorKind::Value);       // bad target
  EXPECT_EQ(testing::error_kind([&] { Function(nullptr, {}, {cell}, {0}, 0); }), ErrorKind::Value);
}

}  // namespace
}  // namespace uma::runtime
