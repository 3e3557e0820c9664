#include "uma/runtime/function.h"

#include <algorithm>
#include <limits>
#include <type_traits>

#include "uma/error.h"
#include "uma/ops.h"
#include "uma/transfer.h"

namespace uma::runtime {

namespace {
std::string fmt_static(const std::vector<int64_t>& shape) {
  std::string s = "(";
  for (std::size_t i = 0; i < shape.size(); ++i) {
    if (i) s += ", ";
    s += shape[i] < 0 ? std::string("?") : std::to_string(shape[i]);
  }
  if (shape.size() == 1) s += ",";
  return s + ")";
}

// Unlocks, on scope exit, the cells of a lock order that are still held (no allocation for
// up to 64 cells: a call's fixed cost matters).
class Unlocker {
 public:
  explicit Unlocker(const std::vector<SharedCell*>& cells) : cells_(cells) {
    if (cells.size() > 64) big_.assign(cells.size(), 0);
  }
  Unlocker(const Unlocker&) = delete;
  Unlocker& operator=(const Unlocker&) = delete;
  void lock_all() {
    for (std::size_t i = 0; i < cells_.size(); ++i) {
      cells_[i]->lock();
      set(i, true);
    }
  }
  // Takes every lock that is free now; false at the first busy one (the destructor releases
  // the ones taken).
  bool try_lock_all() {
    for (std::size_t i = 0; i < cells_.size(); ++i) {
      if (!cells_[i]->try_lock()) return false;
      set(i, true);
    }
    return true;
  }
  void unlock(std::size_t i) {
    if (held(i)) {
      set(i, false);
      cells_[i]->unlock();
    }
  }
  ~Unlocker() {
    for (std::size_t i = cells_.size(); i-- > 0;) unlock(i);
  }

 private:
  bool held(std::size_t i) const { return big_.empty() ? (small_ >> i) & 1u : big_[i] != 0; }
  void set(std::size_t i, bool v) {
    if (big_.empty())
      small_ = v ? small_ | (uint64_t{1} << i) : small_ & ~(uint64_t{1} << i);
    else
      big_[i] = v;
  }
  const std::vector<SharedCell*>& cells_;
  uint64_t small_ = 0;
  std::vector<char> big_;
};
}  // namespace

Function::Function(std::shared_ptr<const Program> program, std::vector<InputSpec> inputs,
                   std::vector<std::shared_ptr<SharedCell>> shared, std::vector<int> updates, std::size_t n_outputs,
                   FunctionOptions options)
    : program_(std::move(program)),
      inputs_(std::move(inputs)),
      shared_(std::move(shared)),
      updates_(std::move(updates)),
      n_outputs_(n_outputs),
      options_(std::move(options)) {
  UMA_CHECK(program_ != nullptr, Value, "Function: no program");
  program_->seal();  // Note [Changing a program]
  UMA_CHECK(options_.residency && options_.residency->device(), Value, "Function: a Program runs in uma's "
            "residencies (the host or a device), not in ", options_.residency ? options_.residency->name() : "none");
  UMA_CHECK(program_->num_inputs() == inputs_.size() + shared_.size(), Value, "Function: the program reads ",
            program_->num_inputs(), " values, but there are ", inputs_.size(), " inputs and ", shared_.size(),
            " shared variables");
  UMA_CHECK(program_->num_outputs() == n_outputs_ + updates_.size(), Value, "Function: the program returns ",
            program_->num_outputs(), " values, but there are ", n_outputs_, " outputs and ", updates_.size(),
            " updates");
  init();
}

Function::Function(std::shared_ptr<const Program> program, std::vector<InputSpec> inputs,
                   std::vector<std::shared_ptr<SharedCell>> shared, std::vector<int> updates, std::size_t n_outputs,
                   bool allow_input_downcast)
    : Function(std::move(program), std::move(inputs), std::move(shared), std::move(updates), n_outputs,
               FunctionOptions{"cpu", host_residency(), allow_input_downcast, false}) {}

Function::Function(std::shared_ptr<const Thunk> thunk, std::vector<InputSpec> inputs,
                   std::vector<std::shared_ptr<SharedCell>> shared, std::vector<int> updates, std::size_t n_outputs,
                   FunctionOptions options)
    : thunk_(std::move(thunk)),
      inputs_(std::move(inputs)),
      shared_(std::move(shared)),
      updates_(std::move(updates)),
      n_outputs_(n_outputs),
      options_(std::move(options)) {
  UMA_CHECK(thunk_ != nullptr, Value, "Function: no thunk");
  UMA_CHECK(options_.residency != nullptr, Value, "Function: no residency");
  init();
}

void Function::init() {
  device_ = options_.residency->device();
  host_ = options_.residency->is_host();
  for (const auto& c : shared_) UMA_CHECK(c != nullptr, Value, "Function: a shared variable has no cell");
  std::vector<char> target(shared_.size(), 0);
  for (int u : updates_) {
    UMA_CHECK(u >= 0 && static_cast<std::size_t>(u) < shared_.size(), Value, "Function: update target ", u,
              " is not a shared variable index");
    UMA_CHECK(!target[u], Value, "Function: shared variable ", u, " has more than one update");
    target[u] = 1;
  }
  std::vector<std::pair<SharedCell*, bool>> cells;
  for (std::size_t i = 0; i < shared_.size(); ++i) cells.emplace_back(shared_[i].get(), target[i] != 0);
  std::sort(cells.begin(), cells.end(), [](const auto& a, const auto& b) { return a.first->serial() < b.first->serial(); });
  for (std::size_t i = 0; i < cells.size(); ++i) {
    if (!lock_order_.empty() && lock_order_.back() == cells[i].first) {  // one cell listed twice
      lock_written_.back() = lock_written_.back() || cells[i].second;
      continue;
    }
    lock_order_.push_back(cells[i].first);
    lock_written_.push_back(cells[i].second);
  }
  for (std::size_t j = 0; j < updates_.size(); ++j)
    for (std::size_t k = 0; k < j; ++k)
      distinct_targets_ = distinct_targets_ && shared_[updates_[j]] != shared_[updates_[k]];
}

void Function::set_open_axes(std::vector<std::vector<int64_t>> axes) {
  UMA_CHECK(axes.size() == updates_.size(), Value, "Function: ", axes.size(), " open-axes lists for ",
            updates_.size(), " updates");
  open_axes_ = std::move(axes);
}

void Function::fail_update(std::size_t k, const std::string& dtype, const Shape& shape) const {
  const TypeSpec& t = shared_[updates_[k]]->type();
  std::string label = t.label;
  if (label.empty()) label.append("#").append(std::to_string(updates_[k]));
  if (dtype == dtype_name(t.dtype) && shape.size() == t.shape.size() && !open_axes_.empty()) {
    bool graph_value = false;  // every differing length is on an axis the graph left open
    for (std::size_t i = 0; i < t.shape.size(); ++i) {
      if (t.shape[i] < 0 || t.shape[i] == shape[i]) continue;
      const auto& open = open_axes_[k];
      graph_value = std::find(open.begin(), open.end(), static_cast<int64_t>(i)) != open.end();
      if (!graph_value) break;
    }
    UMA_CHECK(!graph_value, Value, "function: the update of shared variable ", label, " has shape ",
              shape_str(shape), ", but the variable's static shape is ", fmt_static(t.shape),
              "; no shared variable was changed");
  }
  UMA_FAIL(Type, "function: backend '", options_.backend, "' returned ", dtype, " of shape ", shape_str(shape),
           " for shared variable ", label, " of type ", t.text, "; no shared variable was changed");
}

bool Function::accepts(std::size_t k, const Array& v) const noexcept {
  const InputSpec& s = inputs_[k];
  if (v.dtype() != s.dtype || static_cast<std::size_t>(v.ndim()) != s.shape.size() || !device_ ||
      v.device() != *device_)
    return false;
  const Shape& shape = v.shape();
  for (std::size_t i = 0; i < s.shape.size(); ++i)
    if (s.shape[i] >= 0 && s.shape[i] != shape[i]) return false;
  return true;
}

Array Function::filter_input(std::size_t k, const Array& v) const {
  UMA_CHECK(k < inputs_.size(), Index, "Function: input ", k, " out of range (", inputs_.size(), " inputs)");
  if (accepts(k, v)) return v;
  const InputSpec& s = inputs_[k];
  UMA_CHECK(v.defined(), Type, s.label, ": undefined array");
  UMA_CHECK(device_, Value, s.label, ": backend '", options_.backend, "' takes its own values, not uma arrays");
  UMA_CHECK(v.device().is_cpu() || v.device() == *device_, Value, s.label, ": expected an array on ",
            device_->str(), " or the CPU, got one on ", v.device().str());
  UMA_CHECK(static_cast<std::size_t>(v.ndim()) == s.shape.size(), Type, s.label, ": expected ", s.shape.size(),
            "-d array, got ", v.ndim(), "-d array of shape ", shape_str(v.shape()));
  for (std::size_t i = 0; i < s.shape.size(); ++i)
    UMA_CHECK(s.shape[i] < 0 || s.shape[i] == v.shape()[i], Value, s.label, ": expected shape ", fmt_static(s.shape),
              ", got ", shape_str(v.shape()), " (axis ", i, ")");
  UMA_CHECK(options_.allow_input_downcast || can_cast_safe(v.dtype(), s.dtype), Type, s.label, ": cannot cast ",
            dtype_name(v.dtype()), " to ", dtype_name(s.dtype), " safely (NumPy 'safe' casting); cast the value first");
  Array a = v.dtype() == s.dtype ? v : ops::astype(v, s.dtype);
  return on_device(a, *device_);
}

std::vector<Array> Function::operator()(std::vector<Array> inputs) const {
  UMA_CHECK(inputs.size() == inputs_.size(), Type, "function takes ", inputs_.size(), " argument(s), got ",
            inputs.size());
  for (std::size_t k = 0; k < inputs.size(); ++k)
    if (!accepts(k, inputs[k])) inputs[k] = filter_input(k, inputs[k]);
  std::vector<Array> out;
  call(inputs, out);
  return out;
}

namespace {
// The calling thread's shape key buffer (found once per call, see Program::run_into).
[[gnu::noinline]] std::vector<int64_t>& shape_key() {
  thread_local std::vector<int64_t> key;
  return key;
}
}  // namespace

void Function::check_shapes(const std::vector<Array>& values) const {
  // Every value 0-d (a scalar function): one combination, remembered without the mutex.
  bool scalars = true;
  for (const Array& v : values) scalars = scalars && v.ndim() == 0;
  if (scalars && scalars_checked_.load(std::memory_order_acquire)) return;
  std::vector<int64_t>& key = shape_key();  // reused: a call allocates nothing here
  key.clear();
  for (const Array& v : values) {
    key.push_back(v.ndim());
    key.insert(key.end(), v.shape().begin(), v.shape().end());
  }
  {
    std::lock_guard<std::mutex> g(shapes_mu_);
    for (const auto& k : shapes_ok_)
      if (k == key) return;
  }
  std::vector<int64_t> mine = key;  // the check may run Python, which may call a function
  shape_check_(values);
  if (scalars) scalars_checked_.store(true, std::memory_order_release);
  std::lock_guard<std::mutex> g(shapes_mu_);
  if (shapes_ok_.size() >= 64) shapes_ok_.clear();
  shapes_ok_.push_back(std::move(mine));
}

void Function::call(std::vector<Array>& values, std::vector<Array>& outputs) const {
  UMA_CHECK(program_, Type, "function: backend '", options_.backend, "' runs on its own values, not uma arrays");
  run_call(values.data(), values.size(), &values, outputs, -1);
}

void Function::call(const Array* inputs, std::size_t n, std::vector<Array>& outputs) const {
  UMA_CHECK(program_, Type, "function: backend '", options_.backend, "' runs on its own values, not uma arrays");
  run_call<Array>(inputs, n, nullptr, outputs, -1);
}

bool Function::call_now(std::vector<Array>& values, std::vector<Array>& outputs, int64_t max_elements) const {
  UMA_CHECK(program_, Type, "function: backend '", options_.backend, "' runs on its own values, not uma arrays");
  return run_call(values.data(), values.size(), &values, outputs, max_elements < 0 ? 0 : max_elements);
}

void Function::call(std::vector<Value>& values, std::vector<Value>& outputs) const {
  UMA_CHECK(thunk_, Type, "function: a Program function takes uma arrays");
  run_call(values.data(), values.size(), &values, outputs, -1);
}

bool Function::call_now(std::vector<Value>& values, std::vector<Value>& outputs) const {
  UMA_CHECK(thunk_, Type, "function: a Program function takes uma arrays");
  return run_call(values.data(), values.size(), &values, outputs, std::numeric_limits<int64_t>::max());
}

Array Function::read_array(SharedCell& c) const {
  if (host_) return c.read_host();
  Value v = c.read(options_.residency);
  UMA_CHECK(v.is_array() && v.array.device() == *device_, Runtime, "residency ", options_.residency->name(),
            ": the value of shared variable ", c.type().label, " is not a uma array on ", device_->str());
  return std::move(v.array);
}

void Function::run_program(std::vector<Array>& values, std::vector<Array>& outputs) const {
  if (shape_check_) check_shapes(values);
  program_->run_into(values, outputs);
}

bool Function::run_thunk(std::vector<Value>& values, std::vector<Value>& outputs) const {
  if (value_shape_check_) value_shape_check_(values);
  outputs.clear();
  const bool checked = thunk_->run_checked(values, outputs);
  UMA_CHECK(outputs.size() == n_outputs_ + updates_.size(), Type, "function: backend '", options_.backend,
            "''s thunk returned ", outputs.size(), " values, expected ", n_outputs_ + updates_.size(),
            " (one per output and update); no shared variable was changed");
  return checked;
}

Value Function::stage(std::size_t k, Array&& v) const {
  check_update(k, v.dtype(), v.shape());
  return Value(std::move(v));
}

Value Function::stage(std::size_t k, Value&& v, bool checked) const {
  if (v.is_array()) {
    check_update(k, v.array.dtype(), v.array.shape());
  } else if (!checked || host_) {
    auto got = thunk_->describe(v);
    const TypeSpec& t = shared_[updates_[k]]->type();
    UMA_CHECK(got.has_value(), Type, "function: backend '", options_.backend, "' returned a ", thunk_->kind(v),
              " (no dtype and shape) for shared variable ", t.label, " of type ", t.text,
              "; no shared variable was changed");
    std::optional<DType> d = dtype_from_name(got->first);
    if (!d || !t.admits(*d, got->second)) fail_update(k, got->first, got->second);
    if (host_) v = Value(thunk_->to_array(v));  // keeps the dtype and shape checked above
  }
  if (host_) {
    UMA_CHECK(v.is_array() && v.array.device().is_cpu(), Value, "function: backend '", options_.backend,
              "' (residency 'cpu') returned an array on ", v.is_array() ? v.array.device().str() : std::string("?"),
              " for shared variable ", shared_[updates_[k]]->type().label, "; no shared variable was changed");
  }
  return std::move(v);
}

template <class V>
bool Function::run_call(const V* in, std::size_t n_in, std::vector<V>* owned, std::vector<V>& outputs,
                        int64_t max_elements) const {
  constexpr bool kArrays = std::is_same_v<V, Array>;
  UMA_CHECK(n_in == inputs_.size(), Type, "function takes ", inputs_.size(), " argument(s), got ", n_in);
  Unlocker locks(lock_order_);
  if (max_elements < 0) {
    locks.lock_all();  // serial order: no lock cycles
  } else if (!locks.try_lock_all()) {
    return false;  // the Unlocker releases the locks taken; nothing changed
  }
  if constexpr (kArrays) {
    if (max_elements >= 0) {
      int64_t n = 0;
      for (std::size_t i = 0; i < n_in; ++i) n += in[i].size();
      for (const auto& c : shared_) {
        if (!host_ || !c->host_current()) return false;  // a conversion or a device: not while waiting is barred
        n += c->host().size();
      }
      if (n > max_elements) return false;
    }
    if (host_ && program_->element_plan()) {
      for (SharedCell* c : lock_order_) c->read_host();
      if (call_elements(in, outputs)) {
        if (owned) owned->clear();
        return true;
      }
    }
  }
  std::vector<V> borrowed;
  if (!owned) borrowed.assign(in, in + n_in);  // the general path consumes its values
  std::vector<V>& values = owned ? *owned : borrowed;
  values.reserve(inputs_.size() + shared_.size());
  for (const auto& c : shared_) {
    if constexpr (kArrays)
      values.push_back(read_array(*c));
    else
      values.push_back(c->read(options_.residency));
  }
  if (!options_.hold_reads)  // read: their values are immutable (FunctionOptions::hold_reads)
    for (std::size_t i = 0; i < lock_order_.size(); ++i)
      if (!lock_written_[i]) locks.unlock(i);
  bool checked = false;  // the thunk checked its update values itself
  if constexpr (kArrays)
    run_program(values, outputs);
  else
    checked = run_thunk(values, outputs);
  // Every output is computed: check and stage every update (the host copies too under the
  // eager policy), then write them all at once (they read the old values).
  const std::size_t n_up = updates_.size();
  if (n_up == 0) return true;
  if constexpr (kArrays) {
    if (host_) {  // host arrays are stored as they are
      for (std::size_t k = 0; k < n_up; ++k) {
        const Array& v = outputs[n_outputs_ + k];
        check_update(k, v.dtype(), v.shape());
      }
      for (std::size_t k = 0; k < n_up; ++k) shared_[updates_[k]]->write_host(std::move(outputs[n_outputs_ + k]));
      outputs.resize(n_outputs_);
      return true;
    }
  }
  std::vector<Value> staged;
  staged.reserve(n_up);
  for (std::size_t k = 0; k < n_up; ++k) {
    if constexpr (kArrays)
      staged.push_back(stage(k, std::move(outputs[n_outputs_ + k])));
    else
      staged.push_back(stage(k, std::move(outputs[n_outputs_ + k]), checked));
  }
  std::vector<Array> hosts;
  if (options_.eager && !host_) {
    hosts.reserve(n_up);
    for (std::size_t k = 0; k < n_up; ++k) {
      SharedCell& c = *shared_[updates_[k]];
      hosts.push_back(host_form(*options_.residency, staged[k], c.type()));
    }
  }
  for (std::size_t k = 0; k < n_up; ++k) {
    SharedCell& c = *shared_[updates_[k]];
    c.write(options_.residency, std::move(staged[k]));
    if (!hosts.empty()) {
      count_conversion(options_.residency->name(), host_residency()->name(), hosts[k].nbytes());
      c.refresh_host(std::move(hosts[k]));
    }
  }
  outputs.resize(n_outputs_);
  return true;
}

template bool Function::run_call<Array>(const Array*, std::size_t, std::vector<Array>*, std::vector<Array>&,
                                        int64_t) const;
template bool Function::run_call<Value>(const Value*, std::size_t, std::vector<Value>*, std::vector<Value>&,
                                        int64_t) const;

// Note [Scalar programs] for a whole call: the inputs and shared values are read in place (no
// array is copied), and an update whose cell can take it in place (Note [Updates in place])
// gets no new array. Phase 1 makes every array the call returns or stores and checks the
// updates' types, and may throw; phase 2 writes the updates and cannot fail, so a call that
// throws writes nothing.
bool Function::call_elements(const Array* values, std::vector<Array>& outputs) const {
  const std::size_t n_in = inputs_.size(), n_values = n_in + shared_.size();
  const std::size_t n_up = updates_.size();
  if (n_values > static_cast<std::size_t>(Program::kElementSlots) || n_up > static_cast<std::size_t>(Program::kElementSlots))
    return false;
  if (shape_check_ && !scalars_checked_.load(std::memory_order_acquire)) return false;  // first: check_shapes
  const void* ptr[Program::kElementSlots];
  DType type[Program::kElementSlots];
  auto value = [&](std::size_t i) -> const Array& { return i < n_in ? values[i] : shared_[i - n_in]->host(); };
  for (std::size_t i = 0; i < n_values; ++i) {
    const Array& v = value(i);
    if (!v.defined() || v.ndim() != 0 || !v.device().is_cpu()) return false;
    ptr[i] = v.data();
    type[i] = v.dtype();
  }
  Program::Elements e;
  if (!program_->run_elements(ptr, type, e)) return false;
  auto array_of = [&](std::size_t k) -> Array {
    const Program::OutputSource& src = program_->output_source(k);
    switch (src.kind) {
      case Program::Source::Constant: return program_->constant(src.slot);
      case Program::Source::Input: return value(static_cast<std::size_t>(src.index));
      case Program::Source::Repeat:
        if (k < n_outputs_ || src.index < static_cast<int>(n_outputs_)) return outputs[src.index];
        break;  // an update repeating an update: its own array (or its own write)
      case Program::Source::Step: break;
    }
    return e.array(src.slot);
  };
  auto computed = [&](std::size_t k) {
    const Program::OutputSource& src = program_->output_source(k);
    return src.kind == Program::Source::Step ||
           (src.kind == Program::Source::Repeat && program_->output_source(src.index).kind == Program::Source::Step);
  };
  // Phase 1: outputs, then the updates that store an existing array (they hold references
  // to old values, so they come before the in-place decisions), then the other updates. An
  // update's array goes after the outputs, at position at[k] (-1: written in place).
  int at[Program::kElementSlots];
  outputs.clear();
  for (std::size_t k = 0; k < n_outputs_; ++k) outputs.push_back(array_of(k));
  for (std::size_t k = 0; k < n_up; ++k) {
    at[k] = -1;
    if (computed(n_outputs_ + k)) continue;
    at[k] = static_cast<int>(outputs.size());
    outputs.push_back(array_of(n_outputs_ + k));
  }
  for (std::size_t k = 0; k < n_up; ++k) {
    if (!computed(n_outputs_ + k)) continue;
    const int s = program_->output_source(n_outputs_ + k).slot;
    if (distinct_targets_ && shared_[updates_[k]]->can_write_element(e.type[s])) continue;
    at[k] = static_cast<int>(outputs.size());
    outputs.push_back(e.array(s));
  }
  // Every update's value must have its variable's type. One written in place has it already:
  // it has the dtype and ndim (0) of the cell's host copy, which every writer keeps of the
  // declared type (can_write_element).
  for (std::size_t k = 0; k < n_up; ++k)
    if (at[k] >= 0) check_update(k, outputs[at[k]].dtype(), outputs[at[k]].shape());
  // Phase 2: every update at once (they read the old values: computed above).
  for (std::size_t k = 0; k < n_up; ++k) {
    SharedCell& cell = *shared_[updates_[k]];
    if (at[k] >= 0)
      cell.write_host(std::move(outputs[at[k]]));
    else
      cell.write_element(e.ptr[program_->output_source(n_outputs_ + k).slot]);
  }
  if (outputs.size() > n_outputs_) outputs.resize(n_outputs_);
  return true;
}

}  // namespace uma::runtime
