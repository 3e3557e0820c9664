#include "uma/runtime/program.h"

#include <algorithm>
#include <chrono>
#include <cstring>
#include <map>
#include <mutex>
#include <optional>

#include "kernels/cuda_kernels.h"
#include "uma/error.h"
#include "uma/memory/cuda.h"
#include "uma/ops.h"

namespace uma::runtime {

namespace {
using In = OpArgs;
// The inputs of one fused chain run on elements (their pointers on the stack).
constexpr std::size_t kScalarMaxInputs = 16;

template <BinaryOp OP>
Array bin(const In& x, const OpAttrs&) { return ops::binary(OP, x[0], x[1]); }
template <UnaryOp OP>
Array un(const In& x, const OpAttrs&) { return ops::unary(OP, x[0]); }
template <ReduceOp OP>
Array red(const In& x, const OpAttrs& a) { return ops::reduce(OP, x[0], a.axes, a.keepdims); }

// An entry of the registry: spec(fn, arity), then what OpSpec says beyond them.
struct Spec {
  OpSpec s;
  Spec&& reads(std::initializer_list<const char*> names) && {
    s.attrs.assign(names.begin(), names.end());
    return std::move(*this);
  }
  Spec&& needs(std::initializer_list<const char*> names) && {
    s.required.assign(names.begin(), names.end());
    return std::move(*this);
  }
  Spec&& axis_is(AxisAttr kind) && {
    s.axis = kind;
    return std::move(*this);
  }
  Spec&& shape_only(std::vector<int> inputs) && {
    s.shape_only = std::move(inputs);
    return std::move(*this);
  }
  operator OpSpec() && { return std::move(s); }  // NOLINT: the registry's entries are Specs
};
Spec spec(OpFn fn, int arity) { return Spec{OpSpec{fn, arity, {}, {}, AxisAttr::Axes, {}}}; }

const std::map<std::string, OpSpec>& registry() {
  static const std::map<std::string, OpSpec> r = {
      // Every elementwise op of the op table, under its name.
#define UMA_BIN_ENTRY(Id, name, ...) {#name, spec(&bin<BinaryOp::Id>, 2)},
#define UMA_UN_ENTRY(Id, name, ...) {#name, spec(&un<UnaryOp::Id>, 1)},
      UMA_BINARY_OPS(UMA_BIN_ENTRY) UMA_UNARY_OPS(UMA_UN_ENTRY)
#undef UMA_BIN_ENTRY
#undef UMA_UN_ENTRY
      {"round", spec([](const In& x, const OpAttrs& a) { return ops::round(x[0], a.decimals); }, 1)
          .reads({"decimals"})},
      {"clip", spec([](const In& x, const OpAttrs&) { return ops::clip(x[0], x[1], x[2]); }, 3)},
      // Every reduction of the op table.
#define UMA_RED_ENTRY(Id, name) {#name, spec(&red<ReduceOp::Id>, 1).reads({"axis", "keepdims"})},
      UMA_REDUCE_OPS(UMA_RED_ENTRY)
#undef UMA_RED_ENTRY
      {"where", spec([](const In& x, const OpAttrs&) { return ops::where(x[0], x[1], x[2]); }, 3)},
      {"matmul", spec([](const In& x, const OpAttrs&) { return ops::matmul(x[0], x[1]); }, 2)},
      {"dot", spec([](const In& x, const OpAttrs&) { return ops::matmul(x[0], x[1]); }, 2)},
      {"reshape", spec([](const In& x, const OpAttrs& a) { return ops::reshape(x[0], a.shape); }, 1)
          .reads({"shape"}).needs({"shape"})},
      {"transpose", spec([](const In& x, const OpAttrs& a) { return ops::transpose(x[0], a.perm); }, 1)
          .reads({"axes"})},
      {"broadcast_to", spec([](const In& x, const OpAttrs& a) { return ops::broadcast_to(x[0], a.shape); }, 1)
          .reads({"shape"}).needs({"shape"})},
      {"concatenate", spec([](const In& x, const OpAttrs& a) { return ops::concatenate(x.copies(), a.axis); }, kOneOrMore)
          .reads({"axis"}).axis_is(AxisAttr::Int)},
      {"stack", spec([](const In& x, const OpAttrs& a) { return ops::stack(x.copies(), a.axis); }, kOneOrMore)
          .reads({"axis"}).axis_is(AxisAttr::Int)},
      {"expand_dims", spec([](const In& x, const OpAttrs& a) { return ops::expand_dims(x[0], a.axis); }, 1)
          .reads({"axis"}).needs({"axis"}).axis_is(AxisAttr::Int)},
      {"squeeze", spec([](const In& x, const OpAttrs& a) { return ops::squeeze(x[0], a.axes); }, 1).reads({"axis"})},
      {"one_hot", spec([](const In& x, const OpAttrs& a) {
         return ops::one_hot(x[0], a.depth, a.dtype.value_or(DType::Float64));
       }, 1).reads({"depth", "dtype"}).needs({"depth"})},
      {"astype", spec([](const In& x, const OpAttrs& a) { return ops::astype(x[0], a.dtype.value_or(x[0].dtype())); }, 1)
          .reads({"dtype"}).needs({"dtype"})},
      {"copy", spec([](const In& x, const OpAttrs&) { return ops::copy(x[0]); }, 1)},
      {"softmax_cross_entropy", spec([](const In& x, const OpAttrs& a) {
         return ops::softmax_cross_entropy(x[0], x[1], a.check_labels);
       }, 2).reads({"check_labels"})},
      {"softmax_cross_entropy_grad", spec([](const In& x, const OpAttrs& a) {
         return ops::softmax_cross_entropy_grad(x[0], x[1], x[2], a.check_labels);
       }, 3).reads({"check_labels"})},
      {"one_hot_cross_entropy", spec([](const In& x, const OpAttrs& a) {
         return ops::one_hot_cross_entropy(x[0], x[1], a.depth);
       }, 2).reads({"depth"}).needs({"depth"})},
      {"one_hot_cross_entropy_grad", spec([](const In& x, const OpAttrs& a) {
         return ops::one_hot_cross_entropy_grad(x[0], x[1], x[2], a.depth);
       }, 3).reads({"depth"}).needs({"depth"})},
      // Ops whose result takes the run-time shape (and the device) of another input, which
      // they read for nothing else.
      {"broadcast_like", spec([](const In& x, const OpAttrs&) { return ops::broadcast_to(x[0], x[1].shape()); }, 2)
          .shape_only({1})},
      {"reshape_like", spec([](const In& x, const OpAttrs&) { return ops::reshape(x[0], x[1].shape()); }, 2)
          .shape_only({1})},
      {"zeros_like", spec([](const In& x, const OpAttrs& a) {
         return ops::zeros(x[0].shape(), a.dtype.value_or(x[0].dtype()), x[0].device());
       }, 1).reads({"dtype"}).shape_only({0})},
      {"ones_like", spec([](const In& x, const OpAttrs& a) {
         return ops::ones(x[0].shape(), a.dtype.value_or(x[0].dtype()), x[0].device());
       }, 1).reads({"dtype"}).shape_only({0})},
      {"empty_like", spec([](const In& x, const OpAttrs& a) {
         return Array::empty(x[0].shape(), a.dtype.value_or(x[0].dtype()), x[0].device());
       }, 1).reads({"dtype"}).shape_only({0})},
      {"full_like", spec([](const In& x, const OpAttrs& a) {
         UMA_CHECK(a.fill_value.has_value(), Value, "full_like: missing fill_value");
         return ops::full(x[0].shape(), *a.fill_value, a.dtype.value_or(x[0].dtype()), x[0].device());
       }, 1).reads({"fill_value", "dtype"}).needs({"fill_value"}).shape_only({0})},
      // Gradient of getitem: zeros shaped like input 1 (on its device) with input 0 written at the index.
      {"getitem_grad", spec([](const In& x, const OpAttrs& a) {
         Array z = ops::zeros(x[1].shape(), a.dtype.value_or(x[1].dtype()), x[1].device());
         ops::assign(ops::getitem(z, a.index), x[0]);
         return z;
       }, 2).reads({"index", "dtype"}).needs({"index"}).shape_only({1})},
      {"getitem", spec([](const In& x, const OpAttrs& a) { return ops::getitem(x[0], a.index); }, 1)
          .reads({"index"}).needs({"index"})},
      {"var", spec([](const In& x, const OpAttrs& a) { return ops::var(x[0], a.axes, a.ddof, a.keepdims); }, 1)
          .reads({"axis", "ddof", "keepdims"})},
      {"std", spec([](const In& x, const OpAttrs& a) { return ops::std_dev(x[0], a.axes, a.ddof, a.keepdims); }, 1)
          .reads({"axis", "ddof", "keepdims"})},
      {"logsumexp", spec([](const In& x, const OpAttrs& a) { return ops::logsumexp(x[0], a.axes, a.keepdims); }, 1)
          .reads({"axis", "keepdims"})},
      {"cumsum", spec([](const In& x, const OpAttrs& a) {
         return ops::cumsum(x[0], a.axes ? std::optional<int64_t>(a.axis) : std::nullopt);
       }, 1).reads({"axis"}).axis_is(AxisAttr::IntOrNone)},
      {"cumprod", spec([](const In& x, const OpAttrs& a) {
         return ops::cumprod(x[0], a.axes ? std::optional<int64_t>(a.axis) : std::nullopt);
       }, 1).reads({"axis"}).axis_is(AxisAttr::IntOrNone)},
      {"outer", spec([](const In& x, const OpAttrs&) { return ops::outer(x[0], x[1]); }, 2)},
      {"diag", spec([](const In& x, const OpAttrs& a) { return ops::diag(x[0], a.offset); }, 1).reads({"k"})},
      {"trace", spec([](const In& x, const OpAttrs& a) { return ops::trace(x[0], a.offset, a.axis1, a.axis2); }, 1)
          .reads({"offset", "axis1", "axis2"})},
      {"diagonal", spec([](const In& x, const OpAttrs& a) { return ops::diagonal(x[0], a.offset, a.axis1, a.axis2); }, 1)
          .reads({"offset", "axis1", "axis2"})},
      {"take", spec([](const In& x, const OpAttrs& a) {
         return ops::take(x[0], x[1], a.axes ? std::optional<int64_t>(a.axis) : std::nullopt);
       }, 2).reads({"axis"}).axis_is(AxisAttr::IntOrNone)},
      {"mask_select", spec([](const In& x, const OpAttrs&) { return ops::mask_select(x[0], x[1]); }, 2)},
      {"set_subtensor", spec([](const In& x, const OpAttrs& a) { return ops::update_basic(x[0], a.index, x[1], false); }, 2)
          .reads({"index"}).needs({"index"})},
      {"inc_subtensor", spec([](const In& x, const OpAttrs& a) { return ops::update_basic(x[0], a.index, x[1], true); }, 2)
          .reads({"index"}).needs({"index"})},
      {"set_subtensor_take", spec([](const In& x, const OpAttrs& a) {
         return ops::update_take(x[0], x[2], a.axis, x[1], false);
       }, 3).reads({"axis"}).axis_is(AxisAttr::Int)},
      {"inc_subtensor_take", spec([](const In& x, const OpAttrs& a) {
         return ops::update_take(x[0], x[2], a.axis, x[1], true);
       }, 3).reads({"axis"}).axis_is(AxisAttr::Int)},
      {"set_subtensor_mask", spec([](const In& x, const OpAttrs&) { return ops::update_mask(x[0], x[2], x[1], false); }, 3)},
      {"inc_subtensor_mask", spec([](const In& x, const OpAttrs&) { return ops::update_mask(x[0], x[2], x[1], true); }, 3)},
      {"softmax", spec([](const In& x, const OpAttrs& a) { return ops::softmax(x[0], a.axis, false); }, 1)
          .reads({"axis"}).needs({"axis"}).axis_is(AxisAttr::Int)},
      {"log_softmax", spec([](const In& x, const OpAttrs& a) { return ops::softmax(x[0], a.axis, true); }, 1)
          .reads({"axis"}).needs({"axis"}).axis_is(AxisAttr::Int)},
      {"relu", spec([](const In& x, const OpAttrs&) { return ops::relu(x[0]); }, 1)},
  };
  return r;
}
}  // namespace

std::vector<Array> OpArgs::copies() const {
  std::vector<Array> v;
  v.reserve(n_);
  for (std::size_t i = 0; i < n_; ++i) v.push_back(*refs_[i]);
  return v;
}

const OpSpec* find_op(const std::string& name) {
  auto it = registry().find(name);
  return it == registry().end() ? nullptr : &it->second;
}

std::vector<std::string> op_names() {
  std::vector<std::string> v;
  for (const auto& [k, _] : registry()) v.push_back(k);
  return v;
}

const std::vector<int>& shape_inputs(const std::string& name) {
  static const std::vector<int> none;
  const OpSpec* op = find_op(name);
  return op == nullptr ? none : op->shape_only;
}

void Program::mark_fixed(Step& st) const {
  const std::vector<int>& shape_only = shape_inputs(st.name);
  st.fixed = true;
  for (std::size_t i = 0; i < st.in.size() && st.fixed; ++i) {
    const int s = st.in[i];
    if (std::find(shape_only.begin(), shape_only.end(), static_cast<int>(i)) != shape_only.end()) continue;
    if (static_cast<std::size_t>(s) < const_slots_.size() && const_slots_[s].defined()) continue;
    bool fixed_step = false;
    for (const Step& p : steps_) fixed_step = fixed_step || (p.out == s && p.fixed);
    st.fixed = fixed_step;
  }
}

std::vector<std::string> Program::fixed_steps() const {
  std::vector<std::string> v;
  for (const Step& st : steps_)
    if (skips(st)) v.push_back(st.name);
  return v;
}

bool Program::skips(const Step& st) const {
  return st.fixed && std::find(outputs_.begin(), outputs_.end(), st.out) == outputs_.end();
}

// Note [Changing a program] (program.h).
std::unique_lock<std::shared_mutex> Program::change(const char* what) {
  std::unique_lock<std::shared_mutex> lock(change_mu_, std::try_to_lock);
  UMA_CHECK(lock.owns_lock(), Runtime, "Program.", what, ": the program is running in another thread; change it "
            "before or after its runs");
  UMA_CHECK(!sealed(), Value, "Program.", what, ": the program is sealed (a Function runs it); build a new Program");
  return lock;
}

std::shared_lock<std::shared_mutex> Program::reading() const {
  return sealed() ? std::shared_lock<std::shared_mutex>() : std::shared_lock<std::shared_mutex>(change_mu_);
}

void Program::seal() const {
  std::unique_lock<std::shared_mutex> lock(change_mu_, std::try_to_lock);
  UMA_CHECK(lock.owns_lock() || sealed(), Runtime,
            "Program: cannot seal a program while it is running in another thread");
  sealed_.store(true, std::memory_order_release);
}

int Program::add_input() {
  auto lock = change("add_input");
  inputs_.push_back(nslots_);
  return nslots_++;
}

int Program::add_constant(Array value) {
  auto lock = change("add_constant");
  // The program keeps the value as it is now: a writable source is copied, and the constant
  // is read-only, so neither the source's owner nor a caller given it as an output changes it.
  if (value.writable()) value = ops::copy(value).as_readonly();
  const_slots_.resize(nslots_ + 1);
  const_slots_[nslots_] = value;
  constants_.emplace_back(nslots_, std::move(value));
  return nslots_++;
}

int Program::add_op(const std::string& name, const std::vector<int>& inputs, OpAttrs attrs) {
  auto lock = change("add_op");
  const OpSpec* op = find_op(name);
  UMA_CHECK(op != nullptr, Value, "Program: unknown op '", name, "'");
  const int n = static_cast<int>(inputs.size());
  UMA_CHECK(op->arity == kOneOrMore ? n >= 1 : n == op->arity, Value, "Program: op '", name, "' takes ",
            op->arity == kOneOrMore ? std::string("one or more inputs") : std::to_string(op->arity) + " input" + (op->arity == 1 ? "" : "s"),
            ", got ", n);
  for (int s : inputs) UMA_CHECK(s >= 0 && s < nslots_, Value, "Program: op '", name, "' reads undefined slot ", s);
  steps_.push_back(Step{op->fn, name, inputs, nslots_, std::move(attrs), {}});
  if (inputs.size() == 2)  // the registry's bin<OP> ops: run_into calls ops::binary itself
    for (int i = 0; i < kNumBinaryOps; ++i)
      if (name == ops::op_name(static_cast<BinaryOp>(i))) steps_.back().binary = i;
  steps_.back().scalar = steps_.back().binary >= 0;
  mark_fixed(steps_.back());
  plan_releases();
  return nslots_++;
}

int Program::add_fused(const std::vector<int>& inputs, std::vector<FusedInstr> code, DType dtype,
                       const std::string& head, OpAttrs head_attrs) {
  auto lock = change("add_fused");
  const bool matmul = head == "matmul", sum = head == "sum", mean = head == "mean";
  UMA_CHECK(head.empty() || matmul || sum || mean, Value, "Program: a fused chain's head is 'matmul', 'sum' or 'mean', got '",
            head, "'");
  UMA_CHECK(!code.empty(), Value, "Program: empty fused chain");
  UMA_CHECK(!matmul || inputs.size() >= 2, Value, "Program: a matmul epilogue needs the product's two operands");
  UMA_CHECK(!(sum || mean) || !inputs.empty(), Value, "Program: a ", head, " epilogue needs the reduced operand");
  for (int s : inputs) UMA_CHECK(s >= 0 && s < nslots_, Value, "Program: fused chain reads undefined slot ", s);
  ops::check_fused_code(static_cast<int>(inputs.size()) - (matmul ? 1 : 0), code, dtype);
  OpAttrs a = head.empty() || matmul ? OpAttrs{} : std::move(head_attrs);
  a.dtype = dtype;
  a.fused = std::move(code);
  OpFn fn = matmul ? OpFn([](const In& x, const OpAttrs& at) {
    return ops::matmul_fused(x[0], x[1], x.refs(2), at.fused, *at.dtype);
  })
            : sum ? OpFn([](const In& x, const OpAttrs& at) {
    return ops::reduce_fused(ReduceOp::Sum, x[0], at.axes, at.keepdims, x.refs(1), at.fused, *at.dtype);
  })
            : mean ? OpFn([](const In& x, const OpAttrs& at) {
    return ops::reduce_fused(ReduceOp::Mean, x[0], at.axes, at.keepdims, x.refs(1), at.fused, *at.dtype);
  })
                   : OpFn([](const In& x, const OpAttrs& at) { return ops::fused_elementwise(x.refs(), at.fused, *at.dtype); });
  steps_.push_back(Step{fn, head.empty() ? "fused_elementwise" : head + "_fused", inputs, nslots_, std::move(a), {}});
  steps_.back().scalar =
      head.empty() && inputs.size() <= kScalarMaxInputs &&
      ops::fused_code_ok(static_cast<int>(inputs.size()), steps_.back().attrs.fused, dtype);
  mark_fixed(steps_.back());
  plan_releases();
  return nslots_++;
}

void Program::set_outputs(std::vector<int> outputs) {
  auto lock = change("set_outputs");
  for (int s : outputs) UMA_CHECK(s >= 0 && s < nslots_, Value, "Program: output slot ", s, " is undefined");
  outputs_ = std::move(outputs);
  plan_releases();
}

void Program::add_label_check(int labels, int logits, std::string op) {
  auto lock = change("add_label_check");
  for (int s : {labels, logits})
    UMA_CHECK(s >= 0 && s < nslots_, Value, "Program: label check of '", op, "' reads undefined slot ", s);
  label_checks_.push_back(LabelCheck{labels, logits, std::move(op)});
  plan_releases();
}

namespace {
// The classes a label check allows: the logits' second dimension. Logits or labels of the
// wrong shape get the op's own ValueError (its shape rule), not a check against no classes.
int64_t label_classes(const std::string& op, const Array& labels, const Array& logits) {
  if (logits.ndim() != 2 || labels.ndim() != 1 || labels.shape()[0] != logits.shape()[0])
    ops::softmax_cross_entropy_shape(logits.shape(), labels.shape(), op.c_str());  // raises
  return logits.shape()[1];
}
}  // namespace

// Note [Deferred label checks] (program.h).
template <class Value>
void Program::check_labels(const Value& value) const {
  for (const LabelCheck& c : label_checks_) {
    const Array& y = value(c.labels);
    ops::check_labels(c.op.c_str(), y, label_classes(c.op, y, value(c.logits)));
  }
}

void Program::plan_releases() {
  if (graphs()) reset_graphs(true);  // the steps changed: drop the recordings
  types_state_.store(0, std::memory_order_relaxed);  // the steps changed: forget the cached dtypes
  scalar_plan_ = nslots_ <= kElementSlots && !steps_.empty() && label_checks_.empty();
  for (const Step& st : steps_) scalar_plan_ = scalar_plan_ && st.scalar;
  for (const auto& [s, v] : constants_)
    scalar_plan_ = scalar_plan_ && v.defined() && v.ndim() == 0 && v.device().is_cpu();
  std::vector<int> last(nslots_, -1);
  for (std::size_t i = 0; i < steps_.size(); ++i)
    for (int s : steps_[i].in) last[s] = static_cast<int>(i);
  for (int s : outputs_) last[s] = INT32_MAX;
  for (const LabelCheck& c : label_checks_) last[c.labels] = last[c.logits] = INT32_MAX;  // read after the steps
  for (const auto& [s, _] : constants_) last[s] = INT32_MAX;  // constants persist
  for (auto& st : steps_) st.release.clear();
  for (int s = 0; s < nslots_; ++s)
    if (last[s] >= 0 && last[s] != INT32_MAX) steps_[last[s]].release.push_back(s);
  take_output_.assign(outputs_.size(), 0);
  for (std::size_t k = 0; k < outputs_.size(); ++k) {
    bool later = false;
    for (std::size_t j = k + 1; j < outputs_.size(); ++j) later = later || outputs_[j] == outputs_[k];
    take_output_[k] = later ? 0 : 1;
  }
  output_sources_.clear();
  for (std::size_t k = 0; k < outputs_.size(); ++k) {
    const int s = outputs_[k];
    OutputSource src{Source::Step, s, -1};
    std::size_t j = 0;
    while (j < k && outputs_[j] != s) ++j;
    if (static_cast<std::size_t>(s) < const_slots_.size() && const_slots_[s].defined()) {
      src.kind = Source::Constant;
    } else if (j < k) {
      src = {Source::Repeat, s, static_cast<int>(j)};
    } else {
      for (std::size_t i = 0; i < inputs_.size(); ++i)
        if (inputs_[i] == s) src = {Source::Input, s, static_cast<int>(i)};
    }
    output_sources_.push_back(src);
  }
}

std::vector<std::pair<std::string, double>> Program::profile(const std::vector<Array>& inputs, int repeat) const {
  const auto lock = reading();  // Note [Changing a program]
  UMA_CHECK(inputs.size() == inputs_.size(), Type, "Program expects ", inputs_.size(), " inputs, got ", inputs.size());
  UMA_CHECK(repeat > 0, Value, "Program.profile: repeat must be positive, got ", repeat);
  std::vector<double> ns(steps_.size(), 0.0);
  std::vector<const Array*> args;
  for (int r = 0; r < repeat; ++r) {
    std::vector<Array> slots(nslots_);
    for (std::size_t i = 0; i < inputs.size(); ++i) slots[inputs_[i]] = inputs[i];
    for (const auto& [s, v] : constants_) slots[s] = v;
    for (std::size_t k = 0; k < steps_.size(); ++k) {
      const Step& st = steps_[k];
      auto t0 = std::chrono::steady_clock::now();
      args.clear();
      for (int s : st.in) args.push_back(&slots[s]);
      slots[st.out] = st.fn(OpArgs(args.data(), args.size()), st.attrs);
      for (int s : st.release) slots[s] = Array();
      ns[k] += std::chrono::duration<double, std::nano>(std::chrono::steady_clock::now() - t0).count();
    }
    check_labels([&](int s) -> const Array& { return slots[s]; });
  }
  std::vector<std::pair<std::string, double>> out;
  for (std::size_t k = 0; k < steps_.size(); ++k) out.emplace_back(steps_[k].name, ns[k] / repeat);
  return out;
}

std::vector<Array> Program::run(const std::vector<Array>& inputs) const {
  const auto lock = reading();  // Note [Changing a program]
  UMA_CHECK(inputs.size() == inputs_.size(), Type, "Program expects ", inputs_.size(), " inputs, got ", inputs.size());
  std::vector<Array> slots(nslots_);
  for (std::size_t i = 0; i < inputs.size(); ++i) slots[inputs_[i]] = inputs[i];
  for (const auto& [s, v] : constants_) slots[s] = v;
  std::vector<const Array*> args;
  for (const Step& st : steps_) {
    args.clear();
    for (int s : st.in) args.push_back(&slots[s]);
    slots[st.out] = st.fn(OpArgs(args.data(), args.size()), st.attrs);
    for (int s : st.release) slots[s] = Array();
  }
  check_labels([&](int s) -> const Array& { return slots[s]; });
  std::vector<Array> out;
  out.reserve(outputs_.size());
  for (int s : outputs_) out.push_back(slots[s]);
  return out;
}

namespace {
// Per-thread scratch of run_into; every element is reset before run_into returns or throws,
// so the scratch never keeps an array alive between calls.
struct Scratch {
  std::vector<Array> slots;
  std::vector<const Array*> args;
  std::size_t n = 0;
};
// The calling thread's scratch, found once per run (a thread_local in a shared library costs
// a __tls_get_addr call per access otherwise).
[[gnu::noinline]] Scratch& thread_scratch() {
  thread_local Scratch scratch;
  return scratch;
}
struct ScratchGuard {
  Scratch& s;
  ~ScratchGuard() {
    for (std::size_t i = 0; i < s.n; ++i)
      if (s.slots[i].defined()) s.slots[i] = Array();  // most were released or moved out already
    s.args.clear();
  }
};
}  // namespace

// Note [Scalar programs] (program.h): the dtype of every slot when the whole program can run
// on elements of the dtypes `input_types` (add_input order), else false.
bool Program::element_types(const DType* input_types, DType* type) const {
  if (!scalar_plan_) return false;
  for (std::size_t i = 0; i < inputs_.size(); ++i) type[inputs_[i]] = input_types[i];
  for (const auto& [s, v] : constants_) type[s] = v.dtype();
  for (const Step& st : steps_) {
    if (st.binary >= 0) {
      const DType t = type[st.in[0]];
      if (type[st.in[1]] != t) return false;
      const std::optional<DType> rt = ops::binary_one_dtype(static_cast<BinaryOp>(st.binary), t);
      if (!rt) return false;
      type[st.out] = *rt;
    } else {
      for (int s : st.in)
        if (type[s] != *st.attrs.dtype) return false;
      type[st.out] = *st.attrs.dtype;
    }
  }
  return true;
}

namespace {
// The element pointers and dtypes of `inputs` when every one is a defined 0-d host array.
bool element_inputs(const std::vector<Array>& inputs, const void** ptr, DType* type) {
  if (inputs.size() > static_cast<std::size_t>(Program::kElementSlots)) return false;
  for (std::size_t i = 0; i < inputs.size(); ++i) {
    const Array& a = inputs[i];
    if (!a.defined() || a.ndim() != 0 || !a.device().is_cpu()) return false;
    ptr[i] = a.data();
    type[i] = a.dtype();
  }
  return true;
}
}  // namespace

bool Program::runs_on_elements(const std::vector<Array>& inputs) const {
  const auto lock = reading();  // Note [Changing a program]
  const void* ptr[kElementSlots];
  DType in_type[kElementSlots], type[kElementSlots];
  return scalar_plan_ && inputs.size() == inputs_.size() && element_inputs(inputs, ptr, in_type) &&
         element_types(in_type, type);
}

bool Program::run_elements(const void* const* ptr, const DType* type, Elements& e) const {
  const auto lock = reading();  // Note [Changing a program]
  return compute_elements(ptr, type, e);
}

bool Program::compute_elements(const void* const* ptr, const DType* type, Elements& e) const {
  const std::size_t n_in = inputs_.size();
  bool cached = types_state_.load(std::memory_order_acquire) == 2;  // the dtypes of an earlier run
  for (std::size_t i = 0; i < n_in && cached; ++i) cached = type[i] == types_in_[i];
  if (cached) {
    std::memcpy(e.type, types_, sizeof types_);
  } else {
    if (!element_types(type, e.type)) return false;
    int empty = 0;
    if (types_state_.compare_exchange_strong(empty, 1, std::memory_order_acquire)) {
      std::memcpy(types_in_, type, n_in * sizeof(DType));
      std::memcpy(types_, e.type, sizeof types_);
      types_state_.store(2, std::memory_order_release);
    }
  }
  for (std::size_t i = 0; i < n_in; ++i) e.ptr[inputs_[i]] = ptr[i];
  for (const auto& [s, v] : constants_) e.ptr[s] = v.data();
  for (const Step& st : steps_) {
    if (st.binary >= 0) {
      ops::binary_one(static_cast<BinaryOp>(st.binary), e.type[st.in[0]], e.ptr[st.in[0]], e.ptr[st.in[1]],
                      e.value[st.out].bytes);
    } else {
      const void* args[kScalarMaxInputs];
      for (std::size_t j = 0; j < st.in.size(); ++j) args[j] = e.ptr[st.in[j]];
      ops::fused_one(args, static_cast<int>(st.in.size()), st.attrs.fused, *st.attrs.dtype, e.value[st.out].bytes);
    }
    e.ptr[st.out] = e.value[st.out].bytes;
  }
  return true;
}

Array Program::Elements::array(int s) const {
  static const Shape kScalar;
  Array a = Array::empty(kScalar, type[s]);
  std::memcpy(a.data(), ptr[s], itemsize(type[s]));
  return a;
}

bool Program::run_scalar(std::vector<Array>& inputs, std::vector<Array>& out) const {
  const void* ptr[kElementSlots];
  DType type[kElementSlots];
  Elements e;
  if (!element_inputs(inputs, ptr, type) || !compute_elements(ptr, type, e)) return false;
  // Every value is computed: now the outputs (nothing above changed the caller's state).
  out.clear();
  out.reserve(outputs_.size());
  for (std::size_t k = 0; k < outputs_.size(); ++k) {
    const OutputSource& src = output_sources_[k];
    switch (src.kind) {
      case Source::Constant: out.push_back(const_slots_[src.slot]); break;
      case Source::Input: out.push_back(take_output_[k] ? std::move(inputs[src.index]) : inputs[src.index]); break;
      case Source::Repeat: out.push_back(out[src.index]); break;
      case Source::Step: out.push_back(e.array(src.slot)); break;
    }
  }
  inputs.clear();
  return true;
}

void Program::run_steps(std::vector<Array>& slots, std::vector<const Array*>& args, const Capture* capture) const {
  // Constants are read in place from const_slots_ (never copied into the slots).
  const std::size_t nconst = const_slots_.size();
  auto value = [&](int s) -> const Array& {
    return static_cast<std::size_t>(s) < nconst && const_slots_[s].defined() ? const_slots_[s] : slots[s];
  };
  // The capture's work (Note [Fixed steps], Note [Carried values]) is compiled out of the
  // loop that every run takes.
  auto loop = [&](auto capturing) {
    constexpr bool kCapture = decltype(capturing)::value;
    const std::vector<Array>* fixed = kCapture ? capture->fixed : nullptr;
    if (kCapture && fixed)  // the values computed before the capture
      for (const Step& st : steps_)
        if (skips(st)) slots[st.out] = (*fixed)[st.out];
    for (const Step& st : steps_) {
      std::optional<PlacedResult> placed;
      if constexpr (kCapture) {
        if (fixed && skips(st)) continue;
        if (capture->shapes && st.fixed)
          for (int s : st.in) {
            const Array& v = value(s);
            (*capture->shapes)[s] = SlotMeta{v.shape(), v.dtype(), v.device(), true};
          }
        if (capture->place)
          for (const Placement& p : *capture->place)
            if (p.slot == st.out) placed.emplace(p.storage, p.storage->data.device(), p.nbytes);
      }
      if (st.binary >= 0) {
        slots[st.out] = ops::binary(static_cast<BinaryOp>(st.binary), value(st.in[0]), value(st.in[1]));
      } else {
        args.clear();
        for (int s : st.in) args.push_back(&value(s));  // read in place; released below
        slots[st.out] = st.fn(OpArgs(args.data(), args.size()), st.attrs);
        args.clear();
      }
      for (int s : st.release) slots[s] = Array();
    }
  };
  if (capture)
    loop(std::true_type{});
  else
    loop(std::false_type{});
}

std::vector<Array> Program::fixed_values(const std::vector<SlotMeta>& shapes) const {
  const std::size_t nconst = const_slots_.size();
  std::vector<Array> fixed(nslots_);
  std::vector<Array> dummies;  // the shape reads' stand-ins (their values are never read)
  std::vector<const Array*> args;
  for (const Step& st : steps_) {
    if (!st.fixed) continue;
    const std::vector<int>& shape_only = shape_inputs(st.name);
    dummies.clear();
    dummies.reserve(st.in.size());
    args.clear();
    for (std::size_t i = 0; i < st.in.size(); ++i) {
      const int s = st.in[i];
      if (static_cast<std::size_t>(s) < nconst && const_slots_[s].defined()) {
        args.push_back(&const_slots_[s]);
      } else if (fixed[s].defined()) {
        args.push_back(&fixed[s]);
      } else {  // read for its shape alone (mark_fixed)
        UMA_CHECK(shapes[s].seen && std::find(shape_only.begin(), shape_only.end(), static_cast<int>(i)) != shape_only.end(),
                  Runtime, "Program: fixed step '", st.name, "' reads slot ", s, ", whose shape the capture did not see");
        dummies.push_back(Array::empty(shapes[s].shape, shapes[s].dtype, shapes[s].device));
        args.push_back(&dummies.back());
      }
    }
    fixed[st.out] = st.binary >= 0 ? ops::binary(static_cast<BinaryOp>(st.binary), *args[0], *args[1])
                                   : st.fn(OpArgs(args.data(), args.size()), st.attrs);
  }
  return fixed;
}

// ---- CUDA graphs (Note [Program graphs]) ------------------------------------------------

struct Program::Recording {
  std::shared_ptr<cuda::Graph> graph;
  std::vector<Array> staging;  // per input: the buffer the graph reads it from
  std::vector<Array> results;  // per output: a step's result as recorded (undefined otherwise)
  std::vector<Array> checked;  // per label check: its labels and logits as recorded
  // Per label check, when every check's labels are an input of the recording (read from its
  // staging buffer) and int64: its flag, queued before each launch (Note [Lean replays]).
  std::vector<std::unique_ptr<kernels::cuda::LabelFlag>> early;
  std::vector<Array> fixed;    // per slot: a fixed step's value, which replays skip (Note [Fixed steps])
  int64_t fixed_steps = 0;     // the steps replays skip
  std::vector<std::shared_ptr<Storage>> written;  // the results' distinct storages
  std::vector<long> alone;     // their use counts while no array outside holds them
  // Note [Carried values], Note [Steady arguments]: the staging buffers that are also
  // another's (the other recording's result or buffer, or an argument read in place): input,
  // the buffer's use count while no array outside holds it.
  std::vector<std::pair<int, long>> shared;
  std::vector<int> in_place;  // the arguments it reads in place (Note [Steady arguments])
  bool free() const noexcept {
    for (std::size_t i = 0; i < written.size(); ++i)
      if (written[i].use_count() != alone[i]) return false;
    return true;
  }
  // True when the argument copies of a replay with `inputs` write no buffer held outside.
  bool may_copy(const std::vector<Array>& inputs) const noexcept {
    for (const auto& [i, count] : shared)
      if (inputs[i].data() != staging[i].data() && staging[i].storage().use_count() != count) return false;
    return true;
  }
  long alone_count(const std::shared_ptr<Storage>& st) const noexcept {
    for (std::size_t i = 0; i < written.size(); ++i)
      if (written[i] == st) return alone[i];
    return -1;
  }
};

struct Program::GraphCache {
  struct Signature {
    bool ran = false;     // a first run went op by op
    bool failed = false;  // recording failed: op by op for good
    std::vector<Recording> recordings;
    // Note [Steady arguments]: the last call's argument addresses, and whether recordings
    // may still read arguments in place (false once two were dropped for it).
    std::vector<const void*> last;
    bool in_place = true;
  };
  std::mutex mu;
  std::map<std::vector<int64_t>, Signature> signatures;
  GraphStats stats;
};

void Program::reset_graphs(bool on) {
  std::shared_ptr<GraphCache> fresh = on ? std::make_shared<GraphCache>() : nullptr;
  std::lock_guard<std::mutex> lock(graphs_mu_);
  graphs_.swap(fresh);
  graphs_on_.store(on, std::memory_order_release);
}  // the old recordings go when the last run holding them returns

std::shared_ptr<Program::GraphCache> Program::graph_cache() const {
  std::lock_guard<std::mutex> lock(graphs_mu_);
  return graphs_;
}

void Program::set_graphs(bool on) { reset_graphs(on); }

void Program::set_lean_replay(bool on) {
  lean_replay_.store(on, std::memory_order_relaxed);
  if (graphs()) reset_graphs(true);  // recordings are made with the setting
}

Program::GraphStats Program::graph_stats() const {
  const std::shared_ptr<GraphCache> cache = graph_cache();
  if (!cache) return {};
  std::lock_guard<std::mutex> lock(cache->mu);
  GraphStats s = cache->stats;
  s.kept_bytes = 0;
  std::vector<const Storage*> counted;  // a buffer two recordings share counts once
  auto count = [&](const std::shared_ptr<Storage>& st) {
    if (std::find(counted.begin(), counted.end(), st.get()) != counted.end()) return;
    counted.push_back(st.get());
    s.kept_bytes += st->data.nbytes();
  };
  for (const auto& [key, sig] : cache->signatures)
    for (const Recording& r : sig.recordings) {
      s.fixed_steps += r.fixed_steps;
      s.kept_bytes += r.graph->kept_bytes();
      for (const auto& w : r.written) count(w);
      for (const Array& a : r.staging) count(a.storage());
      for (const Array& a : r.fixed)
        if (a.defined()) count(a.storage());
    }
  return s;
}

bool Program::record(Recording& r, const std::vector<Array>& inputs, std::string& why, Recording* partner,
                     const std::vector<char>& steady) const {
  const int device = inputs[0].device().index;
  // Note [Carried values]: an argument that is one of the partner's results (the whole
  // buffer) is read there, and the same output's result is placed in the partner's buffer
  // for that argument.
  struct Carry {
    int input;
    std::size_t output;
  };
  std::vector<Carry> carries;
  for (std::size_t i = 0; partner && i < inputs.size(); ++i) {
    const Array& a = inputs[i];
    for (std::size_t k = 0; k < outputs_.size(); ++k) {
      const Array& res = partner->results[k];
      if (!res.defined() || res.storage() != a.storage() || res.data() != a.data() || res.nbytes() != a.nbytes() ||
          a.nbytes() == 0 || a.data() != a.storage()->data.get())
        continue;
      bool placed = false;  // an output's slot placed once
      for (const Carry& c : carries) placed = placed || outputs_[c.output] == outputs_[k];
      if (!placed) carries.push_back({static_cast<int>(i), k});
      break;
    }
  }
  // Note [Steady arguments]: an argument at the address of the last call's, in memory uma
  // allocated and may write, neither the partner's result nor its buffer, is read in place.
  std::vector<int> in_place;
  for (std::size_t i = 0; i < inputs.size(); ++i) {
    const Array& a = inputs[i];
    bool ok = steady[i] && a.nbytes() > 0 && a.writable() && !a.is_adopted();
    for (const Carry& c : carries) ok = ok && c.input != static_cast<int>(i);
    for (std::size_t j = 0; ok && j < inputs.size(); ++j)  // one buffer per argument
      ok = j == i || inputs[j].storage() != a.storage();
    for (std::size_t k = 0; ok && partner && k < outputs_.size(); ++k)
      ok = partner->results[k].storage() != a.storage();
    for (std::size_t k = 0; ok && partner && k < partner->staging.size(); ++k)  // unless it reads it in place too
      ok = partner->staging[k].storage() != a.storage() ||
           (k == i && std::find(partner->in_place.begin(), partner->in_place.end(), static_cast<int>(k)) !=
                          partner->in_place.end());
    if (ok) in_place.push_back(static_cast<int>(i));
  }
  std::vector<long> before(carries.size());  // the partner's results' use counts without r
  // Note [Fixed steps]: the values of the steps replays skip, known after a first capture.
  std::vector<Array> fixed;
  std::vector<SlotMeta> shapes;
  bool skipping = false;
  for (const Step& st : steps_) skipping = skipping || skips(st);
  std::vector<long> before_in_place(in_place.size());
  for (;;) {  // each pass records with fewer carries than the last, or with the fixed values
    r = Recording{};
    for (std::size_t c = 0; c < carries.size(); ++c) before[c] = inputs[carries[c].input].storage().use_count();
    for (std::size_t n = 0; n < in_place.size(); ++n) before_in_place[n] = inputs[in_place[n]].storage().use_count();
    Placements place;
    for (const Carry& c : carries)
      place.push_back({outputs_[c.output], partner->staging[c.input].storage(),
                       static_cast<std::size_t>(inputs[c.input].nbytes())});
    for (std::size_t i = 0; i < inputs.size(); ++i) {
      bool borrowed = std::find(in_place.begin(), in_place.end(), static_cast<int>(i)) != in_place.end();
      for (const Carry& c : carries) borrowed = borrowed || c.input == static_cast<int>(i);
      const Array& a = inputs[i];
      r.staging.push_back(borrowed ? a : Array::empty(a.shape(), a.dtype(), a.device()));
    }
    r.results.resize(outputs_.size());
    std::vector<Array> slots(nslots_);
    std::vector<const Array*> args;
    Capture plan;
    if (!place.empty()) plan.place = &place;
    if (!fixed.empty()) plan.fixed = &fixed;
    if (skipping && fixed.empty()) {
      shapes.assign(nslots_, SlotMeta{});
      plan.shapes = &shapes;
    }
    auto work = [&] {
      for (std::size_t i = 0; i < inputs_.size(); ++i) slots[inputs_[i]] = r.staging[i];
      run_steps(slots, args, &plan);
      for (std::size_t k = 0; k < outputs_.size(); ++k)
        if (output_sources_[k].kind == Source::Step) r.results[k] = slots[outputs_[k]];
      for (const LabelCheck& c : label_checks_) {
        r.checked.push_back(slots[c.labels].defined() ? slots[c.labels] : const_slots_[c.labels]);
        r.checked.push_back(slots[c.logits].defined() ? slots[c.logits] : const_slots_[c.logits]);
      }
      slots.clear();  // what was not kept above is released while recording: the graph keeps it
    };
    r.graph = cuda::capture(device, work, &why);
    place.clear();  // its references to the partner's buffers are not the recordings'
    if (!r.graph) return false;
    // A carry whose placement a step's temporary took (its result is elsewhere) is dropped,
    // and the recording made again (Note [Carried values]).
    std::vector<Carry> kept;
    for (const Carry& c : carries) {
      const Array& res = r.results[c.output];
      const Array& target = partner->staging[c.input];
      if (res.storage() == target.storage() && res.data() == target.data()) kept.push_back(c);
    }
    if (kept.size() != carries.size()) {
      carries = std::move(kept);
      before.resize(carries.size());
      continue;
    }
    bool exposed = false;  // a result that is a view of a fixed value (the caller could write it)
    for (const Array& res : r.results)
      for (const Array& f : fixed) exposed = exposed || (res.defined() && f.defined() && res.storage() == f.storage());
    if (exposed) {
      skipping = false;
      fixed.clear();
      continue;
    }
    if (!skipping || !fixed.empty()) break;
    try {
      fixed = fixed_values(shapes);  // op by op, outside the capture
    } catch (const Error&) {
      break;  // r, which runs every step, is kept
    }
  }
  for (const Step& st : steps_) r.fixed_steps += !fixed.empty() && skips(st);
  r.fixed = std::move(fixed);
  for (const Array& a : r.results) {
    if (!a.defined()) continue;
    bool seen = false;
    for (const auto& w : r.written) seen = seen || w == a.storage();
    if (!seen) r.written.push_back(a.storage());
  }
  for (const auto& w : r.written) r.alone.push_back(w.use_count());
  for (std::size_t n = 0; n < carries.size(); ++n) {
    // r's buffer for the argument is the partner's result (r's references to it are holders
    // inside the program), and the partner's buffer for it is r's result.
    const Carry& c = carries[n];
    const std::shared_ptr<Storage>& theirs = partner->results[c.output].storage();
    const long mine = theirs.use_count() - before[n];
    for (std::size_t j = 0; j < partner->written.size(); ++j)
      if (partner->written[j] == theirs) partner->alone[j] += mine;
    r.shared.emplace_back(c.input, partner->alone_count(theirs));
    partner->shared.emplace_back(c.input, r.alone_count(r.results[c.output].storage()));
  }
  for (std::size_t n = 0; n < in_place.size(); ++n) {
    // Its holders inside the program: this recording's references, and the partner's where
    // it reads the same argument in place.
    const int i = in_place[n];
    const std::shared_ptr<Storage>& st = r.staging[i].storage();
    const long mine = st.use_count() - before_in_place[n];
    long inside = mine;
    if (partner)
      for (auto& [j, count] : partner->shared)
        if (partner->staging[j].storage() == st) inside = count += mine;
    r.shared.emplace_back(i, inside);
    r.in_place.push_back(i);
  }
  if (lean_replay() && !label_checks_.empty()) {  // Note [Lean replays]
    bool all = true;
    for (std::size_t k = 0; k < label_checks_.size() && all; ++k) {
      const Array& y = r.checked[2 * k];
      bool staged = false;
      for (const Array& a : r.staging) staged = staged || a.data() == y.data();
      all = staged && y.dtype() == DType::Int64 && y.ndim() == 1;
    }
    try {
      for (std::size_t k = 0; all && k < label_checks_.size(); ++k)
        r.early.push_back(std::make_unique<kernels::cuda::LabelFlag>(r.checked[2 * k].device()));
    } catch (const Error&) {
      r.early.clear();  // no pinned word or event to be had: the deferred checks, as without
    }
  }
  return true;
}

bool Program::replay(const Recording& r, std::vector<Array>& inputs, std::vector<Array>& out, int64_t* copied) const {
  const int device = r.graph->device();
  thread_local std::vector<kernels::cuda::CopyJob> copies;  // the arguments into the recording's buffers
  copies.clear();
  for (const auto& f : r.early) f->settle();  // a check that a failed replay left, before its labels are written
  for (std::size_t i = 0; i < inputs.size(); ++i)
    if (inputs[i].data() != r.staging[i].data()) {
      copies.push_back({r.staging[i].data(), inputs[i].data(), static_cast<std::size_t>(inputs[i].nbytes())});
      *copied += inputs[i].nbytes();
    }
  if (lean_replay()) {
    kernels::cuda::copy_batch(copies, device);  // Note [Lean replays]
  } else {
    for (const kernels::cuda::CopyJob& c : copies) cuda::copy_on_device(c.dst, c.src, c.bytes, device);
  }
  auto classes = [&](std::size_t k) {
    return label_classes(label_checks_[k].op, r.checked[2 * k], r.checked[2 * k + 1]);
  };
  for (std::size_t k = 0; k < r.early.size(); ++k) r.early[k]->queue(r.checked[2 * k], classes(k));
  r.graph->launch();
  for (std::size_t k = 0; k < label_checks_.size(); ++k) {  // Note [Deferred label checks]
    if (!r.early.empty() && r.early[k]->passed()) continue;  // Note [Lean replays]
    // Waits for the launch; raises the op's ValueError naming the first bad label.
    ops::check_labels(label_checks_[k].op.c_str(), r.checked[2 * k], classes(k));
  }
  out.resize(outputs_.size());
  for (std::size_t k = 0; k < outputs_.size(); ++k) {
    const OutputSource& src = output_sources_[k];
    switch (src.kind) {
      case Source::Constant: out[k] = const_slots_[src.slot]; break;
      case Source::Input: out[k] = take_output_[k] ? std::move(inputs[src.index]) : inputs[src.index]; break;
      case Source::Repeat: out[k] = out[src.index]; break;
      case Source::Step: out[k] = r.results[k]; break;
    }
  }
  inputs.clear();
  return !r.early.empty();
}

bool Program::run_graph(GraphCache& g, std::vector<Array>& inputs, std::vector<Array>& out) const {
  if (inputs.empty() || steps_.empty()) return false;
  const Device dev = inputs[0].device();
  if (dev.type != DeviceType::CUDA) return false;
  // The inputs' dtypes and shapes, and what the recorded kernels fix (the calling thread's
  // buffer: no allocation per call once it has grown).
  thread_local std::vector<int64_t> key;
  key.clear();
  key.push_back(static_cast<int64_t>(ops::cuda_matmul_precision()));
  for (const Array& a : inputs) {
    if (!a.defined() || a.device() != dev || !a.is_c_contiguous()) return false;
    key.push_back(static_cast<int64_t>(a.dtype()));
    key.push_back(a.ndim());
    key.insert(key.end(), a.shape().begin(), a.shape().end());
  }
  std::lock_guard<std::mutex> lock(g.mu);
  auto it = g.signatures.find(key);
  if (it == g.signatures.end()) {
    if (g.signatures.size() >= static_cast<std::size_t>(kGraphSignatures)) return false;
    it = g.signatures.emplace(key, GraphCache::Signature{}).first;
  }
  GraphCache::Signature& sig = it->second;
  if (sig.failed) return false;
  // Note [Steady arguments]: which arguments are where the last call's were (read before the
  // replay or the recording consumes `inputs`).
  thread_local std::vector<char> steady;
  steady.assign(inputs.size(), 0);
  const bool known = sig.in_place && sig.last.size() == inputs.size();
  sig.last.resize(inputs.size());
  for (std::size_t i = 0; i < inputs.size(); ++i) {
    steady[i] = known && sig.last[i] == inputs[i].data();
    sig.last[i] = inputs[i].data();
  }
  bool stuck = false;  // a recording whose results are free waits only for a buffer it shares
  for (const Recording& r : sig.recordings) {
    if (!r.free()) continue;
    if (r.may_copy(inputs)) {
      ++g.stats.replayed;  // counted before the label checks, which may throw after the launch
      if (replay(r, inputs, out, &g.stats.copied_bytes)) ++g.stats.early_checked;
      return true;
    }
    stuck = stuck || !r.in_place.empty();
  }
  if (!sig.ran) {  // the first run of a signature goes op by op
    sig.ran = true;
    return false;
  }
  if (stuck && sig.recordings.size() >= static_cast<std::size_t>(kGraphsPerSignature)) {
    // An argument read in place that the caller still holds, while another comes: the
    // recordings go, and the next ones copy every argument (Note [Steady arguments]).
    g.stats.dropped += static_cast<int64_t>(sig.recordings.size());
    sig.recordings.clear();
    sig.in_place = false;
    std::fill(steady.begin(), steady.end(), 0);
  }
  if (sig.recordings.size() >= static_cast<std::size_t>(kGraphsPerSignature)) return false;
  Recording r;
  std::string why;
  if (!record(r, inputs, why, sig.recordings.size() == 1 ? &sig.recordings[0] : nullptr, steady)) {
    sig.failed = true;
    ++g.stats.failed;
    g.stats.last_failure = std::move(why);
    return false;
  }
  ++g.stats.recorded;
  sig.recordings.push_back(std::move(r));
  ++g.stats.replayed;
  if (replay(sig.recordings.back(), inputs, out, &g.stats.copied_bytes)) ++g.stats.early_checked;
  return true;
}

void Program::run_into(std::vector<Array>& inputs, std::vector<Array>& out) const {
  const auto lock = reading();  // Note [Changing a program]
  UMA_CHECK(inputs.size() == inputs_.size(), Type, "Program expects ", inputs_.size(), " inputs, got ", inputs.size());
  if (scalar_plan_ && run_scalar(inputs, out)) return;  // Note [Scalar programs]
  if (graphs()) {  // Note [Program graphs]
    const std::shared_ptr<GraphCache> cache = graph_cache();
    if (cache && run_graph(*cache, inputs, out)) return;
  }
  Scratch& scratch = thread_scratch();
  if (scratch.slots.size() < static_cast<std::size_t>(nslots_)) scratch.slots.resize(nslots_);
  scratch.n = static_cast<std::size_t>(nslots_);
  ScratchGuard guard{scratch};
  std::vector<Array>& slots = scratch.slots;
  std::vector<const Array*>& args = scratch.args;
  for (std::size_t i = 0; i < inputs.size(); ++i) slots[inputs_[i]] = std::move(inputs[i]);
  inputs.clear();
  run_steps(slots, args);
  const std::size_t nconst = const_slots_.size();
  auto value = [&](int s) -> const Array& {
    return static_cast<std::size_t>(s) < nconst && const_slots_[s].defined() ? const_slots_[s] : slots[s];
  };
  if (!label_checks_.empty()) check_labels(value);
  out.resize(outputs_.size());
  for (std::size_t k = 0; k < outputs_.size(); ++k) {
    const int s = outputs_[k];
    if (static_cast<std::size_t>(s) < nconst && const_slots_[s].defined())
      out[k] = const_slots_[s];
    else if (take_output_[k])
      out[k] = std::move(slots[s]);
    else
      out[k] = slots[s];
  }
}

}  // namespace uma::runtime
