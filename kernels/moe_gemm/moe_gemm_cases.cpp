// register_moe_gemm(): the MoE MXFP4 GEMM cases, their variants, claims and check budget.
//
//   moe_gemm/stage1        gather rows by sorted ids, xq (MXFP4) x W13 (MXFP4), SwiGLU -> bf16
//                          a1 [T*k][I]. Variants exact (matrix units), plain (CUDA cores) and
//                          fast (row-rescaled operands, 128-K matrix-unit partials: not bitwise).
//   moe_gemm/stage2        a2q (MXFP4) x W2 (MXFP4) -> w * y per pair, slot-ordered sum -> bf16
//                          out [T][K]. Variants exact, plain and fast.
//   moe_gemm/shared_fold   F6: stage 2 with the shared expert's bf16 output. Variants fold (joins
//                          the fp32 sum) and chain (reduce to bf16, then a second add and rounding).
// Every variant is deterministic; exact, plain, fold and chain equal their CPU emulation bitwise (the
// block sums are exact integers, the promotion and the sums have one written order), fast is within
// a derived bound of its emulation. Pair claims: exact = plain bitwise; fast within a derived rel L2
// of exact; fold within rel L2 1e-2 of chain; case check: fold's fp64 error no worse than chain's.
// fp64 bounds: reference/moe_gemm_ref.hpp. Check unit: a token (its k rows of a1, its row of out).
#include <fmt/format.h>

#include <cmath>

#include "core/case_helpers.hpp"
#include "core/registry.hpp"
#include "kernels/fp8_gemm/fp8_gemm_bounds.hpp"
#include "kernels/moe_gemm/moe_gemm.hpp"
#include "kernels/moe_gemm/moe_gemm_inputs.hpp"
#include "kernels/moe_gemm/moe_gemm_decode.hpp"
#include "kernels/moe_gemm/moe_gemm_mfma.hpp"
#include "kernels/moe_gemm/moe_gemm_wgmma.hpp"
#include "kernels/moe_gemm/moe_gemm_wgmma_plan.hpp"
#include "reference/moe_gemm_ref.hpp"

namespace fb {
namespace {

enum class MoeGemmKind { stage1, stage2, shared_fold };

// Beyond this many multiply-adds per emulated variant the CPU backend does not run a point (the
// GPU backend still checks a seeded subset of tokens on the CPU).
constexpr double kCpuMacLimit = 0x1.0p36;
constexpr double kCpuWeightLimit = 0x1.0p26;

// The variants of stage 1 and stage 2, in their registered order.
enum MoeVariant : VariantId { kExact, kPlain, kFast };

// fast's relative error per dot product (reference/moe_gemm_ref.hpp "fast dot", without the dropped
// blocks): 2^-11 per 128-K matrix-unit partial (the fp8 GEMMs' model of Hopper's accumulation),
// gamma over the partials, two scalings. exact's: gamma over the 32-K blocks.
double fast_beta(std::int64_t inner) {
  return compose_rel(compose_rel(matrix_unit_block_rel(), gamma_rel((inner + 127) / 128)), epilogue_rel());
}
double exact_beta(std::int64_t inner) { return gamma_rel(inner / 32); }
// Two results with dot errors beta_x and beta_y, against each other as a relative L2 norm
// (pair_rel_l2: sqrt(inner) for sum |products| over |dot|, two bf16 roundings), times what the case
// does after the dot products: stage 1's SwiGLU (a relative error of the gate passes at most
// 1 + max g (1 - sigmoid(g)) = 1.28 times where outputs are large, the up's once, and small gates
// weigh about 1.9x against their outputs: 3 in all), stage 2's slot sum (sum over k slots of
// |w y| against |sum w y|: sqrt(k) for independent signs). Assumptions like pair_rel_l2's, stated
// in the README.
double moe_pair_rel_l2(bool stage1, double beta_x, double beta_y, std::int64_t inner, std::int64_t topk) {
  return pair_rel_l2(beta_x, beta_y, inner) * (stage1 ? 3.0 : std::sqrt(static_cast<double>(topk)));
}
// The claims hold up to these sizes (the bounds grow with them): stage 1's K, stage 2's I, and k.
constexpr std::int64_t kFastBoundTopk = 8;
std::int64_t fast_bound_inner(bool stage1) { return stage1 ? 8192 : 2048; }

// Input order of the stage-2 cases (stage 1 has no sorted_weights and no shared output).
enum Stage2Input { kIds, kWeights, kExpertIds, kNumValid, kA2q, kA2Scales, kW2, kW2Scales, kShared };
enum Stage1Input { kS1Ids, kS1ExpertIds, kS1NumValid, kXq, kXScales, kW13, kW13Scales };

// Expected number of experts that receive at least one token (the weights a launch must read).
double expected_active_experts(const MoeGemmParams& p, MoeRouting routing) {
  const double T = static_cast<double>(p.tokens), k = static_cast<double>(p.topk), E = static_cast<double>(p.experts);
  switch (routing) {
    case MoeRouting::one_expert:
      return p.experts == 1 ? 1.0 : 1.0 + (E - 1.0) * (1.0 - std::pow(1.0 - (k - 1.0) / (E - 1.0), T));
    case MoeRouting::empty_experts: {
      const double active = std::max(k, std::floor((E + 3.0) / 4.0));
      return active * (1.0 - std::pow(1.0 - k / active, T));
    }
    default: return E * (1.0 - std::pow(1.0 - k / E, T));
  }
}

std::vector<std::uint8_t> token_mask(const MoeGemmParams& p, const CheckSubset& subset) {
  std::vector<std::uint8_t> mask(static_cast<std::size_t>(p.tokens), subset.full ? 1 : 0);
  if (!subset.full)
    for (std::int64_t t : subset.units) mask[static_cast<std::size_t>(t)] = 1;
  return mask;
}

class MoeGemmInstance final : public CaseInstance {
 public:
  MoeGemmInstance(MoeGemmKind kind, const MoeGemmParams& p, MoeRouting routing, Distribution d)
      : kind_(kind), p_(p), routing_(routing), dist_(d) {}

  bool stage1() const { return kind_ == MoeGemmKind::stage1; }
  std::int64_t inner() const { return stage1() ? p_.hidden : p_.inter; }
  // Whether variant v gets the staged token rows: every variant but plain, where the wgmma engine
  // tiles the shape (it still takes the launch only from its threshold of pairs on, on sm_90a).
  bool stages_tokens(VariantId v) const {
    const bool plain = kind_ != MoeGemmKind::shared_fold && v == kPlain;
    return !plain && moe_wgmma_tiles(p_, stage1());
  }
  // Whether it also gets the staged weight rows (E x rows x K bytes: 1.2 GB at stage 1 of the m31
  // shapes): only where the engine will stage them (GPU builds, sm_90a, moe_wgmma_stages_weights).
  bool stages_weights(VariantId v) const {
#if FUSEBENCH_HAS_GPU
    return stages_tokens(v) && moe_wgmma_stages_weights(params(v), stage1());
#else
    (void)v;
    return false;
#endif
  }

  std::vector<TensorSpec> inputs() const override {
    const Dim entries{"P", p_.max_entries()}, blocks{"blocks", p_.max_blocks()};
    const std::int64_t E = p_.experts, K = p_.hidden, I = p_.inter;
    if (stage1()) {
      TensorSpec w13{"w13", DType::e2m1x2, {{"E*2I", E * 2 * I}, {"K/2", K / 2}}};
      TensorSpec w13_s{"w13_scales", DType::e8m0, {{"E*2I", E * 2 * I}, {"K/32", K / 32}}};
      w13.weight = w13_s.weight = true;
      return {{"sorted_token_ids", DType::i32, {entries}},
              {"sorted_expert_ids", DType::i32, {blocks}},
              {"num_valid_ids", DType::i32, {{"i", 2}}},
              {"xq", DType::e2m1x2, {{"T", p_.tokens}, {"K/2", K / 2}}},
              {"x_scales", DType::e8m0, {{"P32", p_.scale_rows()}, {"G8", p_.hidden_blocks_pad()}}},
              w13,
              w13_s};
    }
    TensorSpec w2{"w2", DType::e2m1x2, {{"E*K", E * K}, {"I/2", I / 2}}};
    TensorSpec w2_s{"w2_scales", DType::e8m0, {{"E*K", E * K}, {"I/32", I / 32}}};
    w2.weight = w2_s.weight = true;
    std::vector<TensorSpec> v{{"sorted_token_ids", DType::i32, {entries}},
                              {"sorted_weights", DType::f32, {entries}},
                              {"sorted_expert_ids", DType::i32, {blocks}},
                              {"num_valid_ids", DType::i32, {{"i", 2}}},
                              {"a2q", DType::e2m1x2, {{"T*k", p_.pairs()}, {"I/2", I / 2}}},
                              {"a2_scales", DType::e8m0, {{"P32", p_.scale_rows()}, {"G8", p_.inter_blocks_pad()}}},
                              w2,
                              w2_s};
    if (kind_ == MoeGemmKind::shared_fold) v.push_back({"shared_out", DType::bf16, {{"T", p_.tokens}, {"K", K}}});
    return v;
  }

  std::vector<TensorSpec> outputs() const override {
    if (stage1()) return {{"a1", DType::bf16, {{"T*k", p_.pairs()}, {"I", p_.inter}}}};
    return {{"out", DType::bf16, {{"T", p_.tokens}, {"K", p_.hidden}}}};
  }

  // stage 2: y; the matrix-unit variants at shapes the wgmma engine tiles: the staged token rows.
  std::vector<TensorSpec> workspace(VariantId v) const override {
    std::vector<TensorSpec> ws;
    if (!stage1()) ws.push_back({"y", DType::f32, {{"T*k", p_.pairs()}, {"K", p_.hidden}}});
    if (stages_tokens(v))
      ws.push_back({"token_stage", DType::u8, {{"bytes", MoeTokenStageLayout{p_.max_entries(), inner()}.bytes()}}});
    if (stages_weights(v)) ws.push_back({"weight_stage", DType::u8, {{"bytes", moe_weight_stage_layout(p_, stage1()).bytes()}}});
    return ws;
  }

  // The engine a variant's launch takes on the GPU: "wgmma decode" (the decode engine, below the
  // prefill engine's threshold: moe_decode_takes); where the shape lets the prefill engine tile it,
  // "wgmma" with its prologues ("tokens staged", "weights staged": FUSEBENCH_MOE_TOKEN_STAGE,
  // FUSEBENCH_MOE_WEIGHT_STAGE or the default rule), or "warp kernels" (the mma.sync kernels) below
  // the threshold of routed pairs (FUSEBENCH_MOE_WGMMA_MIN_PAIRS) or on a device without sm_90a;
  // "mfma" on AMD where FUSEBENCH_MOE_MFMA=1 runs the integer-MFMA engine (moe_gemm_mfma.hpp).
  std::string launch_config(VariantId v, Backend backend) const override {
#if FUSEBENCH_HAS_GPU
    if (backend != Backend::gpu) return {};
    const MoeGemmParams p = params(v);
    if (moe_decode_takes(p, stage1())) return "wgmma decode";
    if (moe_mfma_takes(p, stage1())) return "mfma";
    if (!stages_tokens(v)) return {};
    if (!moe_wgmma_takes(p, stage1())) return "warp kernels";
    std::string form = "wgmma";
    if (moe_wgmma_stages_tokens(p, stage1())) form += ", tokens staged";
    if (stages_weights(v)) form += ", weights staged";
    return form;
#else
    (void)v;
    (void)backend;
    return {};
#endif
  }

  // The engine's token prologue is one launch more where it runs (GPU builds, sm_90a, prefill sizes),
  // its weight prologue one more.
  int launches(VariantId v) const override {
#if FUSEBENCH_HAS_GPU
    if (stages_tokens(v) && moe_wgmma_stages_tokens(params(v), stage1())) {
      const int gemm = stage1() ? 1 : (kind_ == MoeGemmKind::shared_fold && v == 1 ? 3 : 2);  // as the variants say
      return gemm + 1 + (stages_weights(v) ? 1 : 0);
    }
#endif
    return 0;
  }

  void prepare_weights(std::uint64_t seed, HostTensors& in) const override {
    const std::int64_t E = p_.experts, K = p_.hidden, I = p_.inter;
    if (stage1())
      make_mx_weights(seed, 31, E * 2 * I, K, 1.0 / std::sqrt(static_cast<double>(K)), in[kW13].data<std::uint8_t>(),
                      in[kW13Scales].data<std::uint8_t>());
    else
      make_mx_weights(seed, 32, E * K, I, 1.0 / std::sqrt(static_cast<double>(I)), in[kW2].data<std::uint8_t>(),
                      in[kW2Scales].data<std::uint8_t>());
  }

  void generate(std::uint64_t seed, HostTensors& in) const override {
    std::vector<std::int32_t> topk_ids(static_cast<std::size_t>(p_.pairs()));
    if (stage1()) {
      make_moe_sorted_activations(p_, MoeStage::stage1, routing_, dist_, 1.0, seed, topk_ids.data(),
                                  {in[kS1Ids].data<std::int32_t>(), nullptr, in[kS1ExpertIds].data<std::int32_t>(),
                                   in[kS1NumValid].data<std::int32_t>(), in[kXq].data<std::uint8_t>(),
                                   in[kXScales].data<std::uint8_t>()});
      return;
    }
    make_moe_sorted_activations(p_, MoeStage::stage2, routing_, dist_, 1.0, seed, topk_ids.data(),
                                {in[kIds].data<std::int32_t>(), in[kWeights].data<float>(),
                                 in[kExpertIds].data<std::int32_t>(), in[kNumValid].data<std::int32_t>(),
                                 in[kA2q].data<std::uint8_t>(), in[kA2Scales].data<std::uint8_t>()});
    if (kind_ == MoeGemmKind::shared_fold) fill_tensor(in[kShared], Distribution::normal, seed, 23, 1.0);
  }

  std::string distribution_text() const override {
    const std::string x = dist_ == Distribution::edge  ? std::string(kMoeEdgeText)
                          : dist_ == Distribution::nan ? std::string(kMoeNanText)
                                                       : fb::distribution_text(dist_);
    return fmt::format("{}; activations bf16 {} quantized by moe_sort_mxfp4 (roundup, rne); weights normal / "
                       "sqrt(fan-in) quantized to MXFP4",
                       moe_routing_text(routing_), x);
  }

  MoeGemmParams params(VariantId v) const {
    MoeGemmParams p = p_;
    if (kind_ == MoeGemmKind::shared_fold) {
      p.shared = v == 0 ? MoeSharedMode::fold : MoeSharedMode::chain;
    } else {
      p.engine = v == kExact ? MoeGemmEngine::exact : (v == kPlain ? MoeGemmEngine::plain : MoeGemmEngine::fast);
    }
    return p;
  }

  MoeStage1Buffers stage1_buffers(const TensorPointers& in, const TensorPointers& out,
                                  const TensorPointers& ws) const {
    MoeStage1Buffers b;
    b.sorted_token_ids = in.get<const std::int32_t>(kS1Ids);
    b.sorted_expert_ids = in.get<const std::int32_t>(kS1ExpertIds);
    b.num_valid_ids = in.get<const std::int32_t>(kS1NumValid);
    b.xq = in.get<const std::uint8_t>(kXq);
    b.x_scales = in.get<const std::uint8_t>(kXScales);
    b.w13 = in.get<const std::uint8_t>(kW13);
    b.w13_scales = in.get<const std::uint8_t>(kW13Scales);
    b.a1 = out.get<std::uint16_t>(0);
    b.token_stage = ws.items.empty() ? nullptr : ws.get<std::uint8_t>(0);
    b.weight_stage = ws.items.size() < 2 ? nullptr : ws.get<std::uint8_t>(1);
    return b;
  }

  MoeStage2Buffers stage2_buffers(const TensorPointers& in, const TensorPointers& out,
                                  const TensorPointers& ws) const {
    MoeStage2Buffers b;
    b.sorted_token_ids = in.get<const std::int32_t>(kIds);
    b.sorted_weights = in.get<const float>(kWeights);
    b.sorted_expert_ids = in.get<const std::int32_t>(kExpertIds);
    b.num_valid_ids = in.get<const std::int32_t>(kNumValid);
    b.a2q = in.get<const std::uint8_t>(kA2q);
    b.a2_scales = in.get<const std::uint8_t>(kA2Scales);
    b.w2 = in.get<const std::uint8_t>(kW2);
    b.w2_scales = in.get<const std::uint8_t>(kW2Scales);
    b.shared = kind_ == MoeGemmKind::shared_fold ? in.get<const std::uint16_t>(kShared) : nullptr;
    b.y = ws.items.empty() ? nullptr : ws.get<float>(0);
    b.out = out.get<std::uint16_t>(0);
    b.token_stage = ws.items.size() < 2 ? nullptr : ws.get<std::uint8_t>(1);
    b.weight_stage = ws.items.size() < 3 ? nullptr : ws.get<std::uint8_t>(2);
    return b;
  }

  void run(VariantId v, const ExecContext& ctx, const TensorPointers& in, const TensorPointers& out,
           const TensorPointers& ws) const override {
    const MoeGemmParams p = params(v);
    if (stage1()) {
      const MoeStage1Buffers b = stage1_buffers(in, out, ws);
      if (ctx.backend == Backend::cpu) return moe_stage1_emu(p, b);
#if FUSEBENCH_HAS_GPU
      return moe_stage1_launch(p, b, ctx.stream);
#endif
    } else {
      const MoeStage2Buffers b = stage2_buffers(in, out, ws);
      if (ctx.backend == Backend::cpu) return moe_stage2_emu(p, b);
#if FUSEBENCH_HAS_GPU
      return moe_stage2_launch(p, b, ctx.stream);
#endif
    }
    throw DeviceError("this build has no GPU kernels (FUSEBENCH_GPU=none)");
  }

  MoeGemmRefProblem ref_problem(VariantId v) const {
    const MoeGemmParams p = params(v);
    return {p.tokens, p.topk,  p.experts, p.block, p.hidden, p.inter, p.oai, static_cast<int>(p.shared),
            p.engine == MoeGemmEngine::fast};
  }

  MoeGemmRefInputs ref_inputs(const HostTensors& in) const {
    MoeGemmRefInputs r;
    if (stage1()) {
      r.sorted_token_ids = in[kS1Ids].data<std::int32_t>();
      r.sorted_expert_ids = in[kS1ExpertIds].data<std::int32_t>();
      r.num_valid_ids = in[kS1NumValid].data<std::int32_t>();
      r.act = in[kXq].data<std::uint8_t>();
      r.act_scales = in[kXScales].data<std::uint8_t>();
      r.weights = in[kW13].data<std::uint8_t>();
      r.weight_scales = in[kW13Scales].data<std::uint8_t>();
      return r;
    }
    r.sorted_token_ids = in[kIds].data<std::int32_t>();
    r.sorted_weights = in[kWeights].data<float>();
    r.sorted_expert_ids = in[kExpertIds].data<std::int32_t>();
    r.num_valid_ids = in[kNumValid].data<std::int32_t>();
    r.act = in[kA2q].data<std::uint8_t>();
    r.act_scales = in[kA2Scales].data<std::uint8_t>();
    r.weights = in[kW2].data<std::uint8_t>();
    r.weight_scales = in[kW2Scales].data<std::uint8_t>();
    r.shared = kind_ == MoeGemmKind::shared_fold ? in[kShared].data<std::uint16_t>() : nullptr;
    return r;
  }

  std::vector<Fp64Check> check_fp64(const HostTensors& in, const HostTensors& out,
                                    const CheckSubset& subset) const override {
    return check_variant_fp64(0, in, out, subset);
  }
  std::vector<Fp64Check> check_variant_fp64(VariantId v, const HostTensors& in, const HostTensors& out,
                                            const CheckSubset& subset) const override {
    // F6: fold and chain share the looser chain form of the bound; stage 1 and 2: each variant its
    // own (fast's dot errs more than exact's).
    const std::vector<std::uint8_t> mask = token_mask(p_, subset);
    const VariantId bound_of = kind_ == MoeGemmKind::shared_fold ? 1 : v;
    if (stage1()) return moe_stage1_check_fp64(ref_problem(bound_of), ref_inputs(in), out[0].data<std::uint16_t>(), mask.data());
    return moe_stage2_check_fp64(ref_problem(bound_of), ref_inputs(in), out[0].data<std::uint16_t>(), mask.data());
  }

  std::vector<CheckResult> case_checks(const HostTensors& in, const std::vector<const HostTensors*>& outputs,
                                       const CheckSubset& subset) const override {
    if (kind_ != MoeGemmKind::shared_fold || outputs.size() < 2 || !outputs[0] || !outputs[1]) return {};
    const std::vector<std::uint8_t> mask = token_mask(p_, subset);
    const ErrorStats fold = moe_stage2_error(ref_problem(0), ref_inputs(in), (*outputs[0])[0].data<std::uint16_t>(), mask.data());
    const ErrorStats chain = moe_stage2_error(ref_problem(1), ref_inputs(in), (*outputs[1])[0].data<std::uint16_t>(), mask.data());
    CheckResult c;
    c.id = "check/case/fold_no_worse_than_chain";
    c.subject = "out";
    const bool finite = fold.nan == 0 && fold.inf == 0 && chain.nan == 0 && chain.inf == 0;
    // "No worse" up to one bf16 rounding unit (2^-8 of the chain's error): where the routed sum
    // dominates the output (edge inputs), fold and chain round nearly the same values and their
    // errors tie to many digits, so an exact comparison would flip on rounding noise. GPU run 35
    // saw fold 0.0017243 vs chain 0.0017243 fail it that way.
    c.passed = finite && fold.rel_l2 <= chain.rel_l2 * (1.0 + 1.0 / 256.0);
    c.message = fmt::format("out against fp64: fold rel_l2 {:.6g} (max abs {:.6g}), chain rel_l2 {:.6g} (max abs {:.6g}){}",
                            fold.rel_l2, fold.abs_max, chain.rel_l2, chain.abs_max,
                            finite ? (c.passed ? ": fold no worse" : ": fold WORSE") : ": NaN/inf (never passes)");
    c.details["fold/err/rel_l2"] = fold.rel_l2;
    c.details["fold/err/abs/max"] = fold.abs_max;
    c.details["chain/err/rel_l2"] = chain.rel_l2;
    c.details["chain/err/abs/max"] = chain.abs_max;
    return {c};
  }

  Work work(VariantId v) const override {
    const double active = expected_active_experts(p_, routing_);
    const std::int64_t K = p_.hidden, I = p_.inter, pairs = p_.pairs();
    const std::int64_t ids = p_.max_entries() * 4 + p_.max_blocks() * 4 + 8;
    Work w;
    if (stage1()) {
      const double expert_bytes = static_cast<double>(2 * I * K / 2 + 2 * I * K / 32);
      w.read_bytes = static_cast<std::int64_t>(active * expert_bytes) + p_.tokens * K / 2 + pairs * K / 32 + ids;
      w.write_bytes = pairs * I * 2;
      w.flops = 2.0 * static_cast<double>(pairs) * static_cast<double>(2 * I) * static_cast<double>(K);
      return w;
    }
    const double expert_bytes = static_cast<double>(K * I / 2 + K * I / 32);
    w.read_bytes = static_cast<std::int64_t>(active * expert_bytes) + pairs * I / 2 + pairs * I / 32 + ids +
                   p_.max_entries() * 4 + (kind_ == MoeGemmKind::shared_fold ? p_.tokens * K * 2 : 0);
    w.write_bytes = p_.tokens * K * 2;
    w.flops = 2.0 * static_cast<double>(pairs) * static_cast<double>(K) * static_cast<double>(I);
    (void)v;
    return w;
  }

  double macs() const {
    const double n = stage1() ? 2.0 * static_cast<double>(p_.inter) : static_cast<double>(p_.hidden);
    const double k = stage1() ? static_cast<double>(p_.hidden) : static_cast<double>(p_.inter);
    return static_cast<double>(p_.pairs()) * n * k;
  }

  std::string skip_reason(Backend backend) const override {
    if (backend != Backend::cpu) return {};
    // Preparing every expert's MXFP4 weights and their fp64 reference costs the CPU as much as the
    // GEMMs at decode sizes: past kCpuWeightLimit elements (the m31 shapes: 128 experts x 1536 x
    // 6144) a CPU run is minutes per point, so the CPU backend leaves them to the GPU.
    const double weights = static_cast<double>(p_.experts) * static_cast<double>(3 * p_.inter) * static_cast<double>(p_.hidden);
    if (weights > kCpuWeightLimit)
      return fmt::format("GPU only: {:.3g} expert weight elements to prepare are beyond the CPU backend", weights);
    if (macs() <= kCpuMacLimit) return {};
    return fmt::format("GPU only: {:.3g} multiply-adds per variant are beyond a whole CPU emulation (the GPU run "
                       "checks a seeded subset of tokens)",
                       macs());
  }

  std::string variant_skip_reason(VariantId v, Backend) const override {
    if (kind_ == MoeGemmKind::shared_fold || v != kFast) return {};
    const std::int64_t inner = stage1() ? p_.hidden : p_.inter;
    if (inner > fast_bound_inner(stage1()) || p_.topk > kFastBoundTopk)
      return fmt::format("fast's claims are derived for {} <= {} and k <= {} ({}={}, k={})", stage1() ? "K" : "I",
                         fast_bound_inner(stage1()), kFastBoundTopk, stage1() ? "K" : "I", inner, p_.topk);
    return {};
  }

  std::int64_t check_units() const override { return p_.tokens; }
  std::string check_unit_name() const override { return "tokens"; }
  double check_cost() const override { return 2.0 * macs(); }  // emulation + fp64 reference

  void emulate_subset(VariantId v, const HostTensors& in, HostTensors& out, const CheckSubset& subset) const override {
    const std::vector<std::uint8_t> mask = token_mask(p_, subset);
    const MoeGemmParams p = params(v);
    TensorPointers ip, op, wp;
    for (const HostTensor& t : in) ip.items.push_back(const_cast<std::uint8_t*>(t.bytes.data()));
    for (HostTensor& t : out) op.items.push_back(t.bytes.data());
    if (stage1())
      moe_stage1_emu(p, stage1_buffers(ip, op, wp), mask.data());
    else
      moe_stage2_emu(p, stage2_buffers(ip, op, wp), mask.data());
  }

  std::vector<ElementRange> subset_region(std::size_t, const CheckSubset& subset) const override {
    const std::int64_t row = stage1() ? p_.topk * p_.inter : p_.hidden;
    std::vector<ElementRange> r;
    if (subset.full) return {{0, p_.tokens * row}};
    for (std::int64_t t : subset.units) r.push_back({t * row, (t + 1) * row});
    return r;
  }

 private:
  MoeGemmKind kind_;
  MoeGemmParams p_;
  MoeRouting routing_;
  Distribution dist_;
};

std::vector<AxisSpec> moe_gemm_axes(MoeGemmKind kind) {
  std::vector<AxisSpec> axes{
      AxisSpec::integer("T", "tokens", {}, 1, (std::int64_t{1} << 24) - 1),
      AxisSpec::integer("E", "experts", 128, 1, 1024),
      AxisSpec::integer("k", "experts per token (top-k)", 4, 1, 255),
      AxisSpec::integer("K", "hidden size (model dim): stage 1's dot length, stage 2's output width; a multiple of 32",
                        6144, 32),
      AxisSpec::integer("I", "intermediate size per expert (TP shard); a multiple of 32", 768, 32),
      AxisSpec::integer("B", "sort block, the GEMM's M tile: a multiple of 16 up to 128", 32, 16, 128),
      AxisSpec::choice("routing", "topk_ids pattern", {"uniform", "one_expert", "empty_experts"}, "uniform")};
  if (kind == MoeGemmKind::stage1)
    axes.push_back(AxisSpec::choice("activation", "SwiGLU form: swiglu_oai (clamped, alpha 1.702) or silu",
                                    {"swiglu_oai", "silu"}, "swiglu_oai"));
  axes.push_back(distribution_axis());
  return axes;
}

KernelCase make_case(MoeGemmKind kind) {
  KernelCase c;
  c.family = "moe_gemm";
  c.fusion = "F6";
  c.spec = "docs/numeric-contract.md#moe-stage-1-2-and-fold";
  const Claim emu = Claim::bitwise();
  const char* exact_note = "block sums are exact integers on the matrix unit; promotion per 32-K block in K order";
  // fast against its emulation: a relative L2 bound from the dot products' errors, at the largest
  // dot length and top-k the case derives it for (larger points skip fast with that reason).
  const auto fast_variant = [](bool stage1) {
    const std::int64_t inner = fast_bound_inner(stage1);
    const double bound = moe_pair_rel_l2(stage1, fast_beta(inner), fast_beta(inner), inner, kFastBoundTopk);
    return VariantSpec{
        "fast",
        "each row rescaled by its largest block scale into e4m3, 128-K partials summed in the matrix unit, one fp32 "
        "add per 128 K (the wgmma prefill engine; below its threshold the exact kernels)",
        stage1 ? 1 : 2,
        true,
        Claim::within(Bound{"err/rel_l2", bound,
                            "the matrix unit sums each 128-K partial in its own order (2^-11 model, not IEEE); the "
                            "emulation forms it exactly and rounds once"}),
        "not bitwise: the matrix unit's accumulation inside a 128-K partial is not IEEE"};
  };
  // fast against exact: the same form, with exact's dot error in place of one of fast's.
  const auto fast_pair = [](bool stage1) {
    const std::int64_t inner = fast_bound_inner(stage1);
    return Claim::within(Bound{"err/rel_l2",
                               moe_pair_rel_l2(stage1, fast_beta(inner), exact_beta(inner), inner, kFastBoundTopk),
                               "both within their dot errors of fp64 (fast: 2^-11 per 128-K partial, a conservative "
                               "model of the matrix unit; exact: gamma(K/32)); then SwiGLU (x3) or the slot sum (x sqrt k)"});
  };
  switch (kind) {
    case MoeGemmKind::stage1:
      c.name = "moe_gemm/stage1";
      c.summary = "MoE stage 1: gather MXFP4 rows by sorted ids, x W13 (MXFP4), SwiGLU -> bf16 row token*k+slot";
      c.variants = {{"exact", "block sums on the matrix units (fp8 e4m3 mma.sync m16n8k32), promoted per 32-K block "
                              "on CUDA cores in K order, SwiGLU in registers",
                     1, true, emu, exact_note},
                    {"plain", "CUDA cores only: integer block sums, the same promotion order", 1, true, emu, ""},
                    fast_variant(true)};
      c.pairs = {{"exact", "plain", Claim::bitwise(), {}}, {"fast", "exact", fast_pair(true), {}}};
      break;
    case MoeGemmKind::stage2:
      c.name = "moe_gemm/stage2";
      c.summary = "MoE stage 2: MXFP4 a2 x W2 (MXFP4) -> w*y per pair, slot-ordered fp32 sum -> bf16 out";
      c.variants = {{"exact", "matrix-unit block sums (GEMM writes w*y per pair), then the slot-ordered reduction",
                     2, true, emu, exact_note},
                    {"plain", "CUDA-core GEMM, then the slot-ordered reduction", 2, true, emu, ""},
                    fast_variant(false)};
      c.pairs = {{"exact", "plain", Claim::bitwise(), {}}, {"fast", "exact", fast_pair(false), {}}};
      break;
    case MoeGemmKind::shared_fold:
      c.name = "moe_gemm/shared_fold";
      c.summary = "F6: the shared expert's bf16 output joins the stage-2 fp32 slot sum before its one bf16 rounding";
      c.variants = {{"fold", "stage-2 GEMM, then one reduction: bf16(sum of w*y + shared)", 2, true, emu, exact_note},
                    {"chain", "stage-2 GEMM, reduction to bf16, then out = bf16(f32(out) + f32(shared))", 3, true, emu,
                     exact_note}};
      c.pairs = {{"fold", "chain",
                  Claim::within(Bound{"err/rel_l2", 1e-2,
                                      "the contract's F6 bound (docs/numeric-contract.md#moe-stage-1-2-and-fold): one bf16 rounding fewer; fold and chain differ by at most one "
                                      "bf16 rounding of the routed sum (2^-8 relative) per element"}),
                  {}}};
      break;
  }
  c.axes = moe_gemm_axes(kind);
  c.make = [kind](const Point& pt) -> std::unique_ptr<CaseInstance> {
    MoeGemmParams p;
    p.tokens = pt.integer("T");
    p.experts = pt.integer("E");
    p.topk = pt.integer("k");
    p.hidden = pt.integer("K");
    p.inter = pt.integer("I");
    p.block = pt.integer("B");
    if (kind == MoeGemmKind::stage1) p.oai = pt.choice("activation") == "swiglu_oai";
    moe_gemm_validate(p);
    moe_sort_validate_shape(p.sort_params(MoeStage::stage1));
    return std::make_unique<MoeGemmInstance>(kind, p, moe_routing_from_name(pt.choice("routing")), distribution_of(pt));
  };
  return c;
}

}  // namespace

void register_moe_gemm(Registry& registry) {
  registry.add(make_case(MoeGemmKind::stage1));
  registry.add(make_case(MoeGemmKind::stage2));
  registry.add(make_case(MoeGemmKind::shared_fold));
}

}  // namespace fb
