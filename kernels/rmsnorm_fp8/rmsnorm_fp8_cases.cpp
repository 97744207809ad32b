// register_rmsnorm_fp8(): the F1 cases with their axes, claim and bounds.
//
//   rmsnorm_fp8/per_token   one fp8 scale per row       fused: one pass   chain: rmsnorm -> fp8_quant
//   rmsnorm_fp8/per_1x128   one scale per 128 columns   (same)
// Claim: bitwise on every output (residual_out, q, scales, and out when bf16_out = yes).
// fp64 bounds: reference/rmsnorm_fp8_ref.hpp.
#include <string>

#include <fmt/format.h>

#include "core/case_helpers.hpp"
#include "core/registry.hpp"
#include "kernels/fp8_quant/fp8_quant_options.hpp"
#include "kernels/rmsnorm_fp8/rmsnorm_fp8.hpp"
#include "kernels/rmsnorm_fp8/rmsnorm_fp8_edge_rows.hpp"
#include "reference/rmsnorm_fp8_ref.hpp"

namespace fb {
namespace {

class RmsnormFp8Instance final : public CaseInstance {
 public:
  RmsnormFp8Instance(const RmsnormFp8Params& p, Distribution d) : p_(p), dist_(d) {}

  std::vector<TensorSpec> inputs() const override {
    std::vector<TensorSpec> in{{"x", DType::bf16, {m(), h()}}};
    if (p_.residual) in.push_back({"residual", DType::bf16, {m(), h()}});
    in.push_back({"weight", DType::bf16, {h()}});
    return in;
  }

  // Order: q, scales, then residual_out and out when present.
  std::vector<TensorSpec> outputs() const override {
    std::vector<TensorSpec> out{fp8_q_spec(p_.quant(), "M", "H"), fp8_scales_spec(p_.quant(), "M")};
    if (p_.residual) out.push_back({"residual_out", DType::bf16, {m(), h()}});
    if (p_.write_out) out.push_back({"out", DType::bf16, {m(), h()}});
    return out;
  }

  // The chain's bf16 out travels through memory: a workspace unless it is an output.
  std::vector<TensorSpec> workspace(VariantId variant) const override {
    if (variant == kFused || p_.write_out) return {};
    return {{"y", DType::bf16, {m(), h()}}};
  }

  void generate(std::uint64_t seed, HostTensors& in) const override {
    for (std::size_t i = 0; i < in.size(); ++i) fill_tensor(in[i], dist_, seed, i);
    auto* x = in[0].data<std::uint16_t>();
    std::uint16_t* residual = p_.residual ? in[1].data<std::uint16_t>() : nullptr;
    auto* weight = in.back().data<std::uint16_t>();
    if (dist_ == Distribution::edge)
      apply_rmsnorm_edge_rows(x, residual, weight, p_.rows, p_.hidden, p_.weight_offset, p_.flavour);
    if (dist_ == Distribution::nan) x[(p_.rows / 2) * p_.hidden + p_.hidden / 3] = 0x7FC0;
  }

  std::string distribution_text() const override {
    return dist_ == Distribution::edge ? std::string(rmsnorm_edge_rows_text) : fb::distribution_text(dist_);
  }

  void run(VariantId variant, const ExecContext& ctx, const TensorPointers& in, const TensorPointers& out,
           const TensorPointers& ws) const override {
    RmsnormFp8Buffers b;
    b.x = in.get<const std::uint16_t>(0);
    b.residual = p_.residual ? in.get<const std::uint16_t>(1) : nullptr;
    b.weight = in.get<const std::uint16_t>(in.items.size() - 1);
    b.q = out.get<std::uint8_t>(0);
    b.scales = out.get<void>(1);
    std::size_t next = 2;
    if (p_.residual) b.residual_out = out.get<std::uint16_t>(next++);
    if (p_.write_out)
      b.out = out.get<std::uint16_t>(next);
    else if (variant == kChain)
      b.out = ws.get<std::uint16_t>(0);
    run_role(variant, ctx, p_, b, &rmsnorm_fp8_fused_emu, &rmsnorm_fp8_chain_emu,
             FB_GPU_LAUNCHER(rmsnorm_fp8_fused_launch), FB_GPU_LAUNCHER(rmsnorm_fp8_chain_launch));
  }

  std::vector<Fp64Check> check_fp64(const HostTensors& in, const HostTensors& out, const CheckSubset&) const override {
    RmsnormRefProblem rp;
    rp.rows = p_.rows;
    rp.hidden = p_.hidden;
    rp.residual = p_.residual;
    rp.weight_offset = p_.weight_offset;
    rp.eps = p_.eps;
    rp.quant = Fp8QuantRefLayout{p_.rows, p_.hidden, p_.quant().group_size(), p_.flavour,
                                 p_.layout == ScaleLayout::k_major, p_.scale_format == ScaleFormat::e8m0};
    RmsnormRefTensors t;
    t.x = in[0].data<std::uint16_t>();
    t.residual = p_.residual ? in[1].data<std::uint16_t>() : nullptr;
    t.weight = in.back().data<std::uint16_t>();
    t.q = out[0].data<std::uint8_t>();
    t.scales = out[1].bytes.data();
    std::size_t next = 2;
    if (p_.residual) t.residual_out = out[next++].data<std::uint16_t>();
    if (p_.write_out) t.out = out[next].data<std::uint16_t>();
    return rmsnorm_fp8_check_fp64(rp, t);
  }

  // Each role's bytes, every tensor once. The chain writes y and reads it back.
  Work work(VariantId variant) const override {
    const std::int64_t mh = p_.rows * p_.hidden;
    const std::int64_t x = 2 * mh * (p_.residual ? 2 : 1) + 2 * p_.hidden;
    const std::int64_t residual_out = p_.residual ? 2 * mh : 0;
    const std::int64_t q = mh + fp8_scale_bytes(p_.quant());
    if (variant == kFused) return {x, residual_out + q + (p_.write_out ? 2 * mh : 0)};
    return {x + 2 * mh, residual_out + 2 * mh + q};
  }

 private:
  Dim m() const { return {"M", p_.rows}; }
  Dim h() const { return {"H", p_.hidden}; }

  RmsnormFp8Params p_;
  Distribution dist_;
};

std::vector<AxisSpec> rmsnorm_fp8_axes(bool grouped) {
  std::vector<AxisSpec> axes{
      AxisSpec::integer("M", "rows (tokens)"),
      AxisSpec::integer("H", grouped ? "hidden (columns); a multiple of 128" : "hidden (columns)", 6144, 1,
                        (1 << 24) - 1),
      AxisSpec::choice("residual", "add the residual first (s = x + residual, residual_out = bf16(s))", {"yes", "no"},
                       "yes"),
      AxisSpec::integer("weight_offset", "y = (s*r) * (weight_offset + w): 1 Gemma, 0 standard RMSNorm", 1, 0, 1),
      AxisSpec::choice("eps", "eps of the norm, as an fp32", {"1e-6", "1e-5"}, "1e-6")};
  for (AxisSpec& a : fp8_output_axes(grouped, "M", "H")) axes.push_back(std::move(a));
  axes.push_back(AxisSpec::choice("bf16_out", "the producer also writes the bf16 out (the router and MXFP4 quant read it)",
                       {"no", "yes"}, "no"));
  axes.push_back(distribution_axis());
  return axes;
}

KernelCase make_case(Fp8Granularity granularity) {
  const bool grouped = granularity == Fp8Granularity::per_1x128;
  KernelCase c;
  c.name = grouped ? "rmsnorm_fp8/per_1x128" : "rmsnorm_fp8/per_token";
  c.family = "rmsnorm_fp8";
  c.fusion = "F1";
  c.summary = grouped ? "Gemma RMSNorm (+residual) writing fp8 with 1x128 scales, one pass"
                      : "Gemma RMSNorm (+residual) writing fp8 with per-token scales, one pass";
  c.spec = "docs/numeric-contract.md#gemma-rmsnorm-fp8";
  c.variants = fused_and_chain("one pass: RMSNorm (+ residual) and the fp8 epilogue",
                               "RMSNorm (bf16 out) -> fp8 quant", 1, 2);
  c.pairs = {{"fused", "chain", Claim::bitwise(), {}}};
  c.axes = rmsnorm_fp8_axes(grouped);
  c.make = [granularity, grouped](const Point& pt) -> std::unique_ptr<CaseInstance> {
    RmsnormFp8Params p;
    p.rows = pt.integer("M");
    p.hidden = pt.integer("H");
    p.residual = pt.choice("residual") == "yes";
    p.weight_offset = static_cast<float>(pt.integer("weight_offset"));
    p.eps = std::stof(pt.choice("eps"));
    p.write_out = pt.choice("bf16_out") == "yes";
    p.granularity = granularity;
    const Fp8OutputOptions o = read_fp8_output_options(pt, grouped);
    p.flavour = o.flavour;
    p.layout = o.layout;
    p.scale_format = o.scale_format;
    if (grouped && p.hidden % kFp8GroupSize != 0)
      throw InputError(fmt::format("H={} is not a multiple of the 1x128 group", p.hidden));
    return std::make_unique<RmsnormFp8Instance>(p, distribution_of(pt));
  };
  return c;
}

}  // namespace

void register_rmsnorm_fp8(Registry& registry) {
  registry.add(make_case(Fp8Granularity::per_token));
  registry.add(make_case(Fp8Granularity::per_1x128));
}

}  // namespace fb
