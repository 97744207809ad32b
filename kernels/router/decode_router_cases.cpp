// router/decode (F4, `m31_router`): the one-launch decode router for 1 to 16 tokens
// (decode_router.hpp).
//   fused  one launch: GEMV + gate + MoE sort (moe_buf zeroed by the same launch)
//   chain  GEMV (its last block reduces) -> gate -> sort (count, scan, scatter + moe_buf zeroing): 5 launches
// Claim: bitwise on every output, the sort's outputs over the landed sort's compared region
// (num_valid_ids; ids and weights below num_valid_ids[0]; expert ids of those blocks; moe_buf).
// fp64: reference/router_ref.hpp (router, and the sort against moe_sort_ref).
#include <fmt/format.h>

#include <algorithm>

#include "core/case_helpers.hpp"
#include "kernels/router/decode_router.hpp"
#include "kernels/router/router_cases.hpp"
#include "kernels/router/router_inputs.hpp"
#include "reference/router_ref.hpp"

namespace fb {
namespace {

enum Output { kPartials, kLogits, kIds, kWeights, kSortedIds, kSortedWeights, kExpertIds, kNumValid, kMoeBuf };

class DecodeRouterInstance final : public CaseInstance {
 public:
  DecodeRouterInstance(const DecodeRouterParams& p, Distribution d) : p_(p), sort_(p.sort()), dist_(d) {}

  std::vector<TensorSpec> inputs() const override { return router_input_specs(p_.router); }

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
    return v;
  }

  std::vector<TensorSpec> workspace(VariantId v) const override {
    if (v == kFused) return {};
    return {{"chunk_counts", DType::i32, {{"chunks", sort_.chunks()}, {"E", sort_.experts}}},
            {"expert_info", DType::i32, {{"words", MoeExpertInfoLayout{sort_.experts}.words()}}}};
  }

  void generate(std::uint64_t seed, HostTensors& in) const override { router_generate_x(p_.router, dist_, seed, in[0]); }
  void prepare_weights(std::uint64_t seed, HostTensors& in) const override {
    router_prepare_weights(p_.router, dist_, seed, in[1], in[2]);
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
    return w;
  }

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
  c.summary = "one-launch decode router (1-16 tokens): GEMV + gate + MoE sort, moe_buf zeroed";
  c.spec = "docs/numeric-contract.md#router-gemv-and-gate and #moe-sort";
  c.variants = fused_and_chain("one launch: GEMV items, ticket handoff, gate + sort in the last block",
                               "GEMV (+ its own reduce) -> gate -> sort count -> scan -> scatter (+ moe_buf zero)", 1, 5);
  c.pairs = {PairClaim{"fused", "chain", Claim::bitwise(), {}}};
  c.axes = router_axes("T", kDecodeRouterMaxRows);
  c.axes.push_back(AxisSpec::integer("B", "sort block (the MoE GEMM's M tile)", 32, 1, 128));
  c.axes.push_back(AxisSpec::integer("D", "moe_buf row width (hidden), a multiple of 8", 6144, 0));
  c.axes.push_back(distribution_axis());
  c.make = [](const Point& pt) -> std::unique_ptr<CaseInstance> {
    DecodeRouterParams p;
    p.router = read_router_params(pt, "T");
    p.block = pt.integer("B");
    p.buf_cols = pt.integer("D");
    decode_router_validate(p);
    return std::make_unique<DecodeRouterInstance>(p, distribution_of(pt));
  };
  return c;
}

}  // namespace fb
