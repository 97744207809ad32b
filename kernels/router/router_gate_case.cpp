// router/gate: the router GEMV with split-K partials and the gate, in two variants:
//   fused  GEMV (partials) -> fused gate (sums the partials in slice order, writes logits, gates);
//          at M <= 16 it may be one launch: the GEMV's last block runs the fused gate
//          (router_last_block; which form runs: router_fused_form.hpp)
//   chain  GEMV (partials) -> reduce (logits) -> gate from logits; at M <= 16 the GEMV's last block
//          does the reduce (no waiting: router_last_block), so 2 launches there
// Claim: fused = chain bitwise on every output (partials, logits, ids, weights): the two gate entry
// points agree. fp64 checks: reference/router_ref.hpp.
#include <fmt/format.h>

#include "core/case_helpers.hpp"
#include "kernels/router/router_cases.hpp"
#include "kernels/router/router_fused_form.hpp"
#include "kernels/router/router_inputs.hpp"
#include "reference/router_ref.hpp"

namespace fb {

RouterBuffers router_buffers(const TensorPointers& in, const TensorPointers& out, std::size_t first) {
  RouterBuffers b;
  b.x = in.get<const std::uint16_t>(0);
  b.w = in.get<const void>(1);
  b.bias = in.get<const float>(2);
  b.partials = out.get<float>(first);
  b.logits = out.get<float>(first + 1);
  b.topk_ids = out.get<std::int32_t>(first + 2);
  b.topk_weights = out.get<float>(first + 3);
  return b;
}

Work router_work(const RouterParams& p, bool reduce) {
  const std::int64_t me = p.rows * p.experts, partials = p.split_k * me * 4;
  Work w;
  w.read_bytes = p.rows * p.hidden * 2 + p.weight_bytes() + p.experts * 4 + partials + (reduce ? me * 4 : 0);
  w.write_bytes = partials + me * 4 + p.rows * p.topk * 8 + (reduce ? me * 4 : 0);
  w.flops = 2.0 * static_cast<double>(me) * static_cast<double>(p.hidden);
  return w;
}

namespace {

class RouterGateInstance final : public CaseInstance {
 public:
  RouterGateInstance(const RouterParams& p, Distribution d) : p_(p), dist_(d) {}

  std::vector<TensorSpec> inputs() const override { return router_input_specs(p_); }
  std::vector<TensorSpec> outputs() const override { return router_output_specs(p_, "M", dist_); }

  void generate(std::uint64_t seed, HostTensors& in) const override { router_generate_x(p_, dist_, seed, in[0]); }
  void prepare_weights(std::uint64_t seed, HostTensors& in) const override {
    router_prepare_weights(p_, dist_, seed, in[1], in[2]);
  }
  std::string distribution_text() const override {
    return dist_ == Distribution::edge ? std::string(router_edge_text) : fb::distribution_text(dist_);
  }

  void run(VariantId v, const ExecContext& ctx, const TensorPointers& in, const TensorPointers& out,
           const TensorPointers&) const override {
    run_variant<RouterParams, RouterBuffers>(v, ctx, p_, router_buffers(in, out),
                                             {{&router_fused_emu, FB_GPU_LAUNCHER(router_fused_launch)},
                                              {&router_chain_emu, FB_GPU_LAUNCHER(router_chain_launch)}});
  }

  std::vector<Fp64Check> check_fp64(const HostTensors& in, const HostTensors& out, const CheckSubset&) const override {
    RouterRefTensors t{in[0].data<std::uint16_t>(), in[1].bytes.data(), in[2].data<float>(),
                       out[1].data<float>(),        out[2].data<std::int32_t>(), out[3].data<float>()};
    return router_check_fp64(p_, t, router_unit_scale(dist_));
  }

  Work work(VariantId v) const override { return router_work(p_, v == kChain); }
  // Up to 16 rows the chain's GEMV reduces in its own last block (no reduce launch), and the fused
  // variant's one-launch form gates in the GEMV's last block (no gate launch): router_fused_form.hpp.
  int launches(VariantId v) const override {
    return v == kChain ? router_chain_launches(p_.rows) : router_fused_launches(router_fused_launch_form(p_.rows));
  }

  // The forms the GPU launchers take (the same calls); the emulation has one form per variant.
  std::string launch_config(VariantId v, Backend backend) const override {
    if (backend != Backend::gpu) return {};
    return v == kChain ? router_chain_form_text(p_.rows) : router_fused_form_text(router_fused_launch_form(p_.rows));
  }

 private:
  RouterParams p_;
  Distribution dist_;
};

}  // namespace

KernelCase router_gate_case() {
  KernelCase c;
  c.name = "router/gate";
  c.family = "router";
  c.fusion = "F3";
  c.summary = "router GEMV (split-K partials) + gate; the fused gate sums the partials itself (no reduce launch)";
  c.spec = "docs/numeric-contract.md#router-gemv-and-gate";
  c.variants = fused_and_chain("GEMV -> gate from partials (or one launch at small M: the GEMV's last block gates)",
                               "GEMV -> reduce (in the GEMV's last block at M <= 16: 2 launches there) -> gate", 2, 3);
  c.pairs = {PairClaim{"fused", "chain", Claim::bitwise(), {}}};
  c.axes = router_axes("M", 1 << 20);
  c.axes.push_back(distribution_axis());
  c.make = [](const Point& pt) -> std::unique_ptr<CaseInstance> {
    return std::make_unique<RouterGateInstance>(read_router_params(pt, "M"), distribution_of(pt));
  };
  return c;
}

}  // namespace fb
