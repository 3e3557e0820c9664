#include "uma/runtime/residency.h"

#include <algorithm>
#include <map>
#include <mutex>

#include "uma/error.h"
#include "uma/transfer.h"

namespace uma::runtime {

TypeSpec TypeSpec::of(const Array& a, std::string label) {
  TypeSpec t;
  t.dtype = a.dtype();
  t.shape.assign(static_cast<std::size_t>(a.ndim()), -1);
  t.label = std::move(label);
  t.text = std::string(dtype_name(a.dtype())) + " with " + std::to_string(a.ndim()) + " dimension(s)";
  return t;
}

bool TypeSpec::admits(DType d, const Shape& s) const noexcept {
  if (d != dtype || s.size() != shape.size()) return false;
  for (std::size_t i = 0; i < shape.size(); ++i)
    if (shape[i] >= 0 && shape[i] != s[i]) return false;
  return true;
}

std::optional<std::pair<std::string, Shape>> Residency::describe(const Value& v) const {
  if (!v.is_array()) return std::nullopt;
  return std::make_pair(std::string(dtype_name(v.array.dtype())), v.array.shape());
}

namespace {
// `h`, the form of `v` (a value of `r`) on device `on`, checked: defined, there, of type `t`.
Array checked_form(const Residency& r, const Value& v, const TypeSpec& t, Array h, Device on, const char* what) {
  UMA_CHECK(h.defined() && h.device() == on, Runtime, "residency ", r.name(), ": the ", what, " form of shared variable ",
            t.label, " is not an array on ", on.str());
  if (auto d = r.describe(v))
    UMA_CHECK(d->second == h.shape(), Type, "residency ", r.name(), ": output_filter gave shape ", shape_str(h.shape()),
              " for a value of shape ", shape_str(d->second), " of shared variable ", t.label);
  UMA_CHECK(h.dtype() == t.dtype && t.admits(h.dtype(), h.shape()), Type, "residency ", r.name(), ": the ", what,
            " form of shared variable ", t.label, " is ", dtype_name(h.dtype()), " of shape ", shape_str(h.shape()),
            ", not of type ", t.text);
  return h;
}
}  // namespace

Array host_form(const Residency& r, const Value& v, const TypeSpec& t) {
  return checked_form(r, v, t, r.to_host(v, t), Device::cpu(), "host");
}

Array home_form(const Residency& r, const Value& v, const TypeSpec& t) {
  return checked_form(r, v, t, r.to_home(v, t), r.home(), "device");
}

namespace {
struct ConversionTable {
  std::mutex mu;
  std::map<std::pair<std::string, std::string>, std::pair<uint64_t, uint64_t>> counts;
};

ConversionTable& conversions() {
  static ConversionTable* t = new ConversionTable;  // never destroyed: cells may convert during exit
  return *t;
}
}  // namespace

void count_conversion(const std::string& from, const std::string& to, int64_t nbytes) {
  ConversionTable& t = conversions();
  std::lock_guard<std::mutex> lock(t.mu);
  auto& c = t.counts[{from, to}];
  c.first += 1;
  c.second += static_cast<uint64_t>(std::max<int64_t>(nbytes, 0));
}

std::vector<ConversionCount> conversion_counts(bool reset) {
  ConversionTable& t = conversions();
  std::lock_guard<std::mutex> lock(t.mu);
  std::vector<ConversionCount> out;
  for (const auto& [pair, c] : t.counts) out.push_back({pair.first, pair.second, c.first, c.second});
  if (reset) t.counts.clear();
  return out;
}

namespace {
// uma's residency of one device: values are Arrays there.
class ArrayResidency final : public Residency {
 public:
  explicit ArrayResidency(Device d) : Residency(d.is_cpu() ? "cpu" : d.str()), device_(d) {}
  std::optional<Device> device() const noexcept override { return device_; }
  Device home() const noexcept override { return device_; }
  Value from_host(const Array& host, const TypeSpec&) const override { return on_device(host, device_); }
  Array to_host(const Value& v, const TypeSpec& t) const override { return uma::to_host(to_home(v, t)); }
  Value from_home(const Array& a, const TypeSpec&) const override { return a; }
  Array to_home(const Value& v, const TypeSpec& t) const override {
    UMA_CHECK(v.is_array(), Type, "residency ", name(), ": the value of ", t.label, " is not a uma array");
    return v.array;
  }

 private:
  Device device_;
};
}  // namespace

const std::shared_ptr<const Residency>& array_residency(Device d) {
  static std::mutex mu;
  static auto* made = new std::map<std::pair<int, int>, std::shared_ptr<const Residency>>();  // never freed
  std::lock_guard<std::mutex> g(mu);
  auto& r = (*made)[{static_cast<int>(d.type), d.is_cpu() ? 0 : d.index}];
  if (!r) r = std::make_shared<ArrayResidency>(d.is_cpu() ? Device::cpu() : d);
  return r;
}

const std::shared_ptr<const Residency>& host_residency() {
  static const std::shared_ptr<const Residency>& h = array_residency(Device::cpu());
  return h;
}

}  // namespace uma::runtime
