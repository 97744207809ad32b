// register_moe_sort_mxfp4(): the F5 cases, their axes, claim, compared region and bounds.
//
//   moe_sort_mxfp4/stage1   rows = tokens          (the stage-1 GEMM's activations, K = hidden)
//   moe_sort_mxfp4/stage2   rows = token*k + slot  (the stage-2 GEMM's activations, K = intermediate)
// fused: moe_sort_quant (one launch, T <= 1024), moe_sort_quant_large (four launches: count + quant
// rows + moe_buf zero, scan, scatter, word-wise scale gather), or the chain where 32-bit offsets
// would overflow. chain: sort (3 launches) -> quant rows -> scale sort.
// Claim: bitwise over the compared region. fp64 bounds: reference/moe_sort_mxfp4_ref.hpp.
#include <fmt/format.h>

#include "core/case_helpers.hpp"
#include "core/registry.hpp"
#include "kernels/moe_sort_mxfp4/moe_sort_mxfp4.hpp"
#include "kernels/moe_sort_mxfp4/moe_sort_mxfp4_inputs.hpp"
#include "reference/moe_sort_mxfp4_ref.hpp"

namespace fb {
namespace {

enum Output { kSortedIds, kSortedWeights, kExpertIds, kNumValid, kMoeBuf, kXq, kScales };

// Points whose x reaches 2^30 elements (2 GiB of bf16) run on the GPU only.
constexpr std::int64_t kCpuElementLimit = std::int64_t{1} << 30;

class MoeSortMxfp4Instance final : public CaseInstance {
 public:
  MoeSortMxfp4Instance(const MoeSortMxfp4Params& p, MoeRouting routing, MoeMask mask, Distribution d)
      : p_(p), routing_(routing), mask_(mask), dist_(d) {}

  std::vector<TensorSpec> inputs() const override {
    std::vector<TensorSpec> v{{"topk_ids", DType::i32, {{"T", p_.tokens}, {"k", p_.topk}}},
                              {"topk_weights", DType::f32, {{"T", p_.tokens}, {"k", p_.topk}}},
                              {"x", DType::bf16, {{"rows", p_.rows()}, {"K", p_.cols}}}};
    if (p_.masked) v.push_back({"expert_mask", DType::i32, {{"E", p_.experts}}});
    return v;
  }

  std::vector<TensorSpec> outputs() const override {
    const Dim entries{"P", p_.max_entries()};
    TensorSpec moe_buf{"moe_buf", DType::bf16, {{"T", p_.tokens}, {"D", p_.buf_cols}}};
    moe_buf.constant_ok = true;  // zeroed by contract
    return {{"sorted_token_ids", DType::i32, {entries}},
            {"sorted_weights", DType::f32, {entries}},
            {"sorted_expert_ids", DType::i32, {{"blocks", p_.max_blocks()}}},
            {"num_valid_ids", DType::i32, {{"i", 2}}},
            moe_buf,
            {"xq", DType::e2m1x2, {{"rows", p_.rows()}, {"K/2", p_.cols / 2}}},
            // Swizzled: byte addr(p, y) of [P rounded up to 32][K/32 rounded up to 8].
            {"scales", DType::e8m0, {{"P32", p_.scale_rows()}, {"G8", p_.scale_cols_pad()}}}};
  }

  std::vector<TensorSpec> workspace(VariantId variant) const override {
    const MoeSortQuantPath path = variant == kChain ? MoeSortQuantPath::chain : moe_sort_quant_path(p_);
    if (path == MoeSortQuantPath::one_launch) return {};
    // The chain and the four-launch path: multi-phase sort tables and per-row scales.
    return {{"chunk_counts", DType::i32, {{"chunks", p_.chunks()}, {"E", p_.experts}}},
            {"expert_info", DType::i32, {{"words", MoeExpertInfoLayout{p_.experts}.words()}}},
            {"row_scales", DType::u8, {{"rows", p_.rows()}, {"K/32", p_.scale_cols()}}}};
  }

  void generate(std::uint64_t seed, HostTensors& in) const override {
    make_moe_routing(p_, routing_, seed, in[0].data<std::int32_t>(), in[1].data<float>());
    moe_sort_validate_ids(p_, in[0].data<std::int32_t>());
    fill_tensor(in[2], dist_, seed, 7);
    auto* x = in[2].data<std::uint16_t>();
    if (dist_ == Distribution::edge) apply_mx_edge_rows(x, p_.rows(), p_.cols);
    if (dist_ == Distribution::nan) x[(p_.rows() / 2) * p_.cols + p_.cols / 3] = 0x7FC0;
    if (p_.masked) make_moe_mask(p_.experts, mask_, in[3].data<std::int32_t>());
  }

  std::string distribution_text() const override {
    return fmt::format("{}; mask {}; x {}", moe_routing_text(routing_), moe_mask_names()[static_cast<int>(mask_)],
                       dist_ == Distribution::edge ? std::string(mx_edge_rows_text) : fb::distribution_text(dist_));
  }

  void run(VariantId variant, const ExecContext& ctx, const TensorPointers& in, const TensorPointers& out,
           const TensorPointers& ws) const override {
    MoeSortMxfp4Buffers b;
    b.topk_ids = in.get<const std::int32_t>(0);
    b.topk_weights = in.get<const float>(1);
    b.x = in.get<const std::uint16_t>(2);
    b.expert_mask = p_.masked ? in.get<const std::int32_t>(3) : nullptr;
    b.sorted_token_ids = out.get<std::int32_t>(kSortedIds);
    b.sorted_weights = out.get<float>(kSortedWeights);
    b.sorted_expert_ids = out.get<std::int32_t>(kExpertIds);
    b.num_valid_ids = out.get<std::int32_t>(kNumValid);
    b.moe_buf = out.get<std::uint16_t>(kMoeBuf);
    b.xq = out.get<std::uint8_t>(kXq);
    b.scales = out.get<std::uint8_t>(kScales);
    if (!ws.items.empty()) {
      b.chunk_counts = ws.get<std::int32_t>(0);
      b.expert_info = ws.get<std::int32_t>(1);
      b.row_scales = ws.get<std::uint8_t>(2);
    }
    run_role(variant, ctx, p_, b, &moe_sort_mxfp4_fused_emu, &moe_sort_mxfp4_chain_emu,
             FB_GPU_LAUNCHER(moe_sort_mxfp4_fused_launch), FB_GPU_LAUNCHER(moe_sort_mxfp4_chain_launch));
  }

  std::vector<Fp64Check> check_fp64(const HostTensors& in, const HostTensors& out, const CheckSubset&) const override {
    const MoeSortRefProblem rp{p_.tokens, p_.topk, p_.experts, p_.block, p_.cols, p_.buf_cols,
                               p_.stage == MoeStage::stage2, p_.rule,
                               p_.masked ? in[3].data<std::int32_t>() : nullptr};
    MoeSortMxfp4Outputs o;
    o.sorted_token_ids = out[kSortedIds].data<std::int32_t>();
    o.sorted_weights = out[kSortedWeights].data<float>();
    o.sorted_expert_ids = out[kExpertIds].data<std::int32_t>();
    o.num_valid_ids = out[kNumValid].data<std::int32_t>();
    o.moe_buf = out[kMoeBuf].data<std::uint16_t>();
    o.xq = out[kXq].data<std::uint8_t>();
    o.scales = out[kScales].data<std::uint8_t>();
    o.entries = p_.max_entries();
    o.blocks = p_.max_blocks();
    o.scale_bytes = p_.scale_rows() * p_.scale_cols_pad();
    return moe_sort_mxfp4_check_fp64(rp, in[0].data<std::int32_t>(), in[1].data<float>(),
                                     in[2].data<std::uint16_t>(), o);
  }

  Work work(VariantId variant) const override {
    // Lower bounds: T*k valid entries (padding depends on the routing), each read row's scales.
    const std::int64_t pairs = p_.pairs(), rows = p_.rows();
    const std::int64_t read = pairs * 8 + rows * p_.cols * 2 + (p_.masked ? p_.experts * 4 : 0);
    const std::int64_t write = pairs * 8 + (pairs + p_.block - 1) / p_.block * 4 + 8 + p_.tokens * p_.buf_cols * 2 +
                               rows * p_.cols / 2 + pairs * p_.scale_cols();
    const MoeSortQuantPath path = variant == kChain ? MoeSortQuantPath::chain : moe_sort_quant_path(p_);
    if (path == MoeSortQuantPath::one_launch) return {read, write};
    // The chain and the four-launch path also write and re-read per-row scales, and their scale
    // sort (gather) re-reads the sorted ids: the same bytes, in one launch fewer for the fused role.
    const std::int64_t row_scales = rows * p_.scale_cols();
    return {read + row_scales + pairs * 4, write + row_scales};
  }

  int launches(VariantId variant) const override {
    const MoeSortQuantPath path = variant == kChain ? MoeSortQuantPath::chain : moe_sort_quant_path(p_);
    return path == MoeSortQuantPath::one_launch ? 1 : path == MoeSortQuantPath::four_launch ? 4 : 5;
  }

  std::string skip_reason(Backend backend) const override {
    const std::int64_t elements = std::max(p_.rows() * p_.cols, p_.tokens * p_.buf_cols);
    if (backend != Backend::cpu || elements < kCpuElementLimit) return {};
    return fmt::format("GPU only: {} elements per tensor ({:.1f} GB of bf16) are beyond a CPU emulation and fp64 check "
                       "in reasonable time and memory",
                       elements, static_cast<double>(elements) * 2e-9);
  }

  std::vector<ElementRange> compared_region(std::size_t output, const HostTensors& out) const override {
    // Claimed: num_valid_ids; ids and weights below num_valid_ids[0]; expert ids of those blocks;
    // moe_buf; all quantized rows; scales of the written 32-row tiles.
    const std::int64_t valid = std::clamp<std::int64_t>(out[kNumValid].data<std::int32_t>()[0], 0, p_.max_entries());
    switch (output) {
      case kSortedIds:
      case kSortedWeights: return {{0, valid}};
      case kExpertIds: return {{0, valid / p_.block}};
      case kScales: return {{0, (valid + 31) / 32 * 32 * p_.scale_cols_pad()}};
      default: return {};
    }
  }

 private:
  MoeSortMxfp4Params p_;
  MoeRouting routing_;
  MoeMask mask_;
  Distribution dist_;
};

std::vector<AxisSpec> moe_sort_mxfp4_axes(MoeStage stage) {
  const bool s1 = stage == MoeStage::stage1;
  return {AxisSpec::integer("T", "tokens", {}, 1, (std::int64_t{1} << 24) - 1),
          AxisSpec::integer("E", "experts (global; the mask picks the local ones)", 128, 1, 1024),
          AxisSpec::integer("k", "experts per token (top-k)", 4, 1, 255),
          AxisSpec::integer("K", s1 ? "hidden size, the quantized row width; a multiple of 32"
                                    : "intermediate size, the quantized row width; a multiple of 32",
                            s1 ? 6144 : 768, 32),
          AxisSpec::integer("D", "moe_buf row width (model dim); 0 = K", s1 ? 0 : 6144, 0),
          AxisSpec::integer("B", "sort block (the GEMM's M tile): 16, 32, 64 or 128", 32, 16, 128),
          AxisSpec::choice("scale_rule", "e8m0 scale from amax: roundup (default), even, floor (OCP)",
                           {"roundup", "even", "floor"}, "roundup"),
          AxisSpec::choice("fp4_rounding", "e2m1 rounding: rne (ties to even) or half_away", {"rne", "half_away"}, "rne"),
          AxisSpec::choice("routing", "topk_ids pattern", moe_routing_names(), "uniform"),
          AxisSpec::choice("mask", "expert mask (local experts get local ids)", moe_mask_names(), "none"),
          distribution_axis()};
}

KernelCase make_case(MoeStage stage) {
  const bool s1 = stage == MoeStage::stage1;
  KernelCase c;
  c.name = s1 ? "moe_sort_mxfp4/stage1" : "moe_sort_mxfp4/stage2";
  c.family = "moe_sort_mxfp4";
  c.fusion = "F5";
  c.summary = std::string("MoE sort + MXFP4 quant of the ") + (s1 ? "stage-1 (row = token)" : "stage-2 (row = token*k + slot)") +
              " activations with scales at sorted positions: one launch up to 1024 tokens, four above";
  c.spec = "docs/numeric-contract.md#moe-sort and #mxfp4-activation-quant";
  c.variants = fused_and_chain("moe_sort_quant (one launch, T <= 1024) or moe_sort_quant_large (four launches)",
                               "sort (3 launches) -> MXFP4 quant of every row -> scale sort", 1, 5);
  c.pairs = {{"fused", "chain", Claim::bitwise(), {}}};
  c.axes = moe_sort_mxfp4_axes(stage);
  c.make = [stage](const Point& pt) -> std::unique_ptr<CaseInstance> {
    MoeSortMxfp4Params p;
    p.tokens = pt.integer("T");
    p.experts = pt.integer("E");
    p.topk = pt.integer("k");
    p.cols = pt.integer("K");
    p.buf_cols = pt.integer("D") == 0 ? p.cols : pt.integer("D");
    p.block = pt.integer("B");
    p.stage = stage;
    const std::string& rule = pt.choice("scale_rule");
    p.rule = rule == "roundup" ? MxScaleRule::roundup : (rule == "even" ? MxScaleRule::even : MxScaleRule::floor);
    p.rounding = pt.choice("fp4_rounding") == "rne" ? Fp4Rounding::rne : Fp4Rounding::half_away;
    const MoeMask mask = moe_mask_from_name(pt.choice("mask"));
    p.masked = mask != MoeMask::none;
    if (p.block != 16 && p.block != 32 && p.block != 64 && p.block != 128)
      throw InputError(fmt::format("B={} is not one of the GEMM tiles 16, 32, 64, 128", p.block));
    moe_sort_validate_shape(p);
    const MoeRouting routing = moe_routing_from_name(pt.choice("routing"));
    if (routing == MoeRouting::multiple_of_block && p.tokens % p.block != 0)
      throw InputError(fmt::format("routing multiple_of_block needs T a multiple of B (T={}, B={})", p.tokens, p.block));
    return std::make_unique<MoeSortMxfp4Instance>(p, routing, mask, distribution_of(pt));
  };
  return c;
}

}  // namespace

void register_moe_sort_mxfp4(Registry& registry) {
  registry.add(make_case(MoeStage::stage1));
  registry.add(make_case(MoeStage::stage2));
}

}  // namespace fb
