// uma/runtime/residency.h — where a shared variable's copies live, and the values a compiled
// function reads, returns and stores (DESIGN.md "Shared variables: one value, many
// residencies").
//
// A residency is a place a backend keeps its values: the host ("cpu"), a device ("cuda:0"),
// or a framework's own array type ("numpy", "jax", ...). uma's own residencies hold
// uma::Arrays on their device; a backend's residency holds *native* values, references to the
// framework's arrays that the binding layer makes and releases (a NativeRef). Two residencies
// are the same residency when their names are equal.
//
// A Residency says how a value gets there from its home and back (a linker's input_filter and
// output_filter). Its home is the device whose uma::Arrays its values convert through: the host
// for most, a device for uma's device residencies and for a backend whose values live on that
// device (JAX or PyTorch on a GPU). A conversion between two residencies with the same device
// home goes through a uma::Array on that device, never through host memory; every other one
// goes through the host copy. Either way once per switch (SharedCell::read).
#pragma once
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "uma/array.h"

namespace uma::runtime {

/// A reference to a backend's own value (a NumPy array of a Python linker, a jax.Array, ...):
/// made by the binding layer, which also decides how it is released.
using NativeRef = std::shared_ptr<void>;

/// What a compiled function reads, returns and stores: a uma::Array (uma's residencies) or a
/// backend's native value. At most one of the two is set.
struct Value {
  Array array;
  NativeRef native;
  Value() = default;
  Value(Array a) : array(std::move(a)) {}  // NOLINT: an Array is a Value
  explicit Value(NativeRef n) : native(std::move(n)) {}
  bool is_array() const noexcept { return array.defined(); }
  bool defined() const noexcept { return array.defined() || native != nullptr; }
};

/// The declared type of a shared variable or an input: dtype, static shape (per axis the
/// length, or -1 for any), and how errors name it.
struct TypeSpec {
  DType dtype = DType::Float64;
  std::vector<int64_t> shape;  // size == ndim; -1: any length
  std::string label;           // e.g. "'w'" or "input 0 ('x')"
  std::string text;            // the type as errors show it, e.g. "TensorType(float64, (None,))"
  /// The spec of `a`'s dtype and ndim, every length open.
  static TypeSpec of(const Array& a, std::string label = {});
  /// True when a value of `dtype` and `shape` has this type.
  bool admits(DType dtype, const Shape& shape) const noexcept;
};

/// One residency: its name and the conversions from and to the host.
class Residency {
 public:
  virtual ~Residency() = default;
  Residency(const Residency&) = delete;
  Residency& operator=(const Residency&) = delete;

  const std::string& name() const noexcept { return name_; }
  /// The host residency, "cpu": values are uma::Arrays in host memory.
  bool is_host() const noexcept { return name_ == "cpu"; }
  /// The device of this residency's values when they are uma::Arrays (the host or a device);
  /// nullopt for a backend's native values.
  virtual std::optional<Device> device() const noexcept { return std::nullopt; }
  /// The value in this residency of `host`, a CPU array of type `t` (input_filter).
  virtual Value from_host(const Array& host, const TypeSpec& t) const = 0;
  /// A CPU array of t.dtype holding `v`, a value of this residency (output_filter).
  virtual Array to_host(const Value& v, const TypeSpec& t) const = 0;
  /// The device this residency's values convert through (see above): the host by default.
  virtual Device home() const noexcept { return Device::cpu(); }
  /// The value in this residency of `a`, an array of type `t` on home(); from_host by default.
  virtual Value from_home(const Array& a, const TypeSpec& t) const { return from_host(a, t); }
  /// An array of t.dtype on home() holding `v`, a value of this residency; to_host by default.
  virtual Array to_home(const Value& v, const TypeSpec& t) const { return to_host(v, t); }
  /// The dtype (its name; a dtype uma lacks by its own text) and shape of `v`, a value of this
  /// residency, read without converting it; nullopt when it has none. An Array's by default.
  virtual std::optional<std::pair<std::string, Shape>> describe(const Value& v) const;

 protected:
  explicit Residency(std::string name) : name_(std::move(name)) {}

 private:
  std::string name_;
};

/// r.to_host(v, t), checked: a CPU array of t.dtype, with the shape of `v` (when r can describe
/// it) and of type `t`. TypeError (RuntimeError for no host array) naming the residency and
/// t.label otherwise.
Array host_form(const Residency& r, const Value& v, const TypeSpec& t);

/// r.to_home(v, t), checked as host_form checks, but on r.home().
Array home_form(const Residency& r, const Value& v, const TypeSpec& t);

/// uma's residency of device `d` ("cpu" for the host): values are uma::Arrays on `d`; a host
/// array reaches it with one transfer (the pinned staging path), and comes back with one.
/// One object per device, for the process's life.
const std::shared_ptr<const Residency>& array_residency(Device d);

/// The host residency, array_residency(Device::cpu()).
const std::shared_ptr<const Residency>& host_residency();

/// The conversions of shared values from residency `from` to residency `to` since the process
/// started (or the counts were last reset): how many were kept, and their bytes (the host
/// copy's size, whether the conversion copied or shared memory).
struct ConversionCount {
  std::string from, to;
  uint64_t conversions = 0;
  uint64_t bytes = 0;
};

/// Counts one conversion of a shared value of `nbytes` bytes (SharedCell and Function::call
/// call it for each conversion they keep). Thread-safe.
void count_conversion(const std::string& from, const std::string& to, int64_t nbytes);

/// Every pair of residencies with a conversion counted, sorted by (from, to); `reset` sets the
/// counts back to zero after reading them.
std::vector<ConversionCount> conversion_counts(bool reset = false);

}  // namespace uma::runtime
