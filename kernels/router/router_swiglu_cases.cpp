// router/gate_swiglu (F3): the router and the shared expert's SwiGLU -> fp8 (router_swiglu.hpp).
//   fused  one launch: router GEMV items + F2 producer blocks; then the fused gate. 2 launches.
//   chain  GEMV, reduce, gate, then the landed F2 launch. 4 launches.
// Claim: bitwise on every output. fp64: reference/router_ref.hpp and reference/swiglu_fp8_ref.hpp.
#include <fmt/format.h>

#include "core/case_helpers.hpp"
#include "kernels/fp8_quant/fp8_quant_options.hpp"
#include "kernels/router/router_cases.hpp"
#include "kernels/router/router_inputs.hpp"
#include "kernels/router/router_swiglu.hpp"
#include "reference/router_ref.hpp"
#include "reference/swiglu_fp8_ref.hpp"

namespace fb {
namespace {

enum Input { kX, kW, kBias, kGateUp };
enum Output { kPartials, kLogits, kIds, kWeights, kQ, kScales };

class RouterSwigluInstance final : public CaseInstance {
 public:
  RouterSwigluInstance(const RouterSwigluParams& p, Distribution d) : p_(p), dist_(d) {}

  std::vector<TensorSpec> inputs() const override {
    std::vector<TensorSpec> v = router_input_specs(p_.router);
    v.push_back({"gate_up", DType::bf16, {{"T", p_.swiglu.rows}, {"2d", 2 * p_.swiglu.d}}});
    return v;
  }

  std::vector<TensorSpec> outputs() const override {
    std::vector<TensorSpec> v = router_output_specs(p_.router, "T", dist_);
    v.push_back(fp8_q_spec(p_.swiglu.quant(), "T", "d"));
    v.push_back(fp8_scales_spec(p_.swiglu.quant(), "T"));
    return v;
  }

  void generate(std::uint64_t seed, HostTensors& in) const override {
    router_generate_x(p_.router, dist_, seed, in[kX]);
    // gate_up from its own stream; NaN only in x (the router's NaN case), edge rows only in x.
    fill_tensor(in[kGateUp], dist_ == Distribution::uniform ? dist_ : Distribution::normal, seed, 3);
  }
  void prepare_weights(std::uint64_t seed, HostTensors& in) const override {
    router_prepare_weights(p_.router, dist_, seed, in[kW], in[kBias]);
  }
  std::string distribution_text() const override {
    return (dist_ == Distribution::edge ? std::string(router_edge_text) : fb::distribution_text(dist_)) +
           "; gate_up normal";
  }

  void run(VariantId v, const ExecContext& ctx, const TensorPointers& in, const TensorPointers& out,
           const TensorPointers&) const override {
    RouterSwigluBuffers b;
    b.router = router_buffers(in, out);
    b.swiglu.gate_up = in.get<const std::uint16_t>(kGateUp);
    b.swiglu.q = out.get<std::uint8_t>(kQ);
    b.swiglu.scales = out.get<void>(kScales);
    run_variant<RouterSwigluParams, RouterSwigluBuffers>(
        v, ctx, p_, b,
        {{&router_swiglu_fused_emu, FB_GPU_LAUNCHER(router_swiglu_fused_launch)},
         {&router_swiglu_chain_emu, FB_GPU_LAUNCHER(router_swiglu_chain_launch)}});
  }

  std::vector<Fp64Check> check_fp64(const HostTensors& in, const HostTensors& out, const CheckSubset&) const override {
    RouterRefTensors t{in[kX].data<std::uint16_t>(), in[kW].bytes.data(),       in[kBias].data<float>(),
                       out[kLogits].data<float>(),   out[kIds].data<std::int32_t>(), out[kWeights].data<float>()};
    std::vector<Fp64Check> checks = router_check_fp64(p_.router, t, router_unit_scale(dist_));
    const SwigluFp8Params& s = p_.swiglu;
    SwigluRefProblem rp;
    rp.rows = s.rows;
    rp.d = s.d;
    rp.oai = true;
    rp.quant = Fp8QuantRefLayout{s.rows, s.d, s.quant().group_size(), s.flavour, s.layout == ScaleLayout::k_major,
                                 s.scale_format == ScaleFormat::e8m0};
    SwigluRefTensors st;
    st.gate_up = in[kGateUp].data<std::uint16_t>();
    st.q = out[kQ].data<std::uint8_t>();
    st.scales = out[kScales].bytes.data();
    for (Fp64Check& c : swiglu_fp8_check_fp64(rp, st)) {
      c.quantity = "shared_expert/" + c.quantity;
      checks.push_back(std::move(c));
    }
    return checks;
  }

  Work work(VariantId v) const override {
    Work w = router_work(p_.router, v == kChain);
    const std::int64_t td = p_.swiglu.rows * p_.swiglu.d;
    w.read_bytes += 4 * td;
    w.write_bytes += td + fp8_scale_bytes(p_.swiglu.quant());
    return w;
  }
  int launches(VariantId v) const override {
    return v == kChain && p_.router.rows <= kRouterReduceLaunchRows ? 3 : 0;
  }

 private:
  RouterSwigluParams p_;
  Distribution dist_;
};

}  // namespace

KernelCase router_swiglu_case() {
  KernelCase c;
  c.name = "router/gate_swiglu";
  c.family = "router";
  c.fusion = "F3";
  c.summary = "router GEMV partials + the shared expert's SwiGLU -> fp8 in one launch; the gate sums the partials";
  c.spec = "docs/numeric-contract.md#router-gemv-and-gate and #swiglu-fp8";
  c.variants = fused_and_chain("GEMV items + F2 blocks in one launch -> gate from partials",
                               "GEMV -> reduce (in the GEMV at T <= 16) -> gate -> F2 (swiglu_fp8 fused launch)", 2, 4);
  c.pairs = {PairClaim{"fused", "chain", Claim::bitwise(), {}}};
  c.axes = router_axes("T", 1 << 20);
  c.axes.push_back(AxisSpec::integer("d", "shared expert's intermediate columns (gate_up holds 2d); a multiple of 8", 768, 8));
  c.axes.push_back(AxisSpec::choice("quant", "fp8 scales per token or per 1x128 group", {"per_token", "per_1x128"},
                                    "per_token"));
  for (AxisSpec& a : fp8_output_axes(true, "T", "d")) c.axes.push_back(std::move(a));
  c.axes.push_back(distribution_axis());
  c.make = [](const Point& pt) -> std::unique_ptr<CaseInstance> {
    RouterSwigluParams p;
    p.router = read_router_params(pt, "T");
    SwigluFp8Params& s = p.swiglu;
    s.rows = p.router.rows;
    s.d = pt.integer("d");
    s.granularity = pt.choice("quant") == "per_1x128" ? Fp8Granularity::per_1x128 : Fp8Granularity::per_token;
    const Fp8OutputOptions o = read_fp8_output_options(pt, s.granularity == Fp8Granularity::per_1x128);
    s.flavour = o.flavour;
    s.layout = o.layout;
    s.scale_format = o.scale_format;
    router_swiglu_validate(p);
    return std::make_unique<RouterSwigluInstance>(p, distribution_of(pt));
  };
  return c;
}

}  // namespace fb
