#include "support/test_family.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>

#include "core/errors.hpp"
#include "core/inputs.hpp"

namespace fb::testing {
namespace {

constexpr std::int64_t kUnit = 8;  // elements per check unit

enum : VariantId { kTwin = 2 };

class DoublingInstance final : public CaseInstance {
 public:
  DoublingInstance(std::int64_t n, Fault fault, TestCaseOptions o) : n_(n), fault_(fault), o_(o) {}
  std::vector<TensorSpec> inputs() const override {
    TensorSpec w{"w", DType::f32, {{"N", n_}}};
    w.weight = true;
    return {{"x", DType::f32, {{"N", n_}}}, w};
  }
  std::vector<TensorSpec> outputs() const override {
    std::vector<TensorSpec> o{{"y", DType::f32, {{"N", n_}}}};
    if (o_.second_output) o.push_back({"z", DType::f32, {{"N", n_}}});
    return o;
  }
  void generate(std::uint64_t seed, HostTensors& in) const override { fill_tensor(in[0], Distribution::normal, seed, 0); }
  void prepare_weights(std::uint64_t, HostTensors& in) const override {
    std::fill_n(in[1].data<float>(), n_, 2.0f);
  }
  std::string distribution_text() const override { return "normal"; }

  void run(VariantId v, const ExecContext& ctx, const TensorPointers& in, const TensorPointers& out,
           const TensorPointers&) const override {
    if (ctx.backend != Backend::cpu) throw DeviceError("test family runs on the CPU only");
    compute(v, in.get<const float>(0), in.get<const float>(1), out.get<float>(0), 0, n_);
    copy_z(v, in.get<const float>(0), o_.second_output ? out.get<float>(1) : nullptr, 0, n_);
  }

  std::vector<Fp64Check> check_fp64(const HostTensors& in, const HostTensors& out, const CheckSubset& s) const override {
    ErrorAccumulator acc;
    for (std::int64_t i = 0; i < n_; ++i)
      if (s.covers(i / kUnit)) acc.add(i, out[0].data<float>()[i], 2.0 * in[0].data<float>()[i], 0);
    // An ulp of jitter is what the non-deterministic variant allows itself.
    return {{"y", acc.finish(), Bound{"err/rel/max", fault_ == Fault::jitter ? 1.2e-7 : 0.0, "doubling is exact in fp32"}}};
  }

  Work work(VariantId) const override { return {n_ * 8, n_ * 4, static_cast<double>(n_)}; }

  std::int64_t check_units() const override { return o_.check_cost_per_element > 0 ? (n_ + kUnit - 1) / kUnit : 0; }
  double check_cost() const override { return o_.check_cost_per_element * static_cast<double>(n_); }
  void emulate_subset(VariantId v, const HostTensors& in, HostTensors& out, const CheckSubset& s) const override {
    for (std::int64_t u : s.units) {
      compute(v, in[0].data<float>(), in[1].data<float>(), out[0].data<float>(), u * kUnit,
              std::min(n_, (u + 1) * kUnit));
      copy_z(v, in[0].data<float>(), o_.second_output ? out[1].data<float>() : nullptr, u * kUnit,
             std::min(n_, (u + 1) * kUnit));
    }
  }
  std::vector<ElementRange> subset_region(std::size_t, const CheckSubset& s) const override {
    std::vector<ElementRange> r;
    for (std::int64_t u : s.units) r.push_back({u * kUnit, std::min(n_, (u + 1) * kUnit)});
    return r;
  }

 private:
  // z = x, written by fused and chain only (the twin leaves it: see TestCaseOptions::second_output).
  static void copy_z(VariantId v, const float* x, float* z, std::int64_t begin, std::int64_t end) {
    if (z == nullptr || v == kTwin) return;
    std::copy(x + begin, x + end, z + begin);
  }
  void compute(VariantId v, const float* x, const float* w, float* y, std::int64_t begin, std::int64_t end) const {
    static int calls = 0;
    ++calls;
    for (std::int64_t i = begin; i < end; ++i) {
      if (v == kFused && fault_ == Fault::skip_last_element && i == n_ - 1) continue;
      y[i] = w[i] * x[i];
      if (v == kFused && fault_ == Fault::constant_output) y[i] = 1.0f;
      if (fault_ == Fault::nan_output && i == 3) y[i] = NAN;
    }
    auto in_range = [&](std::int64_t i) { return i >= begin && i < end; };
    if (v == kChain && fault_ == Fault::chain_off_by_one_ulp && in_range(5)) y[5] = std::nextafter(y[5], INFINITY);
    if (v == kTwin && fault_ == Fault::twin_off_by_one_ulp && in_range(5)) y[5] = std::nextafter(y[5], INFINITY);
    if (v == kFused && fault_ == Fault::nondeterministic && in_range(7)) y[7] += static_cast<float>(calls);
    if (v == kFused && fault_ == Fault::jitter && calls % 2 && in_range(7)) y[7] = std::nextafter(y[7], INFINITY);
  }

  std::int64_t n_;
  Fault fault_;
  TestCaseOptions o_;
};

}  // namespace

KernelCase doubling_case(Fault fault, bool deterministic) {
  TestCaseOptions o;
  o.deterministic = deterministic;
  return doubling_case(fault, o);
}

KernelCase doubling_case(Fault fault, const TestCaseOptions& o) {
  KernelCase c;
  c.name = "test/doubling";
  c.family = "test";
  c.fusion = "T0";
  c.summary = "y = w * x with w = 2";
  c.spec = "tests/support/test_family.hpp";
  c.variants = fused_and_chain("y = w * x", "y = w * x, separately");
  Claim claim = Claim::bitwise();
  if (!o.deterministic) {
    claim = Claim::within(Bound{"err/rel_l2", 1e-6, "test: an atomic order may move single elements by an ulp"});
    c.variants[kFused].deterministic = false;
    c.variants[kFused].emulation = claim;
    c.variants[kFused].emulation_note = "an atomic order is the device's own";
  }
  c.pairs = {{"fused", "chain", claim, {}}};
  if (o.third_variant) {
    VariantSpec twin;
    twin.name = "twin";
    twin.summary = "y = w * x, a third way";
    if (o.second_output && o.twin_declares_writes) twin.writes = {"y"};
    c.variants.push_back(twin);
    c.pairs.push_back({"twin", "fused", Claim::bitwise(), o.second_output ? std::vector<std::string>{"y"} : std::vector<std::string>{}});
  }
  c.axes = {AxisSpec::integer("N", "elements", 256, 1, 1 << 20)};
  c.make = [fault, o](const Point& p) -> std::unique_ptr<CaseInstance> {
    if (p.integer("N") % 2) throw InputError("N=" + std::to_string(p.integer("N")) + " is odd");
    return std::make_unique<DoublingInstance>(p.integer("N"), fault, o);
  };
  return c;
}

}  // namespace fb::testing
