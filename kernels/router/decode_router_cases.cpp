// router/decode (F4, `m31_router`): the one-launch decode router for 1 to 16 tokens
// (decode_router.hpp).
//   fused  one launch: GEMV + gate + MoE sort (moe_buf zeroed by the same launch) and, in its other
//          blocks, F8: the shared expert's gate_up (fp8 [T][K] x fp8 [N][K] -> bf16 [T][N])
//   chain  GEMV (its last block reduces) -> gate -> sort (count, scan, scatter + moe_buf zeroing)
//          -> the separate F8 launch: 6 launches (5 with N = 0)
// Claim: bitwise on every output, the sort's outputs over the landed sort's compared region
// (num_valid_ids; ids and weights below num_valid_ids[0]; expert ids of those blocks; moe_buf),
// and the GEMM's bf16 output. fp64: reference/router_ref.hpp (router, and the sort against
// moe_sort_ref); the GEMM against fp8_gemm_ref within the canonical order's budget.
#include <fmt/format.h>

#include <algorithm>

#include "core/case_helpers.hpp"
#include "kernels/fp8_gemm/fp8_gemm_bounds.hpp"
#include "kernels/fp8_gemm/fp8_gemm_inputs.hpp"
#include "kernels/router/decode_router.hpp"
#include "kernels/router/router_cases.hpp"
#include "kernels/router/router_inputs.hpp"
#include "reference/fp8_gemm_ref.hpp"
#include "reference/router_ref.hpp"

namespace fb {
namespace {

enum Output { kPartials, kLogits, kIds, kWeights, kSortedIds, kSortedWeights, kExpertIds, kNumValid, kMoeBuf, kSharedC };
enum Input { kX, kW, kBias, kSharedA, kSharedAScale, kSharedB, kSharedBScale };

class DecodeRouterInstance final : public CaseInstance {
 public:
  DecodeRouterInstance(const DecodeRouterParams& p, Distribution d) : p_(p), sort_(p.sort()), dist_(d) {}

  bool has_shared() const { return p_.shared.cols > 0; }

  std::vector<TensorSpec> inputs() const override {
    std::vector<TensorSpec> v = router_input_specs(p_.router);
    if (!has_shared()) return v;
    const Dim t{"T", p_.shared.rows}, n{"N", p_.shared.cols}, k{"K", p_.shared.depth};
    TensorSpec b{"shared_b", DType::fp8_e4m3fn, {n, k}}, bs{"shared_b_scale", DType::f32, {n}};
    b.weight = bs.weight = true;
    v.push_back({"shared_a", DType::fp8_e4m3fn, {t, k}});
    v.push_back({"shared_a_scale", DType::f32, {t}});
    v.push_back(b);
    v.push_back(bs);
    return v;
  }

  std::vector<TensorSpec> outputs() const override {
    std::vector<TensorSpec> v = router_output_specs(p_.router, "T", dist_);
    const Dim entries{"P", sort_.max_entries()};
    TensorSpec moe_buf{"moe_buf", DType::bf16, {{"T", sort_.tokens}, {"D", sort_.buf_cols}}};
    moe_buf.constant_ok = true;  // zeroed by contract
    v.push_back({"sorted_token_ids", DType::i32, {entries}});
    v.push_back({"sorted_weights", DType::f32, {entries}});
    v.push_back({"sorted_expert_ids", DType::i32, {{"blocks", sort_.max_blocks()}}});
    v.push_back({"num_valid_ids", DType::i32, {{"i", 2}}});
    v.push_back(moe_buf);
    if (has_shared()) v.push_back({"shared_c", DType::bf16, {{"T", p_.shared.rows}, {"N", p_.shared.cols}}});
    return v;
  }

  std::vector<TensorSpec> workspace(VariantId v) const override {
    if (v == kFused) return {};
    return {{"chunk_counts", DType::i32, {{"chunks", sort_.chunks()}, {"E", sort_.experts}}},
            {"expert_info", DType::i32, {{"words", MoeExpertInfoLayout{sort_.experts}.words()}}}};
  }

  // F8's operands: the point's distribution (a NaN point keeps its one NaN in x: normal here).
  Distribution shared_dist() const { return dist_ == Distribution::nan ? Distribution::normal : dist_; }

  void generate(std::uint64_t seed, HostTensors& in) const override {
    router_generate_x(p_.router, dist_, seed, in[kX]);
    if (!has_shared()) return;
    fill_fp8_operand(in[kSharedA].data<std::uint8_t>(), p_.shared.rows, p_.shared.depth, shared_dist(),
                     p_.shared.flavour, seed, 10);
    fill_fp8_scales(in[kSharedAScale].data<float>(), p_.shared.rows, seed, 11);
  }
  void prepare_weights(std::uint64_t seed, HostTensors& in) const override {
    router_prepare_weights(p_.router, dist_, seed, in[kW], in[kBias]);
    if (!has_shared()) return;
    fill_fp8_operand(in[kSharedB].data<std::uint8_t>(), p_.shared.cols, p_.shared.depth, shared_dist(),
                     p_.shared.flavour, seed, 12);
    fill_fp8_scales(in[kSharedBScale].data<float>(), p_.shared.cols, seed, 13);
  }
  std::string distribution_text() const override {
    return dist_ == Distribution::edge ? std::string(router_edge_text) : fb::distribution_text(dist_);
  }

  void run(VariantId v, const ExecContext& ctx, const TensorPointers& in, const TensorPointers& out,
           const TensorPointers& ws) const override {
    DecodeRouterBuffers b;
    b.router = router_buffers(in, out);
    b.sorted_token_ids = out.get<std::int32_t>(kSortedIds);
    b.sorted_weights = out.get<float>(kSortedWeights);
    b.sorted_expert_ids = out.get<std::int32_t>(kExpertIds);
    b.num_valid_ids = out.get<std::int32_t>(kNumValid);
    b.moe_buf = out.get<std::uint16_t>(kMoeBuf);
    if (!ws.items.empty()) {
      b.chunk_counts = ws.get<std::int32_t>(0);
      b.expert_info = ws.get<std::int32_t>(1);
    }
    if (has_shared())
      b.shared = {in.get<const std::uint8_t>(kSharedA), in.get<const float>(kSharedAScale),
                  in.get<const std::uint8_t>(kSharedB), in.get<const float>(kSharedBScale),
                  out.get<std::uint16_t>(kSharedC)};
    run_variant<DecodeRouterParams, DecodeRouterBuffers>(
        v, ctx, p_, b,
        {{&decode_router_fused_emu, FB_GPU_LAUNCHER(decode_router_fused_launch)},
         {&decode_router_chain_emu, FB_GPU_LAUNCHER(decode_router_chain_launch)}});
  }

  std::vector<Fp64Check> check_fp64(const HostTensors& in, const HostTensors& out, const CheckSubset&) const override {
    RouterRefTensors t{in[0].data<std::uint16_t>(), in[1].bytes.data(),        in[2].data<float>(),
                       out[kLogits].data<float>(),  out[kIds].data<std::int32_t>(), out[kWeights].data<float>()};
    std::vector<Fp64Check> checks = router_check_fp64(p_.router, t, router_unit_scale(dist_));
    MoeSortRefProblem rp;
    rp.tokens = sort_.tokens;
    rp.topk = sort_.topk;
    rp.experts = sort_.experts;
    rp.block = sort_.block;
    rp.cols = sort_.cols;
    rp.buf_cols = sort_.buf_cols;
    MoeSortMxfp4Outputs o;
    o.sorted_token_ids = out[kSortedIds].data<std::int32_t>();
    o.sorted_weights = out[kSortedWeights].data<float>();
    o.sorted_expert_ids = out[kExpertIds].data<std::int32_t>();
    o.num_valid_ids = out[kNumValid].data<std::int32_t>();
    o.moe_buf = out[kMoeBuf].data<std::uint16_t>();
    o.entries = sort_.max_entries();
    o.blocks = sort_.max_blocks();
    for (Fp64Check& c : router_check_sort_fp64(rp, t.topk_ids, t.topk_weights, o)) checks.push_back(std::move(c));
    if (has_shared()) {
      Fp8GemmRefProblem r;
      r.rows = p_.shared.rows;
      r.cols = p_.shared.cols;
      r.depth = p_.shared.depth;
      r.flavour = p_.shared.flavour;
      r.a = in[kSharedA].data<std::uint8_t>();
      r.b = in[kSharedB].data<std::uint8_t>();
      r.block_k = p_.shared.depth;
      r.a_scale = in[kSharedAScale].data<float>();
      r.b_scale = in[kSharedBScale].data<float>();
      for (Fp64Check& c : fp8_gemm_check_fp64(r, out[kSharedC].data<std::uint16_t>(), {},
                                              canonical_beta(p_.shared.depth), canonical_beta_reason(p_.shared.depth)))
        checks.push_back(std::move(c));
    }
    return checks;
  }

  std::vector<ElementRange> compared_region(std::size_t output, const HostTensors& out) const override {
    const std::int64_t valid = std::clamp<std::int64_t>(out[kNumValid].data<std::int32_t>()[0], 0, sort_.max_entries());
    switch (output) {
      case kSortedIds:
      case kSortedWeights: return {{0, valid}};
      case kExpertIds: return {{0, valid / sort_.block}};
      default: return {};
    }
  }

  Work work(VariantId v) const override {
    Work w = router_work(p_.router, v == kChain);
    const std::int64_t pairs = sort_.pairs();
    w.read_bytes += v == kChain ? pairs * 8 : 0;  // the chain's sort reads ids and weights back
    w.write_bytes += pairs * 8 + 8 + sort_.tokens * sort_.buf_cols * 2;
    if (has_shared()) {  // F8: A, B and their scales read once, C written once
      const Fp8GemmParams& g = p_.shared;
      w.read_bytes += g.rows * g.depth + g.cols * g.depth + 4 * (g.rows + g.cols);
      w.write_bytes += 2 * g.rows * g.cols;
      w.flops += 2.0 * static_cast<double>(g.rows) * static_cast<double>(g.cols) * static_cast<double>(g.depth);
    }
    return w;
  }
  int launches(VariantId v) const override { return v == kChain ? (has_shared() ? 6 : 5) : 1; }

 private:
  DecodeRouterParams p_;
  MoeSortMxfp4Params sort_;
  Distribution dist_;
};

}  // namespace

KernelCase decode_router_case() {
  KernelCase c;
  c.name = "router/decode";
  c.family = "router";
  c.fusion = "F4";
  c.summary = "one-launch decode router (1-16 tokens): GEMV + gate + MoE sort, moe_buf zeroed, and the shared "
              "expert's fp8 gate_up (F8) in its other blocks";
  c.spec = "docs/numeric-contract.md#router-gemv-and-gate and #moe-sort";
  c.variants = fused_and_chain("one launch: GEMV items, ticket handoff, gate + sort in the last block; F8 blocks beside",
                               "GEMV (+ its own reduce) -> gate -> sort count -> scan -> scatter (+ moe_buf zero) -> F8",
                               1, 6);
  c.pairs = {PairClaim{"fused", "chain", Claim::bitwise(), {}}};
  c.axes = router_axes("T", kDecodeRouterMaxRows);
  c.axes.push_back(AxisSpec::integer("B", "sort block (the MoE GEMM's M tile)", 32, 1, 128));
  c.axes.push_back(AxisSpec::integer("D", "moe_buf row width (hidden), a multiple of 8", 6144, 0));
  c.axes.push_back(AxisSpec::integer("N", "F8: the shared expert's gate_up width (0: no shared GEMM); its K is K", 1536, 0));
  c.axes.push_back(distribution_axis());
  c.make = [](const Point& pt) -> std::unique_ptr<CaseInstance> {
    DecodeRouterParams p;
    p.router = read_router_params(pt, "T");
    p.block = pt.integer("B");
    p.buf_cols = pt.integer("D");
    p.shared = Fp8GemmParams{p.router.rows, pt.integer("N"), p.router.hidden, Fp8Flavour::e4m3fn};
    decode_router_validate(p);
    return std::make_unique<DecodeRouterInstance>(p, distribution_of(pt));
  };
  return c;
}

}  // namespace fb
