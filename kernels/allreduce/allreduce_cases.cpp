// register_allreduce(): the TP all-reduce over simulated ranks (every rank's buffers on one device
// or on the CPU, each rank's kernels run with that rank's view of the peer pointers).
//
//   allreduce/sum   x: bf16 [R][M][H] (rank r's buffer at [r]); out: bf16 [R][M][H] (rank r's result)
// Claims: two_shot = one_shot bitwise (both: the fp32 sum in rank order, one bf16 rounding); every
// variant that has one equals its emulation bitwise; every variant is within its own derived bound
// of the fp64 sum (reference/allreduce_ref.hpp). The fp64 checks are per variant (case_checks):
// the quantized variants' bound is far wider than the exact ones', and check_fp64 cannot tell the
// variants apart.
#include <fmt/format.h>

#include <algorithm>

#include "core/case_helpers.hpp"
#include "core/checks.hpp"
#include "core/registry.hpp"
#include "kernels/allreduce/allreduce.hpp"
#include "reference/allreduce_ref.hpp"
#include "reference/codecs/bf16.hpp"

namespace fb {
namespace {

constexpr AllreduceVariant kVariants[] = {AllreduceVariant::one_shot, AllreduceVariant::two_shot,
                                          AllreduceVariant::two_shot_fp8, AllreduceVariant::two_shot_int4,
                                          AllreduceVariant::vendor};
constexpr VariantId kVendor = 4;

constexpr const char* kEdgeText =
    "edge: normal, with the first groups of every rank set to exact cancellation across ranks, all zeros, a bf16 "
    "rounding tie (1 + 2^-8), bf16 subnormals, one 2^40 outlier per group, and 2^60 - 2^60 + 1";

// The family's edge groups (each of 32 elements, as many as the buffer holds).
void apply_edge_groups(std::uint16_t* x, int ranks, std::int64_t n) {
  auto set = [&](int r, std::int64_t i, float v) {
    if (i < n) x[r * n + i] = bf16_from_float(v);
  };
  for (std::int64_t j = 0; j < kAllreduceGroup; ++j) {
    for (int r = 0; r < ranks; ++r) {
      const float base = bf16_to_float(x[j]);  // rank 0's value: the others cancel it in pairs
      set(r, j, (ranks % 2 == 1 && r == ranks - 1) ? 0.0f : (r % 2 == 0 ? base : -base));
      set(r, 32 + j, 0.0f);
      set(r, 64 + j, r == 0 ? 1.0f : (r == 1 ? 0x1.0p-8f : 0.0f));
      set(r, 96 + j, 0x1.0p-133f * static_cast<float>((j % 3) + 1) * (r % 2 ? -1.0f : 1.0f) * (j % 2 ? 1.0f : 2.0f));
      if (j == 0) set(r, 128 + j, 0x1.0p40f);
      set(r, 160 + j, r == 0 ? 0x1.0p60f : (r == 1 ? -0x1.0p60f : (r == 2 ? 1.0f : 0.0f)));
    }
  }
}

class AllreduceInstance final : public CaseInstance {
 public:
  AllreduceInstance(const AllreduceParams& p, Distribution d) : p_(p), dist_(d) {}

  std::vector<TensorSpec> inputs() const override { return {{"x", DType::bf16, dims()}}; }
  std::vector<TensorSpec> outputs() const override { return {{"out", DType::bf16, dims()}}; }

  std::vector<TensorSpec> workspace(VariantId v) const override {
    const AllreduceParams q = params(v);
    if (!allreduce_quantized(q.variant)) return {};
    const std::vector<Dim> wire{{"R", p_.ranks}, {"bytes", q.wire_bytes()}};
    const std::vector<Dim> scales{{"R", p_.ranks}, {"G", p_.groups()}};
    return {{"wire", DType::u8, wire}, {"wire_scales", DType::f32, scales}, {"gather", DType::u8, wire},
            {"gather_scales", DType::f32, scales}};
  }

  void generate(std::uint64_t seed, HostTensors& in) const override {
    fill_tensor(in[0], dist_, seed, 0);
    auto* x = in[0].data<std::uint16_t>();
    if (dist_ == Distribution::edge) apply_edge_groups(x, p_.ranks, p_.elements());
    if (dist_ == Distribution::nan) x[(p_.ranks / 2) * p_.elements() + p_.elements() / 3] = 0x7FC0;
  }

  std::string distribution_text() const override {
    return dist_ == Distribution::edge ? std::string(kEdgeText) : fb::distribution_text(dist_);
  }

  void run(VariantId v, const ExecContext& ctx, const TensorPointers& in, const TensorPointers& out,
           const TensorPointers& ws) const override {
    const AllreduceParams q = params(v);
    AllreduceSimBuffers b;
    b.x = in.get<const std::uint16_t>(0);
    b.out = out.get<std::uint16_t>(0);
    if (allreduce_quantized(q.variant)) {
      b.wire = ws.get<std::uint8_t>(0);
      b.wire_scales = ws.get<float>(1);
      b.gather = ws.get<std::uint8_t>(2);
      b.gather_scales = ws.get<float>(3);
    }
    if (q.variant == AllreduceVariant::vendor)
      throw DeviceError("allreduce/vendor runs on real ranks only (one device per rank)");
    run_variant<AllreduceParams, AllreduceSimBuffers>(0, ctx, q, b,
                                                      {{&allreduce_emu, FB_GPU_LAUNCHER(allreduce_sim_launch)}});
  }

  // Per variant, in case_checks: each variant has its own derived bound.
  std::vector<Fp64Check> check_fp64(const HostTensors&, const HostTensors&, const CheckSubset&) const override {
    return {};
  }

  std::vector<CheckResult> case_checks(const HostTensors& in, const std::vector<const HostTensors*>& outputs,
                                       const CheckSubset&) const override {
    std::vector<CheckResult> checks;
    for (VariantId v = 0; v < outputs.size(); ++v) {
      if (!outputs[v]) continue;
      for (const Fp64Check& f :
           allreduce_check_fp64(params(v), in[0].data<std::uint16_t>(), (*outputs[v])[0].data<std::uint16_t>()))
        checks.push_back(bound_check(std::string("check/fp64/") + allreduce_variant_name(kVariants[v]), f.quantity,
                                     f.stats, f.bound));
    }
    return checks;
  }

  std::string variant_skip_reason(VariantId v, Backend) const override {
    if (v == kVendor)
      return "NCCL/RCCL needs one device per rank; simulated ranks share one device (the real-rank GPU test runs "
             "the vendor variant on >= 2 GPUs)";
    return {};
  }

  Work work(VariantId v) const override {
    const std::int64_t R = p_.ranks, n = p_.elements() * 2;
    const AllreduceParams q = params(v);
    const std::int64_t wire = q.wire_bytes() + 4 * p_.groups();
    switch (q.variant) {
      case AllreduceVariant::one_shot: return {R * R * n, R * n};
      case AllreduceVariant::two_shot: return {R * n + (R - 1) * n, R * n};  // reduce-scatter, then gather
      case AllreduceVariant::two_shot_fp8:
      case AllreduceVariant::two_shot_int4: return {R * n + 2 * R * wire, (R + 1) * wire + R * n};
      case AllreduceVariant::vendor: return {R * n, R * n};
    }
    return {};
  }

  int launches(VariantId v) const override { return allreduce_sim_launches(params(v)); }

 private:
  std::vector<Dim> dims() const { return {{"R", p_.ranks}, {"M", p_.rows}, {"H", p_.hidden}}; }
  AllreduceParams params(VariantId v) const {
    AllreduceParams q = p_;
    q.variant = kVariants[v];
    return q;
  }

  AllreduceParams p_;
  Distribution dist_;
};

VariantSpec variant(std::string name, std::string summary, int launches, bool emulated = true) {
  VariantSpec v;
  v.name = std::move(name);
  v.summary = std::move(summary);
  v.launches = launches;
  v.emulation = Claim::bitwise();
  v.has_emulation = emulated;
  v.emulation_note = emulated ? "one written IEEE fp32 order (allreduce_math.hpp): rank order, per-32 groups"
                              : "a vendor library: checked against fp64 and our variants only";
  return v;
}

KernelCase make_case() {
  KernelCase c;
  c.name = "allreduce/sum";
  c.family = "allreduce";
  c.fusion = "TP";
  c.summary =
      "TP all-reduce of bf16 [M][H] over R simulated ranks (all on one device: times are the kernels' memory "
      "traffic, not a real all-reduce)";
  c.spec = "docs/numeric-contract.md#tp-all-reduce";
  c.variants = {
      variant("one_shot", "each rank reads every rank's buffer and reduces all elements (R launches)", 1),
      variant("two_shot", "reduce-scatter (rank r reduces slice r), then all-gather (2R launches)", 2),
      variant("two_shot_fp8", "two-shot over e4m3 groups of 32 with fp32 scales: quantize, reduce + requantize, "
                              "gather (3R launches)",
              3),
      variant("two_shot_int4", "two-shot over int4 groups of 32 with fp32 scales (3R launches)", 3),
      variant("vendor", "NCCL / RCCL all-reduce (real ranks only)", 1, false)};
  c.variants[kVendor].deterministic = false;
  c.pairs = {{"two_shot", "one_shot", Claim::bitwise(), {}}};
  c.axes = {AxisSpec::integer("ranks", "simulated ranks (TP size)", 4, 2, kAllreduceMaxRanks),
            AxisSpec::integer("M", "rows (tokens)"), AxisSpec::integer("H", "hidden", 6144), distribution_axis()};
  c.make = [](const Point& pt) -> std::unique_ptr<CaseInstance> {
    AllreduceParams p;
    p.ranks = static_cast<int>(pt.integer("ranks"));
    p.rows = pt.integer("M");
    p.hidden = pt.integer("H");
    return std::make_unique<AllreduceInstance>(p, distribution_of(pt));
  };
  return c;
}

}  // namespace

void register_allreduce(Registry& registry) { registry.add(make_case()); }

}  // namespace fb
