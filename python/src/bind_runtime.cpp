// uma._core.Program: the executor the `cpu` linker compiles function graphs into.
#include <nanobind/stl/pair.h>

#include "common.h"
#include "uma/error.h"
#include "uma/runtime/program.h"

namespace uma::py {

namespace {
std::optional<BinaryOp> binary_op_from_name(const std::string& n) {
  for (int i = 0; i < kNumBinaryOps; ++i)
    if (n == ops::op_name(static_cast<BinaryOp>(i))) return static_cast<BinaryOp>(i);
  return std::nullopt;
}
std::optional<UnaryOp> unary_op_from_name(const std::string& n) {
  for (int i = 0; i < kNumUnaryOps; ++i)
    if (n == ops::op_name(static_cast<UnaryOp>(i))) return static_cast<UnaryOp>(i);
  return std::nullopt;
}

runtime::OpAttrs parse_attrs(const std::string& op, nb::handle attrs) {
  runtime::OpAttrs a;
  if (attrs.is_none()) return a;
  nb::dict d = nb::borrow<nb::dict>(attrs);
  for (auto [k, v] : d) {
    std::string key = nb::cast<std::string>(k);
    if (key == "axis") {
      if (v.is_none()) {
        a.axes = std::nullopt;
      } else if (nb::isinstance<nb::tuple>(v) || nb::isinstance<nb::list>(v)) {
        a.axes = nb::cast<std::vector<int64_t>>(v);
      } else {
        a.axis = nb::cast<int64_t>(v);
        a.axes = std::vector<int64_t>{a.axis};
      }
    } else if (key == "keepdims") {
      a.keepdims = nb::cast<bool>(v);
    } else if (key == "shape") {
      a.shape = nb::isinstance<nb::int_>(v) ? Shape{nb::cast<int64_t>(v)} : nb::cast<Shape>(v);
    } else if (key == "axes") {
      if (!v.is_none()) a.perm = nb::cast<std::vector<int64_t>>(v);
    } else if (key == "dtype") {
      a.dtype = to_dtype(v);
    } else if (key == "index") {
      a.index = parse_index(v);
    } else if (key == "fill_value") {
      nb::object pv = is_python_scalar(v) ? nb::borrow(v) : nb::object(v.attr("item")());  // NumPy scalars
      UMA_CHECK(is_python_scalar(pv), Type, "Program: op '", op, "' needs a scalar fill_value");
      a.fill_value = to_scalar(pv);
    } else if (key == "depth") {
      a.depth = nb::cast<int64_t>(v);
    } else if (key == "decimals") {  // round (issue 4 elementwise set)
      a.decimals = nb::cast<int64_t>(v);
    } else {
      UMA_FAIL(Value, "Program: op '", op, "' got an unknown attribute '", key, "'");
    }
  }
  return a;
}
}  // namespace

void bind_runtime(nb::module_& m) {
  nb::class_<runtime::Program>(m, "Program",
                               "A straight-line program of uma ops executed in C++ (what the cpu linker compiles to).")
      .def(nb::init<>())
      .def("add_input", &runtime::Program::add_input, "Adds an input slot (run() arguments in this order).")
      .def("add_constant", [](runtime::Program& p, nb::handle v) {
        return p.add_constant(asarray(v, std::nullopt, std::nullopt, interop::CopyMode::IfNeeded, "Program.add_constant"));
      })
      .def("add_op", [](runtime::Program& p, const std::string& name, const std::vector<int>& inputs, nb::handle attrs) {
        return p.add_op(name, inputs, parse_attrs(name, attrs));
      }, nb::arg("name"), nb::arg("inputs"), nb::arg("attrs").none() = nb::none())
      .def("add_fused", [](runtime::Program& p, const std::vector<int>& inputs, nb::list code, nb::handle dtype) {
        std::vector<FusedInstr> instrs;
        for (nb::handle item : code) {
          nb::tuple t = nb::borrow<nb::tuple>(item);
          UMA_CHECK(nb::len(t) == 3, Value, "Program.add_fused: each instruction is (op_name, a, b)");
          std::string name = nb::cast<std::string>(t[0]);
          FusedInstr ins;
          ins.a = nb::cast<int>(t[1]);
          ins.b = nb::cast<int>(t[2]);
          auto bin = binary_op_from_name(name);
          auto un = unary_op_from_name(name);
          UMA_CHECK(bin || un, Value, "Program.add_fused: '", name, "' is not an elementwise op");
          ins.binary = bin.has_value();
          ins.op = bin ? static_cast<int>(*bin) : static_cast<int>(*un);
          instrs.push_back(ins);
        }
        return p.add_fused(inputs, std::move(instrs), *to_dtype(dtype));
      }, nb::arg("inputs"), nb::arg("code"), nb::arg("dtype"),
      "Adds a fused elementwise chain: code is a list of (op_name, a, b) over registers (inputs first,\n"
      "then one register per instruction; b is ignored for unary ops). The last register is the result.\n"
      "Every input must have `dtype`; ops must keep the dtype (see uma._core._fusable).")
      .def("set_outputs", &runtime::Program::set_outputs)
      .def("run", [](const runtime::Program& p, const std::vector<Array>& inputs) {
        nb::gil_scoped_release release;
        return p.run(inputs);
      }, "Runs the program on uma.Array inputs; returns a list of uma.Array. The GIL is released.")
      .def("profile", [](const runtime::Program& p, const std::vector<Array>& inputs, int repeat) {
        nb::gil_scoped_release release;
        return p.profile(inputs, repeat);
      }, nb::arg("inputs"), nb::arg("repeat") = 100,
      "Runs the program `repeat` times; returns [(op name, mean ns per run)] per step (profiling aid).")
      .def_prop_ro("num_steps", &runtime::Program::num_steps);
  m.def("_program_ops", &runtime::op_names, "Names of the ops a Program can run.");
  m.def("_fusable", [](const std::string& name, nb::handle dtype) {
    DType t = *to_dtype(dtype);
    if (auto b = binary_op_from_name(name)) return ops::is_fusable(*b, t);
    if (auto u = unary_op_from_name(name)) return ops::is_fusable(*u, t);
    return false;
  }, "Whether the elementwise op `name` keeps `dtype` and can join a fused chain of that dtype.");
}

}  // namespace uma::py
