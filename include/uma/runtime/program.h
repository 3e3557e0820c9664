// uma/runtime/program.h — a compiled straight-line program over uma arrays: what the `cpu`
// and `cuda` linkers turn a function graph into, so that a call runs no per-op Python.
//
// Slots hold values; each step reads input slots and writes one output slot. A slot's value
// is dropped after its last use (outputs excepted), so memory returns to the allocator cache
// while the program runs. Steps run on the device of their inputs: an op that makes a new
// array from another's shape (zeros_like, full_like, getitem_grad, ...) makes it on that
// array's device, so a program whose inputs and constants live on cuda:N queues every kernel
// on uma's stream of that device and never waits, except where an op's result depends on
// device data (see the ops) and in its label checks (Note [Deferred label checks]).
#pragma once
#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <shared_mutex>
#include <string>
#include <vector>

#include "uma/array.h"
#include "uma/ops.h"

namespace uma::runtime {

/// Keyword attributes of an op, named as the eager Python functions' keywords.
struct OpAttrs {
  std::optional<std::vector<int64_t>> axes;  // "axis" (reductions, squeeze): None, int or tuple
  int64_t axis = 0;                           // "axis" (concatenate, stack, expand_dims)
  bool keepdims = false;
  Shape shape;                                // reshape, broadcast_to
  std::vector<int64_t> perm;                  // transpose "axes"
  std::optional<DType> dtype;                 // astype, one_hot
  int64_t depth = 0;                          // one_hot
  std::vector<FusedInstr> fused;              // fused elementwise chains (add_fused)
  std::vector<IndexItem> index;               // getitem, getitem_grad
  std::optional<Scalar> fill_value;           // full_like
  double ddof = 0;                            // var, std
  int64_t offset = 0;                         // diag ("k"), trace ("offset")
  int64_t axis1 = 0, axis2 = 1;               // trace
  int64_t decimals = 0;                       // round
  bool check_labels = true;                   // softmax_cross_entropy(_grad): false defers the check
};

/// The inputs of one op call, read in place from the program's slots (no copy per call).
class OpArgs {
 public:
  OpArgs(const Array* const* refs, std::size_t n) : refs_(refs), n_(n) {}
  /// Input i < size() (Program::add_op checks each op's input count against OpSpec::arity).
  const Array& operator[](std::size_t i) const { return *refs_[i]; }
  std::size_t size() const { return n_; }
  /// Inputs [from, size()) as pointers (ops::ArrayRefs).
  ops::ArrayRefs refs(std::size_t from = 0) const { return ops::ArrayRefs(refs_ + from, n_ - from); }
  /// Copies of the inputs, for an op that takes a list of arrays.
  std::vector<Array> copies() const;

 private:
  const Array* const* refs_;
  std::size_t n_;
};

using OpFn = Array (*)(const OpArgs& inputs, const OpAttrs& attrs);

/// OpSpec::arity of an op that takes a list of one or more arrays (concatenate, stack).
inline constexpr int kOneOrMore = -1;

/// What an op's "axis" attribute may be: None, an int or a tuple of ints (OpAttrs::axes: the
/// reductions, squeeze); an int (OpAttrs::axis: concatenate, softmax, ...); an int or None
/// (OpAttrs::axis, with axes set where an int: cumsum, take).
enum class AxisAttr { Axes, Int, IntOrNone };

/// A registered op: its function; how many inputs it reads; the attributes it reads (their
/// names, as the eager function's keywords), those it needs, and what its "axis" may be; and
/// which inputs it reads only for their shape, dtype and device, not their values (ones_like's
/// 0, broadcast_like's 1).
struct OpSpec {
  OpFn fn = nullptr;
  int arity = 1;  // the number of inputs, or kOneOrMore
  std::vector<std::string> attrs, required;
  AxisAttr axis = AxisAttr::Axes;
  std::vector<int> shape_only;
};

/// The op registered under `name` (the eager function's name), or nullptr.
const OpSpec* find_op(const std::string& name);
/// Every registered op name.
std::vector<std::string> op_names();
/// OpSpec::shape_only of op `name`; empty for an op not registered.
const std::vector<int>& shape_inputs(const std::string& name);

// Note [Scalar programs]
// A program whose steps are all binary ops or fused elementwise chains, called with 0-d host
// arrays only (inputs and constants), runs on the elements themselves: each step computes its
// value with the one-element routine its op's small-operand fast path uses (ops::binary_one,
// ops::fused_one: bitwise the same value), into scratch on the stack; only the outputs get
// arrays (0-d, fresh, one per distinct output slot). Input and constant outputs are returned
// exactly as run() returns them. A step whose dtypes do not qualify (binary_one_dtype unset,
// a fused input of another dtype) sends the whole call to the general path before anything
// was written, so errors and results are the general path's.

// Note [Deferred label checks]
// A cross-entropy step on a cuda device that checks its labels waits for the stream (it reads
// back a status word). A program can instead queue its cross-entropy steps with
// `check_labels: false` and list each label input once with add_label_check: run() then
// checks them after every step was queued and before it returns, in the order they were
// added (one wait per call), so a bad label is the op's ValueError and the caller stores
// nothing. The checked slots (labels and the logits that give the class count) stay alive
// until then.

// Note [Lean replays]
// With lean replays on (set_lean_replay; a Program starts with them off, the cuda linker turns
// them on by default), a replay
// (Note [Program graphs]) spends less of the host's time before and after its launch:
// - its arguments' copies into the recording's buffers are one kernel launch
//   (kernels::cuda::copy_batch) instead of one cudaMemcpyAsync each;
// - a recording whose label checks all read int64 labels from arguments (its staging
//   buffers) queues each check before its launch, on a stream of its own that waits for the
//   argument copies: a one-block kernel writes its verdict into pinned host memory, and an
//   event is recorded after it. The check runs beside the step's first kernels, not before
//   them. After the launch the host waits for those events alone, so for the work queued
//   before the step (the previous calls) and the checks, not for the step itself: the call
//   returns while the GPU still runs the step, and the next call's host work overlaps it. The
//   next replay waits for a check that a failed one left before it copies arguments over its
//   labels. A verdict that reports a bad label runs the
//   deferred check (Note [Deferred label checks]), which waits for the launch and raises the
//   op's ValueError naming the label before any result is handed out. Labels computed inside
//   the step, or of another dtype, keep the deferred check after the launch.
// Results and errors are the same bit for bit as without.

// Note [Program graphs]
// With graphs on (set_graphs; the cuda linker turns them on), run_into records a run as one
// CUDA graph (Note [Captured work] in uma/memory/cuda.h) and replays it, so a call costs a
// few host calls instead of one launch, allocation and check per op. A recording belongs to
// an input signature: each input's dtype and shape, every input a C-contiguous array on one
// cuda device, and the cuda matmul precision (ops::cuda_matmul_precision). The first run of a signature runs op by op (it raises what the ops raise, and
// leaves the libraries' lazy set-up done); the second records. A recording reads its inputs
// from buffers of its own (each input is copied there on uma's stream unless it is that
// buffer; a carried value's buffer is the other recording's: Note [Carried values]) and
// writes its results into the memory it allocated while recording, which it keeps
// (results are handed out as arrays over it; intermediates are kept by the graph). A
// recording is replayed only while no array outside the program holds its results' memory:
// otherwise (a shared variable still holds last call's update) the next recording of the
// signature is used or made, up to kGraphsPerSignature; past that the run goes op by op. So a
// training step alternates between two recordings and allocates nothing. The deferred label
// checks run after the launch (one wait), before any result is handed out. A run whose work
// cannot be recorded (an op that reads device data back: take, a boolean mask, an immediate
// label check) marks its signature op by op for good. Replayed kernels are the recorded ones,
// in the same order, so results are bit for bit the op-by-op run's.

// Note [Carried values]
// A training step's update comes back as an argument of the next call: the shared variable
// holds recording A's result, which the next call (a replay of B) copies into B's buffer,
// and B's result into A's buffer on the call after (41 µs per call for a 4096 x 4096 float32
// weight on an H100). When the second recording B of a signature is made and an argument is
// one of A's results (the same array, at the start of its storage), B reads that argument
// from A's result instead of a buffer of its own, and the step making B's result of the same
// output writes it into A's buffer for that argument (Note [Placed results] in uma/array.h).
// In the steady state each replay then reads its carried arguments where the other left
// them, and copies none. A replay writes nothing that an array outside the program holds:
// - its results, only while no such array holds them (a recording is replayed only then);
// - a buffer it shares with the other recording (A's result that B reads, A's buffer that B
//   writes its result into), by an argument copy only when the argument is elsewhere and no
//   array outside holds the buffer; the recording is not replayed otherwise.
// A placement that a step's temporary took instead of its result drops B's recording, which
// is made again without that carry. Results and errors are those of separate buffers.

// Note [Steady arguments]
// An argument that a call passes at the address of the last call's argument (a fixed batch,
// the labels of a full-batch step) is read in place by the recording made then, not copied
// into a buffer of its own (14 µs a replay for a 1024 x 4096 float32 batch on an H100), when
// uma allocated its memory and may write it (not adopted, writable), no other argument shares
// its memory, and it is neither the other recording's result nor its buffer (Note [Carried
// values]). The recording holds a reference to it. A later call whose argument is elsewhere
// copies it there, as into a buffer of its own, but only while no array outside holds that
// memory: while the caller holds the old argument and passes another, the recording waits.
// If the signature's recordings all wait, with free results, and one of them for such an
// argument, both are dropped and the signature records again, copying its arguments from then
// on (at most once per signature), so a caller that changes its batch while keeping the old
// one does not run op by op for good. Replays read the same values as from a copy, so results
// are the same bits.

// Note [Fixed steps]
// A step whose value depends only on the input signature (every input a constant, a fixed
// step's value, or read only for its shape: shape_inputs) is fixed: in the mean's gradient,
// ones_like(v), its sum, 1 / that sum, its broadcast and its negation. A recording (Note
// [Program graphs]) computes the fixed steps that are not outputs once, op by op before it
// captures the others, and keeps their values: its replays launch none of their kernels (four
// of a small training step's 23). The recording learns the shapes that the fixed steps read
// from a first capture of the whole run, which it discards. The values are the same kernels'
// on the same shapes, so replays give the same bits.

// Note [Changing a program]
// A program is built (add_input, add_constant, add_op, add_fused, set_outputs,
// add_label_check) and run; several threads may run it at once. A change made while a run is
// in progress in another thread is refused (RuntimeError), not waited for: the runs hold the
// change mutex shared, a change tries it exclusively. Waiting could deadlock, since the
// Python binding runs without the GIL and a run may need it to release memory that Python
// lent, while the changing thread holds it. A Function seals the program it runs (seal()):
// its inputs and outputs are checked once, every later change is refused (ValueError), and
// its runs skip the mutex.

class Program {
 public:
  /// Recordings kept per input signature (Note [Program graphs]).
  static constexpr int kGraphsPerSignature = 2;
  /// Input signatures with recordings per program; others run op by op.
  static constexpr int kGraphSignatures = 8;
  /// Turns CUDA graphs on or off (Note [Program graphs]); drops every recording and the
  /// statistics. Safe while other threads run the program (they finish with the recordings
  /// they found).
  void set_graphs(bool on);
  bool graphs() const noexcept { return graphs_on_.load(std::memory_order_acquire); }
  /// Turns lean replays on or off (Note [Lean replays]); drops every recording and the
  /// statistics (recordings are made with the setting), as set_graphs does.
  void set_lean_replay(bool on);
  bool lean_replay() const noexcept { return lean_replay_.load(std::memory_order_relaxed); }
  /// What the graphs did so far: recordings made, runs replayed, replays whose label checks
  /// the host waited for alone (Note [Lean replays]), recordings that failed (their
  /// signatures run op by op), argument bytes replays copied into the recordings' buffers
  /// (Note [Carried values]), the steps the kept recordings computed once instead of in every
  /// replay (Note [Fixed steps]), recordings dropped because an argument they read in place
  /// could not be overwritten (Note [Steady arguments]), device bytes the recordings keep, and
  /// the last failure's reason ("" when none).
  struct GraphStats {
    int64_t recorded = 0, replayed = 0, early_checked = 0, failed = 0, copied_bytes = 0, fixed_steps = 0,
            dropped = 0;
    std::size_t kept_bytes = 0;
    std::string last_failure;
  };
  GraphStats graph_stats() const;

  /// The builders below raise RuntimeError while a run is in progress in another thread and
  /// ValueError once the program is sealed (Note [Changing a program]).
  int add_input();
  /// A slot holding `value` as it is now: a writable value is copied; the slot's array is
  /// read-only (run() returns it itself where it is an output).
  int add_constant(Array value);
  /// ValueError if the op is unknown, a slot is not yet defined, or the number of inputs is not
  /// the op's (OpSpec::arity).
  int add_op(const std::string& name, const std::vector<int>& inputs, OpAttrs attrs);
  /// A fused elementwise chain (ops::fused_elementwise) over `inputs`, all of dtype `dtype`.
  /// `head` names what computes the chain's register 0 when the chain is its epilogue: "" (none:
  /// the inputs are registers 0, 1, ...), "matmul" (inputs[0] @ inputs[1], ops::matmul_fused)
  /// or "sum" / "mean" (of inputs[0] over head_attrs' axes and keepdims, ops::reduce_fused); the
  /// other inputs are its registers 1, 2, ... ValueError for another head.
  int add_fused(const std::vector<int>& inputs, std::vector<FusedInstr> code, DType dtype, const std::string& head = "",
                OpAttrs head_attrs = {});
  void set_outputs(std::vector<int> outputs);
  /// Checks the integer labels in slot `labels` against the class count of the logits in slot
  /// `logits` (their axis 1; 0 unless 2-d) after the steps (Note [Deferred label checks]);
  /// `op` names the op in the ValueError.
  void add_label_check(int labels, int logits, std::string op);
  /// Refuses every later change (Note [Changing a program]); RuntimeError while a run is in
  /// progress in another thread. A Function calls it on its program before checking it.
  void seal() const;
  bool sealed() const noexcept { return sealed_.load(std::memory_order_acquire); }
  /// Runs the program; inputs in add_input order. TypeError on a wrong argument count.
  std::vector<Array> run(const std::vector<Array>& inputs) const;
  /// run() without copying arrays: consumes `inputs` (left empty), writes the outputs into
  /// `out` (resized). Scratch space is reused per thread, so a call allocates only what its
  /// ops allocate. Several threads may run one Program at once.
  void run_into(std::vector<Array>& inputs, std::vector<Array>& out) const;
  std::size_t num_inputs() const { return inputs_.size(); }
  std::size_t num_outputs() const { return outputs_.size(); }
  std::size_t num_steps() const { return steps_.size(); }
  std::size_t num_label_checks() const { return label_checks_.size(); }
  /// Names of the steps, in order, that a recording computes once (Note [Fixed steps]).
  std::vector<std::string> fixed_steps() const;
  /// True when run_into runs on the elements of `inputs` (Note [Scalar programs]).
  bool runs_on_elements(const std::vector<Array>& inputs) const;

  // ---- runs on elements (Note [Scalar programs]), for callers that hold no arrays --------
  static constexpr int kElementSlots = 32;  // at most this many slots
  /// One run's values: per slot its dtype and a pointer to its element (steps' values live
  /// in `value`; inputs and constants are read in place).
  struct Elements {
    DType type[kElementSlots];
    const void* ptr[kElementSlots];
    struct alignas(16) Value {
      unsigned char bytes[16];  // the widest dtype (complex128)
    } value[kElementSlots];
    /// A fresh 0-d host array holding slot `s`'s value.
    Array array(int s) const;
  };
  /// True when every step may run on elements (the dtypes of a call decide the rest).
  bool element_plan() const noexcept { return scalar_plan_; }
  /// Computes every step's value from the elements of the inputs: `ptr[i]` and `type[i]`
  /// for input i in add_input order (num_inputs() of each, 0-d host values). False, having
  /// computed nothing, when a step's dtypes do not qualify (run_into's general path then
  /// computes the call).
  bool run_elements(const void* const* ptr, const DType* type, Elements& e) const;
  /// Where output k of a run comes from: a constant (its slot), input `index`, a step (its
  /// slot), or the same slot as an earlier output `index` (an output listed twice).
  enum class Source : unsigned char { Constant, Input, Step, Repeat };
  struct OutputSource {
    Source kind;
    int slot;
    int index;
  };
  const OutputSource& output_source(std::size_t k) const { return output_sources_[k]; }
  /// The value of a constant slot.
  const Array& constant(int slot) const { return const_slots_[slot]; }
  /// Runs the program `repeat` times and returns, per step, its name and the mean wall time
  /// in nanoseconds (a profiling aid; same semantics as run()).
  std::vector<std::pair<std::string, double>> profile(const std::vector<Array>& inputs, int repeat) const;

 private:
  struct Step {
    OpFn fn;
    std::string name;
    std::vector<int> in;
    int out;
    OpAttrs attrs;
    std::vector<int> release;  // slots whose last use is this step (dropped after it)
    int binary = -1;           // a BinaryOp: run_into calls ops::binary on the slots directly
    bool scalar = false;       // a binary step, or a fused chain whose code is valid (run_scalar)
    bool fixed = false;        // its value depends on the input signature alone (Note [Fixed steps])
  };
  struct LabelCheck {
    int labels, logits;
    std::string op;
  };
  void plan_releases();
  // Note [Changing a program]: the lock a change holds (`what` names the change in the errors),
  // and the one a run holds (none once sealed).
  std::unique_lock<std::shared_mutex> change(const char* what);
  std::shared_lock<std::shared_mutex> reading() const;
  // Runs every step over `slots` (inputs placed; constants read from const_slots_), dropping
  // values after their last use; the label checks are the caller's.
  // `place`, while recording: per output slot, the storage its step's result is placed in
  // and the result's byte count (Note [Carried values]).
  struct Placement {
    int slot;
    std::shared_ptr<Storage> storage;
    std::size_t nbytes;
  };
  using Placements = std::vector<Placement>;
  // What a recording's capture does besides the steps: `place` as above; `fixed` (per slot,
  // undefined for others): the values of the fixed steps it skips (Note [Fixed steps]);
  // `shapes`: per slot, the shape, dtype and device a fixed step read there.
  struct SlotMeta {
    Shape shape;
    DType dtype;
    Device device;
    bool seen = false;
  };
  struct Capture {
    const Placements* place = nullptr;
    const std::vector<Array>* fixed = nullptr;
    std::vector<SlotMeta>* shapes = nullptr;
  };
  void run_steps(std::vector<Array>& slots, std::vector<const Array*>& args, const Capture* capture = nullptr) const;
  void mark_fixed(Step& st) const;  // Note [Fixed steps]
  bool skips(const Step& st) const;  // fixed and not an output: a recording computes it once
  // The fixed steps' values from the shapes they read (Note [Fixed steps]).
  std::vector<Array> fixed_values(const std::vector<SlotMeta>& shapes) const;
  struct GraphCache;
  struct Recording;
  bool run_graph(GraphCache& g, std::vector<Array>& inputs, std::vector<Array>& out) const;
  std::shared_ptr<GraphCache> graph_cache() const;  // graphs_, read under graphs_mu_
  void reset_graphs(bool on);                       // a new GraphCache (or none), under graphs_mu_
  // `partner`: the signature's first recording, when `r` is its second (Note [Carried values]).
  // `steady`: per input, whether it is where the last call's was (Note [Steady arguments]).
  bool record(Recording& r, const std::vector<Array>& inputs, std::string& why, Recording* partner,
              const std::vector<char>& steady) const;
  // true when the label checks were waited for alone (Note [Lean replays]); adds the bytes
  // of the argument copies to *copied
  bool replay(const Recording& r, std::vector<Array>& inputs, std::vector<Array>& out, int64_t* copied) const;
  template <class Value>
  void check_labels(const Value& value) const;  // value(slot) -> const Array&
  bool element_types(const DType* input_types, DType* type) const;
  bool run_scalar(std::vector<Array>& inputs, std::vector<Array>& out) const;
  bool compute_elements(const void* const* ptr, const DType* type, Elements& e) const;  // run_elements, unlocked
  mutable std::shared_mutex change_mu_;
  mutable std::atomic<bool> sealed_{false};
  int nslots_ = 0;
  std::vector<int> inputs_;
  std::vector<std::pair<int, Array>> constants_;
  std::vector<Array> const_slots_;  // per slot: the constant's value, undefined for other slots
  std::vector<Step> steps_;
  std::vector<int> outputs_;
  std::vector<LabelCheck> label_checks_;
  std::vector<char> take_output_;  // per output: the slot's last read among the outputs
  std::vector<OutputSource> output_sources_;  // per output
  bool scalar_plan_ = false;       // every step can run in run_scalar (Note [Scalar programs])
  // Note [Program graphs]: the recordings (null: graphs off). The pointer is swapped and read
  // under graphs_mu_; a run holds its own reference, so a swap never frees what it uses.
  std::shared_ptr<GraphCache> graphs_;
  mutable std::mutex graphs_mu_;
  std::atomic<bool> graphs_on_{false};   // graphs_ != nullptr, read without the mutex
  std::atomic<bool> lean_replay_{false};  // Note [Lean replays]
  // The slot dtypes of the first input dtypes that ran on elements (most calls repeat them):
  // written once (state 0 -> 1 -> 2), then only read.
  mutable std::atomic<int> types_state_{0};
  mutable DType types_in_[kElementSlots];
  mutable DType types_[kElementSlots];
};

}  // namespace uma::runtime
