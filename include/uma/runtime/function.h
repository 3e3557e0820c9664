// uma/runtime/function.h — a compiled function's call path in C++ (DESIGN.md "Shared
// variables": updates are written in one code path, Function::call).
//
// A Function holds a Program, the declared types of its explicit inputs and the SharedCells
// of the shared variables it reads or writes. One call:
//   1. filters the inputs into their declared types (filter_input);
//   2. locks every cell in serial() order; if a cell's host copy is stale (another residency
//      was written last) it unlocks them all and reports that (try_call returns false: the
//      Python Function then takes its general path, which converts the value once);
//   3. reads the host copies, unlocks the cells it only reads (their values are immutable
//      buffers), runs the Program on (inputs..., shared values...);
//   4. after every output was computed, checks every update's value against its shared
//      variable's declared type (check_update: dtype, ndim, static lengths; TypeError), then
//      writes every update at once (they all read the old values: {a: b, b: a} swaps) and
//      unlocks. A call that throws writes nothing.
// A call whose inputs and shared values are all 0-d host values of a scalar program (Note
// [Scalar programs] in program.h) runs on the elements with every cell locked: it copies no
// array, and an update whose cell holds the only reference to its buffer is written into it
// (Note [Updates in place] in shared_cell.h); otherwise updates are new buffers.
// Calls touching the same cells are therefore serializable (two-phase locking); calls on
// disjoint cells run in parallel. Returned values never alias a shared value or each other
// (the cpu linker compiles copies into the Program where a graph output would).
#pragma once
#include <atomic>
#include <cstddef>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "uma/array.h"
#include "uma/runtime/program.h"
#include "uma/runtime/shared_cell.h"

namespace uma::runtime {

/// The declared type of an explicit input: dtype, and per axis the static length or -1.
struct InputSpec {
  DType dtype = DType::Float64;
  std::vector<int64_t> shape;  // size == ndim; -1: any length
  std::string label;           // names the input in errors, e.g. "input 0 ('x')"
};

/// The declared type of a shared variable that an update writes, which the update's value
/// must have (DESIGN.md "update validation").
struct UpdateSpec {
  DType dtype = DType::Float64;
  std::vector<int64_t> shape;  // size == ndim; -1: any length
  std::string label;           // names the variable in errors, e.g. "'w'"
  std::string type;            // the declared type as errors show it, e.g. "TensorType(float64, (None,))"
};

class Function {
 public:
  /// `program` reads the explicit inputs, then the shared values in `shared` order; it
  /// returns `n_outputs` values, then one value per update: update k is written into
  /// `shared[updates[k]]`. ValueError when these do not fit together.
  Function(std::shared_ptr<const Program> program, std::vector<InputSpec> inputs,
           std::vector<std::shared_ptr<SharedCell>> shared, std::vector<int> updates, std::size_t n_outputs,
           bool allow_input_downcast = false);

  /// Filters `inputs`, runs the function and returns its outputs. RuntimeError when a
  /// shared variable's host copy is stale (only Python-side residencies make it so).
  std::vector<Array> operator()(std::vector<Array> inputs) const;

  /// The call on already filtered inputs (see accepts/filter_input), which it consumes
  /// (`inputs` is left empty); the outputs go into `outputs` (resized). Returns false, having
  /// changed nothing (`inputs` too), when a shared variable's host copy is stale. Errors of
  /// the Program propagate and no update is written.
  bool try_call(std::vector<Array>& inputs, std::vector<Array>& outputs) const;
  /// try_call on borrowed inputs `inputs[0..n)`, which it reads and leaves as they are: a
  /// call on elements (Note [Scalar programs]) takes no reference to them at all; the
  /// general path copies them first. TypeError when n is not num_inputs().
  bool try_call(const Array* inputs, std::size_t n, std::vector<Array>& outputs) const;

  /// What try_call_now did.
  enum class Attempt { Done, Stale, NotNow };
  /// try_call without waiting, for small calls: runs (Done) only when every cell's lock is free
  /// at once and the inputs and shared values hold at most `max_elements` elements together;
  /// otherwise NotNow (nothing changed, no lock held: the caller may then use try_call). A
  /// caller that holds a lock other threads need while waiting for a cell (Python's GIL) can
  /// keep it through such a call: it never waits.
  Attempt try_call_now(std::vector<Array>& inputs, std::vector<Array>& outputs, int64_t max_elements) const;

  /// True when `value` can be passed as input `k` as it is: the declared dtype and ndim, a
  /// CPU array, and every static length matching.
  bool accepts(std::size_t k, const Array& value) const noexcept;
  /// `value` converted into input `k`'s type (DESIGN.md "casting into a declared dtype"):
  /// converted when the cast is safe (np.can_cast "safe") or allow_input_downcast is set,
  /// otherwise TypeError; TypeError for another ndim, ValueError for a static length that
  /// differs, ValueError for an array that is not on the CPU.
  Array filter_input(std::size_t k, const Array& value) const;

  /// Called (with the cell locks held) with the Program's inputs the first time a
  /// combination of input shapes is seen (up to 64 are remembered); it may throw a
  /// clearer shape error than the op would. Set before the Function is shared by threads.
  using ShapeCheck = std::function<void(const std::vector<Array>& values)>;
  void set_shape_check(ShapeCheck check) { shape_check_ = std::move(check); }

  /// The declared types of the update targets, one per update (ValueError otherwise). Until
  /// set, update k is checked against the dtype and ndim of its target's host copy (which
  /// every writer keeps of the declared type). Set before the Function is shared by threads.
  void set_update_types(std::vector<UpdateSpec> types);

  std::size_t num_inputs() const noexcept { return inputs_.size(); }
  std::size_t num_outputs() const noexcept { return n_outputs_; }
  const std::vector<InputSpec>& input_specs() const noexcept { return inputs_; }
  const std::vector<std::shared_ptr<SharedCell>>& shared() const noexcept { return shared_; }
  const Program& program() const noexcept { return *program_; }

 private:
  void check_shapes(const std::vector<Array>& values) const;
  // TypeError, naming the variable and both types, unless a value of `dtype` and `shape` may
  // be written by update k (the target's cell is locked and current).
  void check_update(std::size_t k, DType dtype, const Shape& shape) const {
    if (!update_fits(k, dtype, shape)) fail_update(k, dtype, shape);
  }
  bool update_fits(std::size_t k, DType dtype, const Shape& shape) const noexcept {
    if (update_types_.empty()) {
      const Array& h = shared_[updates_[k]]->host();
      return dtype == h.dtype() && shape.size() == static_cast<std::size_t>(h.ndim());
    }
    const UpdateSpec& s = update_types_[k];
    if (dtype != s.dtype || shape.size() != s.shape.size()) return false;
    for (std::size_t i = 0; i < s.shape.size(); ++i)
      if (s.shape[i] >= 0 && s.shape[i] != shape[i]) return false;
    return true;
  }
  [[noreturn]] void fail_update(std::size_t k, DType dtype, const Shape& shape) const;
  // try_call (max_elements < 0: wait for the locks) and try_call_now.
  // The inputs are in[0..n_in), owned by *owned when it is not null (then consumed).
  Attempt call(const Array* in, std::size_t n_in, std::vector<Array>* owned, std::vector<Array>& outputs,
               int64_t max_elements) const;
  // The call on elements (Note [Scalar programs]) of the inputs `in` (num_inputs() of them),
  // with every cell locked and current; false, having changed nothing, when they do not qualify.
  bool call_elements(const Array* in, std::vector<Array>& outputs) const;

  std::shared_ptr<const Program> program_;
  std::vector<InputSpec> inputs_;
  std::vector<std::shared_ptr<SharedCell>> shared_;
  std::vector<int> updates_;
  std::vector<UpdateSpec> update_types_;  // empty, or one per update
  std::size_t n_outputs_;
  bool allow_input_downcast_;
  std::vector<SharedCell*> lock_order_;   // distinct cells by serial()
  std::vector<bool> lock_written_;        // per lock_order_ entry: an update target
  bool distinct_targets_ = true;          // no cell is the target of two updates
  ShapeCheck shape_check_;
  mutable std::mutex shapes_mu_;
  mutable std::vector<std::vector<int64_t>> shapes_ok_;  // flattened shape keys already checked
  mutable std::atomic<bool> scalars_checked_{false};     // the all-0-d combination passed
};

}  // namespace uma::runtime
