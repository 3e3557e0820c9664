#include "uma/runtime/function.h"

#include <algorithm>

#include "uma/error.h"
#include "uma/ops.h"

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
                   bool allow_input_downcast)
    : program_(std::move(program)),
      inputs_(std::move(inputs)),
      shared_(std::move(shared)),
      updates_(std::move(updates)),
      n_outputs_(n_outputs),
      allow_input_downcast_(allow_input_downcast) {
  UMA_CHECK(program_ != nullptr, Value, "Function: no program");
  UMA_CHECK(program_->num_inputs() == inputs_.size() + shared_.size(), Value, "Function: the program reads ",
            program_->num_inputs(), " values, but there are ", inputs_.size(), " inputs and ", shared_.size(),
            " shared variables");
  UMA_CHECK(program_->num_outputs() == n_outputs_ + updates_.size(), Value, "Function: the program returns ",
            program_->num_outputs(), " values, but there are ", n_outputs_, " outputs and ", updates_.size(),
            " updates");
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

void Function::set_update_types(std::vector<UpdateSpec> types) {
  UMA_CHECK(types.size() == updates_.size(), Value, "Function: ", types.size(), " update types for ",
            updates_.size(), " updates");
  update_types_ = std::move(types);
}

void Function::fail_update(std::size_t k, DType dtype, const Shape& shape) const {
  std::string label, type;
  if (update_types_.empty()) {
    const Array& h = shared_[updates_[k]]->host();
    label = "#" + std::to_string(updates_[k]);
    type = std::string(dtype_name(h.dtype())) + " with " + std::to_string(h.ndim()) + " dimension(s)";
  } else {
    label = update_types_[k].label;
    type = update_types_[k].type;
  }
  // This call path is the cpu backend's (a Program runs on the host).
  UMA_FAIL(Type, "function: backend 'cpu' returned ", dtype_name(dtype), " of shape ", shape_str(shape),
           " for shared variable ", label, " of type ", type, "; no shared variable was changed");
}

bool Function::accepts(std::size_t k, const Array& v) const noexcept {
  const InputSpec& s = inputs_[k];
  if (v.dtype() != s.dtype || static_cast<std::size_t>(v.ndim()) != s.shape.size() || !v.device().is_cpu())
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
  UMA_CHECK(v.device().is_cpu(), Value, s.label, ": expected an array on the CPU, got one on another device");
  UMA_CHECK(static_cast<std::size_t>(v.ndim()) == s.shape.size(), Type, s.label, ": expected ", s.shape.size(),
            "-d array, got ", v.ndim(), "-d array of shape ", shape_str(v.shape()));
  for (std::size_t i = 0; i < s.shape.size(); ++i)
    UMA_CHECK(s.shape[i] < 0 || s.shape[i] == v.shape()[i], Value, s.label, ": expected shape ", fmt_static(s.shape),
              ", got ", shape_str(v.shape()), " (axis ", i, ")");
  UMA_CHECK(allow_input_downcast_ || can_cast_safe(v.dtype(), s.dtype), Type, s.label, ": cannot cast ",
            dtype_name(v.dtype()), " to ", dtype_name(s.dtype), " safely (NumPy 'safe' casting); cast the value first");
  return ops::astype(v, s.dtype);
}

std::vector<Array> Function::operator()(std::vector<Array> inputs) const {
  UMA_CHECK(inputs.size() == inputs_.size(), Type, "function takes ", inputs_.size(), " argument(s), got ",
            inputs.size());
  for (std::size_t k = 0; k < inputs.size(); ++k)
    if (!accepts(k, inputs[k])) inputs[k] = filter_input(k, inputs[k]);
  std::vector<Array> out;
  UMA_CHECK(try_call(inputs, out), Runtime,
            "Function: a shared variable's host copy is stale (another backend wrote it last); "
            "call the function from Python, which brings it up to date");
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

bool Function::try_call(std::vector<Array>& values, std::vector<Array>& outputs) const {
  return call(values.data(), values.size(), &values, outputs, -1) == Attempt::Done;
}

bool Function::try_call(const Array* inputs, std::size_t n, std::vector<Array>& outputs) const {
  return call(inputs, n, nullptr, outputs, -1) == Attempt::Done;
}

Function::Attempt Function::try_call_now(std::vector<Array>& values, std::vector<Array>& outputs,
                                         int64_t max_elements) const {
  return call(values.data(), values.size(), &values, outputs, max_elements < 0 ? 0 : max_elements);
}

Function::Attempt Function::call(const Array* in, std::size_t n_in, std::vector<Array>* owned,
                                 std::vector<Array>& outputs, int64_t max_elements) const {
  UMA_CHECK(n_in == inputs_.size(), Type, "function takes ", inputs_.size(), " argument(s), got ", n_in);
  Unlocker locks(lock_order_);
  if (max_elements < 0) {
    locks.lock_all();  // serial order: no lock cycles
  } else if (!locks.try_lock_all()) {
    return Attempt::NotNow;  // the Unlocker releases the locks taken; nothing changed
  }
  for (const SharedCell* c : lock_order_)
    if (!c->host_current()) return Attempt::Stale;  // the Unlocker releases them; nothing changed
  if (max_elements >= 0) {
    int64_t n = 0;
    for (std::size_t i = 0; i < n_in; ++i) n += in[i].size();
    for (const auto& c : shared_) n += c->host().size();
    if (n > max_elements) return Attempt::NotNow;
  }
  if (program_->element_plan() && call_elements(in, outputs)) {
    if (owned) owned->clear();
    return Attempt::Done;
  }
  std::vector<Array> borrowed;
  if (!owned) borrowed.assign(in, in + n_in);  // the general path consumes its values
  std::vector<Array>& values = owned ? *owned : borrowed;
  values.reserve(inputs_.size() + shared_.size());
  for (const auto& c : shared_) values.push_back(c->host());
  for (std::size_t i = 0; i < lock_order_.size(); ++i)  // read: their values are immutable buffers
    if (!lock_written_[i]) locks.unlock(i);
  if (shape_check_) check_shapes(values);
  program_->run_into(values, outputs);
  // Every output is computed: check every update, then write them all at once (they read the
  // old values).
  for (std::size_t k = 0; k < updates_.size(); ++k) {
    const Array& v = outputs[n_outputs_ + k];
    check_update(k, v.dtype(), v.shape());
  }
  for (std::size_t k = 0; k < updates_.size(); ++k) shared_[updates_[k]]->write_host(std::move(outputs[n_outputs_ + k]));
  outputs.resize(n_outputs_);
  return Attempt::Done;
}

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
