// register_swiglu_fp8(): the F2 cases with their axes, claim and bounds.
//
//   swiglu_fp8/per_token   one fp8 scale per row       fused: one pass   chain: swiglu -> fp8_quant
//   swiglu_fp8/per_1x128   one scale per 128 columns   (same)
// Claim: bitwise on every output (q, scales, and out when bf16_out = yes).
// fp64 bounds: reference/swiglu_fp8_ref.hpp.
#include <fmt/format.h>

#include "core/case_helpers.hpp"
#include "core/registry.hpp"
#include "kernels/fp8_quant/fp8_quant_options.hpp"
#include "kernels/swiglu_fp8/swiglu_fp8.hpp"
#include "kernels/swiglu_fp8/swiglu_fp8_edge_rows.hpp"
#include "reference/swiglu_fp8_ref.hpp"

namespace fb {
namespace {

class SwigluFp8Instance final : public CaseInstance {
 public:
  SwigluFp8Instance(const SwigluFp8Params& p, Distribution d) : p_(p), dist_(d) {}

  std::vector<TensorSpec> inputs() const override { return {{"gate_up", DType::bf16, {t(), {"2d", 2 * p_.d}}}}; }

  // Order: q, scales, then out when present.
  std::vector<TensorSpec> outputs() const override {
    std::vector<TensorSpec> out{fp8_q_spec(p_.quant(), "T", "d"), fp8_scales_spec(p_.quant(), "T")};
    if (p_.write_out) out.push_back({"out", DType::bf16, {t(), d()}});
    return out;
  }

  // The chain's bf16 out travels through memory: a workspace unless it is an output.
  std::vector<TensorSpec> workspace(VariantId variant) const override {
    if (variant == kFused || p_.write_out) return {};
    return {{"y", DType::bf16, {t(), d()}}};
  }

  void generate(std::uint64_t seed, HostTensors& in) const override {
    fill_tensor(in[0], dist_, seed, 0);
    auto* x = in[0].data<std::uint16_t>();
    if (dist_ == Distribution::edge) apply_swiglu_edge_rows(x, p_.rows, p_.d, p_.activation, p_.flavour);
    if (dist_ == Distribution::nan) x[(p_.rows / 2) * 2 * p_.d + p_.d / 3] = 0x7FC0;  // a gate
  }

  std::string distribution_text() const override {
    return dist_ == Distribution::edge ? std::string(swiglu_edge_rows_text) : fb::distribution_text(dist_);
  }

  void run(VariantId variant, const ExecContext& ctx, const TensorPointers& in, const TensorPointers& out,
           const TensorPointers& ws) const override {
    SwigluFp8Buffers b;
    b.gate_up = in.get<const std::uint16_t>(0);
    b.q = out.get<std::uint8_t>(0);
    b.scales = out.get<void>(1);
    if (p_.write_out)
      b.out = out.get<std::uint16_t>(2);
    else if (variant == kChain)
      b.out = ws.get<std::uint16_t>(0);
    run_role(variant, ctx, p_, b, &swiglu_fp8_fused_emu, &swiglu_fp8_chain_emu, FB_GPU_LAUNCHER(swiglu_fp8_fused_launch),
             FB_GPU_LAUNCHER(swiglu_fp8_chain_launch));
  }

  std::vector<Fp64Check> check_fp64(const HostTensors& in, const HostTensors& out, const CheckSubset&) const override {
    SwigluRefProblem rp;
    rp.rows = p_.rows;
    rp.d = p_.d;
    rp.oai = p_.activation == SwigluActivation::swiglu_oai;
    rp.quant = Fp8QuantRefLayout{p_.rows, p_.d, p_.quant().group_size(), p_.flavour, p_.layout == ScaleLayout::k_major,
                                 p_.scale_format == ScaleFormat::e8m0};
    SwigluRefTensors tensors;
    tensors.gate_up = in[0].data<std::uint16_t>();
    tensors.q = out[0].data<std::uint8_t>();
    tensors.scales = out[1].bytes.data();
    if (p_.write_out) tensors.out = out[2].data<std::uint16_t>();
    return swiglu_fp8_check_fp64(rp, tensors);
  }

  // Each role's bytes, every tensor once. The chain writes out and reads it back.
  Work work(VariantId variant) const override {
    const std::int64_t td = p_.rows * p_.d;
    const std::int64_t q = td + fp8_scale_bytes(p_.quant());
    if (variant == kFused) return {4 * td, q + (p_.write_out ? 2 * td : 0)};
    return {4 * td + 2 * td, 2 * td + q};
  }

 private:
  Dim t() const { return {"T", p_.rows}; }
  Dim d() const { return {"d", p_.d}; }

  SwigluFp8Params p_;
  Distribution dist_;
};

std::vector<AxisSpec> swiglu_fp8_axes(bool grouped) {
  std::vector<AxisSpec> axes{
      AxisSpec::integer("T", "rows (tokens)"),
      AxisSpec::integer("d", grouped ? "output columns (input 2d, gate first); a multiple of 128"
                                     : "output columns (input 2d, gate first)",
                        768),
      AxisSpec::choice("activation", "swiglu_oai: min(g,7)*sigmoid(1.702g)*(clamp(u,-7,7)+1); silu: silu(g)*u",
                       {"swiglu_oai", "silu"}, "swiglu_oai")};
  for (AxisSpec& a : fp8_output_axes(grouped, "T", "d")) axes.push_back(std::move(a));
  axes.push_back(AxisSpec::choice("bf16_out", "the producer also writes the bf16 out", {"no", "yes"}, "no"));
  axes.push_back(distribution_axis());
  return axes;
}

KernelCase make_case(Fp8Granularity granularity) {
  const bool grouped = granularity == Fp8Granularity::per_1x128;
  KernelCase c;
  c.name = grouped ? "swiglu_fp8/per_1x128" : "swiglu_fp8/per_token";
  c.family = "swiglu_fp8";
  c.fusion = "F2";
  c.summary = grouped ? "SwiGLU writing the down projection's fp8 with 1x128 scales, one pass"
                      : "SwiGLU writing the down projection's fp8 with per-token scales, one pass";
  c.spec = "docs/numeric-contract.md#swiglu-fp8";
  c.variants = fused_and_chain("one pass: SwiGLU and the fp8 epilogue", "SwiGLU (bf16 out) -> fp8 quant", 1, 2);
  c.pairs = {{"fused", "chain", Claim::bitwise(), {}}};
  c.axes = swiglu_fp8_axes(grouped);
  c.make = [granularity, grouped](const Point& pt) -> std::unique_ptr<CaseInstance> {
    SwigluFp8Params p;
    p.rows = pt.integer("T");
    p.d = pt.integer("d");
    p.activation = pt.choice("activation") == "silu" ? SwigluActivation::silu : SwigluActivation::swiglu_oai;
    p.write_out = pt.choice("bf16_out") == "yes";
    p.granularity = granularity;
    const Fp8OutputOptions o = read_fp8_output_options(pt, grouped);
    p.flavour = o.flavour;
    p.layout = o.layout;
    p.scale_format = o.scale_format;
    if (grouped && p.d % kFp8GroupSize != 0)
      throw InputError(fmt::format("d={} is not a multiple of the 1x128 group", p.d));
    return std::make_unique<SwigluFp8Instance>(p, distribution_of(pt));
  };
  return c;
}

}  // namespace

void register_swiglu_fp8(Registry& registry) {
  registry.add(make_case(Fp8Granularity::per_token));
  registry.add(make_case(Fp8Granularity::per_1x128));
}

}  // namespace fb
