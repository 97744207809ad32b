#include "support/test_family.hpp"

#include <cmath>
#include <cstring>

#include "core/errors.hpp"
#include "core/inputs.hpp"

namespace fb::testing {
namespace {

class DoublingInstance final : public CaseInstance {
 public:
  DoublingInstance(std::int64_t n, Fault fault) : n_(n), fault_(fault) {}
  std::vector<TensorSpec> inputs() const override { return {{"x", DType::f32, {{"N", n_}}}}; }
  std::vector<TensorSpec> outputs() const override { return {{"y", DType::f32, {{"N", n_}}}}; }
  void generate(std::uint64_t seed, HostTensors& in) const override { fill_tensor(in[0], Distribution::normal, seed, 0); }
  std::string distribution_text() const override { return "normal"; }

  void run(Role role, const ExecContext& ctx, const TensorPointers& in, const TensorPointers& out,
           const TensorPointers&) const override {
    if (ctx.backend != Backend::cpu) throw DeviceError("test family runs on the CPU only");
    const float* x = in.get<const float>(0);
    float* y = out.get<float>(0);
    static int calls = 0;
    ++calls;
    for (std::int64_t i = 0; i < n_; ++i) {
      if (role == Role::fused && fault_ == Fault::skip_last_element && i == n_ - 1) continue;
      y[i] = 2.0f * x[i];
      if (role == Role::fused && fault_ == Fault::constant_output) y[i] = 1.0f;
      if (fault_ == Fault::nan_output && i == 3) y[i] = NAN;
    }
    if (role == Role::chain && fault_ == Fault::chain_off_by_one_ulp) y[5] = std::nextafter(y[5], INFINITY);
    if (role == Role::fused && fault_ == Fault::nondeterministic) y[7] += static_cast<float>(calls);
    if (role == Role::fused && fault_ == Fault::jitter && calls % 2) y[7] = std::nextafter(y[7], INFINITY);
  }

  std::vector<Fp64Check> check_fp64(const HostTensors& in, const HostTensors& out) const override {
    ErrorAccumulator acc;
    for (std::int64_t i = 0; i < n_; ++i)
      acc.add(i, out[0].data<float>()[i], 2.0 * in[0].data<float>()[i], 0);
    // An ulp of jitter is what the non-deterministic variant allows itself.
    return {{"y", acc.finish(), Bound{"err/rel/max", fault_ == Fault::jitter ? 1.2e-7 : 0.0, "doubling is exact in fp32"}}};
  }

  Traffic traffic(Role) const override { return {n_ * 4, n_ * 4}; }

 private:
  std::int64_t n_;
  Fault fault_;
};

}  // namespace

KernelCase doubling_case(Fault fault, bool deterministic) {
  KernelCase c;
  c.deterministic = deterministic;
  if (!deterministic) {
    c.claim.kind = Claim::Kind::bound;
    c.claim.bound = Bound{"err/rel_l2", 1e-6, "test: an atomic order may move single elements by an ulp"};
  }
  c.name = "test/doubling";
  c.family = "test";
  c.fusion = "T0";
  c.summary = "y = 2x";
  c.axes = {AxisSpec::integer("N", "elements", 256, 1, 1 << 20)};
  c.make = [fault](const Point& p) -> std::unique_ptr<CaseInstance> {
    if (p.integer("N") % 2) throw InputError("N=" + std::to_string(p.integer("N")) + " is odd");
    return std::make_unique<DoublingInstance>(p.integer("N"), fault);
  };
  return c;
}

}  // namespace fb::testing
