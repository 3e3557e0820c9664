// uma/runtime/function.h — a compiled function's call, for every backend (DESIGN.md "Shared
// variables": updates are written in one code path, Function::call).
//
// A Function holds what its linker compiled — a Program (the cpu and cuda linkers), or a Thunk
// (a backend's own computation, e.g. a Python linker's, through the binding layer) —, the
// residency its values live in, the declared types of its explicit inputs and the SharedCells
// of the shared variables it reads or writes. One call:
//   1. takes its inputs already filtered into their declared types (filter_input for a
//      Program; the caller's filter, e.g. Python's is_native/input_filter, for a Thunk);
//   2. locks every cell in serial() order and reads each in the function's residency (a copy
//      that is stale there is converted once, through the host: SharedCell::read), then
//      unlocks the cells it only reads (their values are immutable);
//   3. runs the Program or the Thunk on (inputs..., shared values...);
//   4. after every output was computed, checks every update's value against its shared
//      variable's declared type (dtype, ndim, static lengths: TypeError naming the backend,
//      the variable and both types; ValueError for a length the graph could not prove),
//      converts what must be converted (a Thunk's value for the host residency into an Array;
//      the host copy too under update_policy="eager"), then writes every update at once (they
//      all read the old values: {a: b, b: a} swaps) and unlocks. A call that throws writes
//      nothing.
// A host Program call whose inputs and shared values are all 0-d host values of a scalar
// program (Note [Scalar programs] in program.h) runs on the elements with every cell locked:
// it copies no array, and an update whose cell holds the only reference to its buffer is
// written into it (Note [Updates in place] in shared_cell.h); otherwise updates are new
// buffers (or the Thunk's values).
// Calls touching the same cells are therefore serializable (two-phase locking); calls on
// disjoint cells run in parallel. Returned values never alias a shared value or each other
// (the linkers compile copies where a graph output would).
#pragma once
#include <atomic>
#include <cstddef>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "uma/array.h"
#include "uma/runtime/program.h"
#include "uma/runtime/residency.h"
#include "uma/runtime/shared_cell.h"

namespace uma::runtime {

/// The declared type of an explicit input: dtype, and per axis the static length or -1.
struct InputSpec {
  DType dtype = DType::Float64;
  std::vector<int64_t> shape;  // size == ndim; -1: any length
  std::string label;           // names the input in errors, e.g. "input 0 ('x')"
};

/// A compiled function's computation when it is not a Program: a backend's own code (a
/// Python linker's thunk, through the binding layer) on values of the function's residency.
class Thunk {
 public:
  virtual ~Thunk() = default;
  /// One value per output, then one per update, computed from `values` (the explicit inputs,
  /// then the shared values); the thunk must not write into `values`.
  virtual void run(const std::vector<Value>& values, std::vector<Value>& outputs) const = 0;
  /// run(), and whether the update values it returned are known to have their shared
  /// variables' dtypes and static shapes (a thunk that checks them itself, e.g. once per input
  /// signature): the call then does not describe them again. The default: run(), false.
  virtual bool run_checked(const std::vector<Value>& values, std::vector<Value>& outputs) const {
    run(values, outputs);
    return false;
  }
  /// The dtype (its name; a dtype uma lacks by its own text) and shape of a value `run`
  /// returned, read without converting it; nullopt when it has none.
  virtual std::optional<std::pair<std::string, Shape>> describe(const Value& v) const = 0;
  /// What a value is, for errors (e.g. "list").
  virtual std::string kind(const Value& v) const = 0;
  /// A value `run` returned, as a uma::Array of the same dtype and shape (the host
  /// residency stores Arrays).
  virtual Array to_array(const Value& v) const = 0;
};

/// How a Function runs: the backend it names in errors, the residency of its values, and
/// whether the host copy of each update is refreshed too (update_policy="eager").
struct FunctionOptions {
  std::string backend = "cpu";
  std::shared_ptr<const Residency> residency = host_residency();
  bool allow_input_downcast = false;
  bool eager = false;
  /// Keep the locks of the variables a call only reads until its thunk returns. Off, they are
  /// released once their values are read (stored values are immutable). On for a residency
  /// whose stored values another call's update may consume (JAX donates them to XLA): the
  /// thunk must have handed the values to its framework before a writer can consume them.
  bool hold_reads = false;
};

class Function {
 public:
  /// A Program function: `program` reads the explicit inputs, then the shared values in
  /// `shared` order; it returns `n_outputs` values, then one value per update: update k is
  /// written into `shared[updates[k]]`. The Program runs on the residency's device
  /// (options.residency must be uma's: the host or a device). ValueError when these do not
  /// fit together.
  Function(std::shared_ptr<const Program> program, std::vector<InputSpec> inputs,
           std::vector<std::shared_ptr<SharedCell>> shared, std::vector<int> updates, std::size_t n_outputs,
           FunctionOptions options = {});
  Function(std::shared_ptr<const Program> program, std::vector<InputSpec> inputs,
           std::vector<std::shared_ptr<SharedCell>> shared, std::vector<int> updates, std::size_t n_outputs,
           bool allow_input_downcast);
  /// A Thunk function, on the same layout of values.
  Function(std::shared_ptr<const Thunk> thunk, std::vector<InputSpec> inputs,
           std::vector<std::shared_ptr<SharedCell>> shared, std::vector<int> updates, std::size_t n_outputs,
           FunctionOptions options);

  /// Filters `inputs`, runs the function and returns its outputs (a Program function).
  std::vector<Array> operator()(std::vector<Array> inputs) const;

  /// The call of a Program function on already filtered inputs (see accepts/filter_input),
  /// which it consumes (`inputs` is left empty); the outputs go into `outputs` (resized).
  /// Errors propagate and no update is written.
  void call(std::vector<Array>& inputs, std::vector<Array>& outputs) const;
  /// call on borrowed inputs `inputs[0..n)`, which it reads and leaves as they are: a call on
  /// elements (Note [Scalar programs]) takes no reference to them at all; the general path
  /// copies them first. TypeError when n is not num_inputs().
  void call(const Array* inputs, std::size_t n, std::vector<Array>& outputs) const;
  /// call without waiting, for small calls: runs (true) only when every cell's lock is free
  /// at once, no shared value needs a conversion, and the inputs and shared values hold at
  /// most `max_elements` elements together; otherwise false (nothing changed, no lock held:
  /// the caller may then use call). A caller that holds a lock other threads need while
  /// waiting for a cell (Python's GIL) can keep it through such a call: it never waits.
  bool call_now(std::vector<Array>& inputs, std::vector<Array>& outputs, int64_t max_elements) const;

  /// The call of a Thunk function on inputs already in its residency (consumed).
  void call(std::vector<Value>& inputs, std::vector<Value>& outputs) const;
  /// That call without waiting: false (nothing changed, no lock held) when a cell's lock is
  /// taken.
  bool call_now(std::vector<Value>& inputs, std::vector<Value>& outputs) const;

  /// True when `value` can be passed as input `k` of a Program function as it is: the
  /// declared dtype and ndim, on the residency's device, and every static length matching.
  bool accepts(std::size_t k, const Array& value) const noexcept;
  /// `value` converted into input `k`'s type (DESIGN.md "casting into a declared dtype"):
  /// converted when the cast is safe (np.can_cast "safe") or allow_input_downcast is set,
  /// otherwise TypeError; TypeError for another ndim, ValueError for a static length that
  /// differs; a host array is moved to the residency's device, an array on another device is
  /// a ValueError.
  Array filter_input(std::size_t k, const Array& value) const;

  /// Called (with the cell locks held) with the Program's inputs the first time a
  /// combination of input shapes is seen (up to 64 are remembered); it may throw a
  /// clearer shape error than the op would. Set before the Function is shared by threads.
  using ShapeCheck = std::function<void(const std::vector<Array>& values)>;
  void set_shape_check(ShapeCheck check) { shape_check_ = std::move(check); }
  /// The same for a Thunk function, called on every call (it remembers what it checked).
  using ValueShapeCheck = std::function<void(const std::vector<Value>& values)>;
  void set_shape_check(ValueShapeCheck check) { value_shape_check_ = std::move(check); }

  /// Per update, the static axes of its variable that the update expression leaves open (the
  /// graph cannot prove their length): a value of another length there is the graph's value,
  /// a ValueError; elsewhere the backend broke the type, a TypeError. Set before the Function
  /// is shared by threads.
  void set_open_axes(std::vector<std::vector<int64_t>> axes);

  std::size_t num_inputs() const noexcept { return inputs_.size(); }
  std::size_t num_outputs() const noexcept { return n_outputs_; }
  const std::vector<InputSpec>& input_specs() const noexcept { return inputs_; }
  const std::vector<std::shared_ptr<SharedCell>>& shared() const noexcept { return shared_; }
  /// The Program (nullptr for a Thunk function).
  const Program* program() const noexcept { return program_.get(); }
  const FunctionOptions& options() const noexcept { return options_; }

 private:
  void init();
  void check_shapes(const std::vector<Array>& values) const;
  // Throws, naming the variable and both types, unless a value of `dtype` and `shape` may be
  // written by update k.
  void check_update(std::size_t k, DType dtype, const Shape& shape) const {
    if (!shared_[updates_[k]]->type().admits(dtype, shape)) fail_update(k, dtype_name(dtype), shape);
  }
  [[noreturn]] void fail_update(std::size_t k, const std::string& dtype, const Shape& shape) const;
  // The phases of a call, on Arrays (a Program) or Values (a Thunk). max_elements < 0: wait
  // for the locks; otherwise call_now's limits. The inputs are in[0..n_in), owned by *owned
  // when it is not null (then consumed). False: not now (nothing changed).
  template <class V>
  bool run_call(const V* in, std::size_t n_in, std::vector<V>* owned, std::vector<V>& outputs,
                int64_t max_elements) const;
  Array read_array(SharedCell& c) const;
  void run_program(std::vector<Array>& values, std::vector<Array>& outputs) const;
  bool run_thunk(std::vector<Value>& values, std::vector<Value>& outputs) const;
  // An update's value checked against its variable and made ready to store (phase 1).
  Value stage(std::size_t k, Array&& v) const;
  Value stage(std::size_t k, Value&& v, bool checked = false) const;
  // The call on elements (Note [Scalar programs]) of the inputs `in` (num_inputs() of them),
  // with every cell locked and its host copy current; false, having changed nothing, when
  // they do not qualify.
  bool call_elements(const Array* in, std::vector<Array>& outputs) const;

  std::shared_ptr<const Program> program_;
  std::shared_ptr<const Thunk> thunk_;
  std::vector<InputSpec> inputs_;
  std::vector<std::shared_ptr<SharedCell>> shared_;
  std::vector<int> updates_;
  std::vector<std::vector<int64_t>> open_axes_;  // empty, or one list per update
  std::size_t n_outputs_;
  FunctionOptions options_;
  std::optional<Device> device_;          // the residency's device (a Program function)
  bool host_ = true;                      // the host residency
  std::vector<SharedCell*> lock_order_;   // distinct cells by serial()
  std::vector<bool> lock_written_;        // per lock_order_ entry: an update target
  bool distinct_targets_ = true;          // no cell is the target of two updates
  ShapeCheck shape_check_;
  ValueShapeCheck value_shape_check_;
  mutable std::mutex shapes_mu_;
  mutable std::vector<std::vector<int64_t>> shapes_ok_;  // flattened shape keys already checked
  mutable std::atomic<bool> scalars_checked_{false};     // the all-0-d combination passed
};

}  // namespace uma::runtime
