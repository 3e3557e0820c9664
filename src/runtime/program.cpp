#include "uma/runtime/program.h"

#include <chrono>
#include <map>

#include "uma/error.h"
#include "uma/ops.h"

namespace uma::runtime {

namespace {
using In = std::vector<Array>;

template <BinaryOp OP>
Array bin(const In& x, const OpAttrs&) { return ops::binary(OP, x[0], x[1]); }
template <UnaryOp OP>
Array un(const In& x, const OpAttrs&) { return ops::unary(OP, x[0]); }
template <ReduceOp OP>
Array red(const In& x, const OpAttrs& a) { return ops::reduce(OP, x[0], a.axes, a.keepdims); }

const std::map<std::string, OpFn>& registry() {
  static const std::map<std::string, OpFn> r = {
      {"add", &bin<BinaryOp::Add>}, {"subtract", &bin<BinaryOp::Subtract>}, {"multiply", &bin<BinaryOp::Multiply>},
      {"divide", &bin<BinaryOp::Divide>}, {"power", &bin<BinaryOp::Power>}, {"maximum", &bin<BinaryOp::Maximum>},
      {"minimum", &bin<BinaryOp::Minimum>}, {"floor_divide", &bin<BinaryOp::FloorDivide>},
      {"remainder", &bin<BinaryOp::Remainder>}, {"equal", &bin<BinaryOp::Equal>},
      {"not_equal", &bin<BinaryOp::NotEqual>}, {"less", &bin<BinaryOp::Less>},
      {"less_equal", &bin<BinaryOp::LessEqual>}, {"greater", &bin<BinaryOp::Greater>},
      {"greater_equal", &bin<BinaryOp::GreaterEqual>}, {"logical_and", &bin<BinaryOp::LogicalAnd>},
      {"logical_or", &bin<BinaryOp::LogicalOr>},
      {"negative", &un<UnaryOp::Negative>}, {"abs", &un<UnaryOp::Abs>}, {"exp", &un<UnaryOp::Exp>},
      {"log", &un<UnaryOp::Log>}, {"log1p", &un<UnaryOp::Log1p>}, {"expm1", &un<UnaryOp::Expm1>},
      {"sqrt", &un<UnaryOp::Sqrt>}, {"tanh", &un<UnaryOp::Tanh>}, {"sigmoid", &un<UnaryOp::Sigmoid>},
      {"sign", &un<UnaryOp::Sign>}, {"logical_not", &un<UnaryOp::LogicalNot>}, {"square", &un<UnaryOp::Square>},
      {"sin", &un<UnaryOp::Sin>}, {"cos", &un<UnaryOp::Cos>}, {"floor", &un<UnaryOp::Floor>},
      {"ceil", &un<UnaryOp::Ceil>},
      // ---- issue 4 elementwise set ----
      {"arctan2", &bin<BinaryOp::Arctan2>}, {"logical_xor", &bin<BinaryOp::LogicalXor>},
      {"exp2", &un<UnaryOp::Exp2>}, {"log2", &un<UnaryOp::Log2>}, {"log10", &un<UnaryOp::Log10>},
      {"reciprocal", &un<UnaryOp::Reciprocal>}, {"tan", &un<UnaryOp::Tan>}, {"arcsin", &un<UnaryOp::Arcsin>},
      {"arccos", &un<UnaryOp::Arccos>}, {"arctan", &un<UnaryOp::Arctan>}, {"sinh", &un<UnaryOp::Sinh>},
      {"cosh", &un<UnaryOp::Cosh>}, {"softplus", &un<UnaryOp::Softplus>}, {"erf", &un<UnaryOp::Erf>},
      {"erfc", &un<UnaryOp::Erfc>}, {"gammaln", &un<UnaryOp::Gammaln>}, {"digamma", &un<UnaryOp::Digamma>},
      {"rint", &un<UnaryOp::Rint>},
      {"round", [](const In& x, const OpAttrs& a) { return ops::round(x[0], a.decimals); }},
      {"clip", [](const In& x, const OpAttrs&) { return ops::clip(x[0], x[1], x[2]); }},
      // ---- end issue 4 elementwise set ----
      {"sum", &red<ReduceOp::Sum>}, {"mean", &red<ReduceOp::Mean>}, {"max", &red<ReduceOp::Max>},
      {"min", &red<ReduceOp::Min>}, {"prod", &red<ReduceOp::Prod>}, {"argmax", &red<ReduceOp::ArgMax>},
      {"argmin", &red<ReduceOp::ArgMin>}, {"all", &red<ReduceOp::All>}, {"any", &red<ReduceOp::Any>},
      {"where", [](const In& x, const OpAttrs&) { return ops::where(x[0], x[1], x[2]); }},
      {"matmul", [](const In& x, const OpAttrs&) { return ops::matmul(x[0], x[1]); }},
      {"dot", [](const In& x, const OpAttrs&) { return ops::matmul(x[0], x[1]); }},
      {"reshape", [](const In& x, const OpAttrs& a) { return ops::reshape(x[0], a.shape); }},
      {"transpose", [](const In& x, const OpAttrs& a) { return ops::transpose(x[0], a.perm); }},
      {"broadcast_to", [](const In& x, const OpAttrs& a) { return ops::broadcast_to(x[0], a.shape); }},
      {"concatenate", [](const In& x, const OpAttrs& a) { return ops::concatenate(x, a.axis); }},
      {"stack", [](const In& x, const OpAttrs& a) { return ops::stack(x, a.axis); }},
      {"expand_dims", [](const In& x, const OpAttrs& a) { return ops::expand_dims(x[0], a.axis); }},
      {"squeeze", [](const In& x, const OpAttrs& a) { return ops::squeeze(x[0], a.axes.value_or(std::vector<int64_t>{})); }},
      {"one_hot", [](const In& x, const OpAttrs& a) { return ops::one_hot(x[0], a.depth, a.dtype.value_or(DType::Float64)); }},
      {"astype", [](const In& x, const OpAttrs& a) { return ops::astype(x[0], a.dtype.value_or(x[0].dtype())); }},
      {"copy", [](const In& x, const OpAttrs&) { return ops::copy(x[0]); }},
      {"softmax_cross_entropy", [](const In& x, const OpAttrs&) { return ops::softmax_cross_entropy(x[0], x[1]); }},
      {"softmax_cross_entropy_grad",
       [](const In& x, const OpAttrs&) { return ops::softmax_cross_entropy_grad(x[0], x[1], x[2]); }},
      // Ops whose result takes the run-time shape of another input (gradient helpers).
      {"broadcast_like", [](const In& x, const OpAttrs&) { return ops::broadcast_to(x[0], x[1].shape()); }},
      {"reshape_like", [](const In& x, const OpAttrs&) { return ops::reshape(x[0], x[1].shape()); }},
      {"zeros_like", [](const In& x, const OpAttrs& a) { return ops::zeros(x[0].shape(), a.dtype.value_or(x[0].dtype())); }},
      {"ones_like", [](const In& x, const OpAttrs& a) { return ops::ones(x[0].shape(), a.dtype.value_or(x[0].dtype())); }},
      {"empty_like", [](const In& x, const OpAttrs& a) { return Array::empty(x[0].shape(), a.dtype.value_or(x[0].dtype())); }},
      {"full_like", [](const In& x, const OpAttrs& a) {
         UMA_CHECK(a.fill_value.has_value(), Value, "full_like: missing fill_value");
         return ops::full(x[0].shape(), *a.fill_value, a.dtype.value_or(x[0].dtype()));
       }},
      {"getitem", [](const In& x, const OpAttrs& a) { return ops::getitem(x[0], a.index); }},
      // Gradient of getitem: zeros shaped like input 1 with input 0 written at the index.
      {"getitem_grad", [](const In& x, const OpAttrs& a) {
         Array z = ops::zeros(x[1].shape(), a.dtype.value_or(x[1].dtype()));
         ops::assign(ops::getitem(z, a.index), x[0]);
         return z;
       }},
  };
  return r;
}
}  // namespace

OpFn find_op(const std::string& name) {
  auto it = registry().find(name);
  return it == registry().end() ? nullptr : it->second;
}

std::vector<std::string> op_names() {
  std::vector<std::string> v;
  for (const auto& [k, _] : registry()) v.push_back(k);
  return v;
}

int Program::add_input() {
  inputs_.push_back(nslots_);
  return nslots_++;
}

int Program::add_constant(Array value) {
  constants_.emplace_back(nslots_, std::move(value));
  return nslots_++;
}

int Program::add_op(const std::string& name, const std::vector<int>& inputs, OpAttrs attrs) {
  OpFn fn = find_op(name);
  UMA_CHECK(fn != nullptr, Value, "Program: unknown op '", name, "'");
  for (int s : inputs) UMA_CHECK(s >= 0 && s < nslots_, Value, "Program: op '", name, "' reads undefined slot ", s);
  steps_.push_back(Step{fn, name, inputs, nslots_, std::move(attrs), {}});
  plan_releases();
  return nslots_++;
}

int Program::add_fused(const std::vector<int>& inputs, std::vector<FusedInstr> code, DType dtype) {
  UMA_CHECK(!code.empty(), Value, "Program: empty fused chain");
  for (int s : inputs) UMA_CHECK(s >= 0 && s < nslots_, Value, "Program: fused chain reads undefined slot ", s);
  OpAttrs a;
  a.dtype = dtype;
  a.fused = std::move(code);
  OpFn fn = [](const In& x, const OpAttrs& at) { return ops::fused_elementwise(x, at.fused, *at.dtype); };
  steps_.push_back(Step{fn, "fused_elementwise", inputs, nslots_, std::move(a), {}});
  plan_releases();
  return nslots_++;
}

void Program::set_outputs(std::vector<int> outputs) {
  for (int s : outputs) UMA_CHECK(s >= 0 && s < nslots_, Value, "Program: output slot ", s, " is undefined");
  outputs_ = std::move(outputs);
  plan_releases();
}

void Program::plan_releases() {
  std::vector<int> last(nslots_, -1);
  for (std::size_t i = 0; i < steps_.size(); ++i)
    for (int s : steps_[i].in) last[s] = static_cast<int>(i);
  for (int s : outputs_) last[s] = INT32_MAX;
  for (const auto& [s, _] : constants_) last[s] = INT32_MAX;  // constants persist
  for (auto& st : steps_) st.release.clear();
  for (int s = 0; s < nslots_; ++s)
    if (last[s] >= 0 && last[s] != INT32_MAX) steps_[last[s]].release.push_back(s);
}

std::vector<std::pair<std::string, double>> Program::profile(const std::vector<Array>& inputs, int repeat) const {
  UMA_CHECK(inputs.size() == inputs_.size(), Type, "Program expects ", inputs_.size(), " inputs, got ", inputs.size());
  UMA_CHECK(repeat > 0, Value, "Program.profile: repeat must be positive, got ", repeat);
  std::vector<double> ns(steps_.size(), 0.0);
  std::vector<Array> args;
  for (int r = 0; r < repeat; ++r) {
    std::vector<Array> slots(nslots_);
    for (std::size_t i = 0; i < inputs.size(); ++i) slots[inputs_[i]] = inputs[i];
    for (const auto& [s, v] : constants_) slots[s] = v;
    for (std::size_t k = 0; k < steps_.size(); ++k) {
      const Step& st = steps_[k];
      auto t0 = std::chrono::steady_clock::now();
      args.clear();
      for (int s : st.in) args.push_back(slots[s]);
      slots[st.out] = st.fn(args, st.attrs);
      for (int s : st.release) slots[s] = Array();
      ns[k] += std::chrono::duration<double, std::nano>(std::chrono::steady_clock::now() - t0).count();
    }
  }
  std::vector<std::pair<std::string, double>> out;
  for (std::size_t k = 0; k < steps_.size(); ++k) out.emplace_back(steps_[k].name, ns[k] / repeat);
  return out;
}

std::vector<Array> Program::run(const std::vector<Array>& inputs) const {
  UMA_CHECK(inputs.size() == inputs_.size(), Type, "Program expects ", inputs_.size(), " inputs, got ", inputs.size());
  std::vector<Array> slots(nslots_);
  for (std::size_t i = 0; i < inputs.size(); ++i) slots[inputs_[i]] = inputs[i];
  for (const auto& [s, v] : constants_) slots[s] = v;
  std::vector<Array> args;
  for (const Step& st : steps_) {
    args.clear();
    for (int s : st.in) args.push_back(slots[s]);
    slots[st.out] = st.fn(args, st.attrs);
    for (int s : st.release) slots[s] = Array();
  }
  std::vector<Array> out;
  out.reserve(outputs_.size());
  for (int s : outputs_) out.push_back(slots[s]);
  return out;
}

}  // namespace uma::runtime
