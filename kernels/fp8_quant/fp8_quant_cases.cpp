// register_fp8_quant(): the F9 cases, per token and per 1x128, with their axes, claim and bounds.
//
//   fp8_quant/per_token   one scale per row                 fused: single pass   chain: amax -> scale+quant
//   fp8_quant/per_1x128   one scale per 128 columns         (same)
// Claim: bitwise (q bytes and scales). fp64 bounds: reference/fp8_quant_ref.hpp.
#include <fmt/format.h>

#include "core/case_helpers.hpp"
#include "core/registry.hpp"
#include "kernels/fp8_quant/fp8_quant.hpp"
#include "kernels/fp8_quant/fp8_quant_edge_rows.hpp"
#include "kernels/fp8_quant/fp8_quant_options.hpp"
#include "reference/codecs/bf16.hpp"
#include "reference/fp8_quant_ref.hpp"

namespace fb {
namespace {

class Fp8QuantInstance final : public CaseInstance {
 public:
  Fp8QuantInstance(const Fp8QuantParams& p, Distribution d) : p_(p), dist_(d) {}

  std::vector<TensorSpec> inputs() const override { return {{"x", DType::bf16, {{"M", p_.rows}, {"K", p_.cols}}}}; }

  std::vector<TensorSpec> outputs() const override { return {fp8_q_spec(p_, "M", "K"), fp8_scales_spec(p_, "M")}; }

  std::vector<TensorSpec> workspace(VariantId variant) const override {
    if (variant == kFused) return {};
    return {{"amax", DType::i32, {{"M", p_.rows}, {"G", p_.groups_per_row()}}}};
  }

  void generate(std::uint64_t seed, HostTensors& in) const override {
    fill_tensor(in[0], dist_, seed, 0);
    auto* x = in[0].data<std::uint16_t>();
    if (dist_ == Distribution::edge) apply_fp8_edge_rows(x, p_.rows, p_.cols, p_.group_size(), p_.flavour);
    if (dist_ == Distribution::nan) x[(p_.rows / 2) * p_.cols + p_.cols / 3] = 0x7FC0;
  }

  std::string distribution_text() const override {
    return dist_ == Distribution::edge ? std::string(fp8_edge_rows_text) : fb::distribution_text(dist_);
  }

  void run(VariantId variant, const ExecContext& ctx, const TensorPointers& in, const TensorPointers& out,
           const TensorPointers& ws) const override {
    Fp8QuantBuffers b;
    b.x = in.get<const std::uint16_t>(0);
    b.q = out.get<std::uint8_t>(0);
    b.scales = out.get<void>(1);
    b.amax = variant == kChain ? ws.get<std::uint32_t>(0) : nullptr;
    run_role(variant, ctx, p_, b, &fp8_quant_fused_emu, &fp8_quant_chain_emu, FB_GPU_LAUNCHER(fp8_quant_fused_launch),
             FB_GPU_LAUNCHER(fp8_quant_chain_launch));
  }

  std::vector<Fp64Check> check_fp64(const HostTensors& in, const HostTensors& out, const CheckSubset&) const override {
    Fp8QuantRefLayout layout{p_.rows, p_.cols, p_.group_size(), p_.flavour, p_.layout == ScaleLayout::k_major,
                             p_.scale_format == ScaleFormat::e8m0};
    const auto* x = in[0].data<std::uint16_t>();
    const std::int64_t cols = p_.cols;
    // The values quantized are the bf16 inputs themselves: exact in fp64, so eps = 0.
    auto row_ref = [x, cols](std::int64_t r, double* dst) {
      for (std::int64_t k = 0; k < cols; ++k) dst[k] = bf16_to_float(x[r * cols + k]);
    };
    return fp8_quant_check_fp64(layout, row_ref, out[0].data<std::uint8_t>(), out[1].bytes.data());
  }

  Work work(VariantId variant) const override {
    const std::int64_t x = p_.rows * p_.cols * 2, q = p_.rows * p_.cols;
    const std::int64_t scales = fp8_scale_bytes(p_);
    const std::int64_t amax = p_.scale_count() * 4;
    if (variant == kFused) return {x, q + scales};
    return {2 * x + amax, amax + q + scales};  // pass 1 reads x, writes amax; pass 2 reads both again
  }

 private:
  Fp8QuantParams p_;
  Distribution dist_;
};

std::vector<AxisSpec> fp8_quant_axes(bool grouped) {
  std::vector<AxisSpec> axes{AxisSpec::integer("M", "rows (tokens)"),
                             AxisSpec::integer("K", grouped ? "columns (hidden); a multiple of 128" : "columns (hidden)",
                                               6144)};
  for (AxisSpec& a : fp8_output_axes(grouped, "M", "K")) axes.push_back(std::move(a));
  axes.push_back(distribution_axis());
  return axes;
}

KernelCase make_case(Fp8Granularity granularity) {
  const bool grouped = granularity == Fp8Granularity::per_1x128;
  KernelCase c;
  c.name = grouped ? "fp8_quant/per_1x128" : "fp8_quant/per_token";
  c.family = "fp8_quant";
  c.fusion = "F9";
  c.summary = grouped ? "bf16 -> fp8 with one scale per 1x128 group, one vectorised pass"
                      : "bf16 -> fp8 with one scale per row, one vectorised pass";
  c.spec = "docs/numeric-contract.md#fp8-activation-quant";
  c.variants = fused_and_chain("one vectorised pass: amax, scale and quant per row or group",
                               "two launches: amax per group, then scale + quant", 1, 2);
  c.pairs = {{"fused", "chain", Claim::bitwise(), {}}};
  c.axes = fp8_quant_axes(grouped);
  c.make = [granularity, grouped](const Point& pt) -> std::unique_ptr<CaseInstance> {
    Fp8QuantParams p;
    p.rows = pt.integer("M");
    p.cols = pt.integer("K");
    p.granularity = granularity;
    const Fp8OutputOptions o = read_fp8_output_options(pt, grouped);
    p.flavour = o.flavour;
    p.layout = o.layout;
    p.scale_format = o.scale_format;
    if (grouped && p.cols % kFp8GroupSize != 0)
      throw InputError(fmt::format("K={} is not a multiple of the 1x128 group", p.cols));
    return std::make_unique<Fp8QuantInstance>(p, distribution_of(pt));
  };
  return c;
}

}  // namespace

void register_fp8_quant(Registry& registry) {
  registry.add(make_case(Fp8Granularity::per_token));
  registry.add(make_case(Fp8Granularity::per_1x128));
}

}  // namespace fb
