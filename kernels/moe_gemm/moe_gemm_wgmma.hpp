// The MoE GEMMs' prefill engine on Hopper's warpgroup matrix unit (moe_gemm_wgmma.hip; tiles and maps
// in moe_gemm_wgmma_plan.hpp). Exact: the same bits as the other engines (the same exact block sums,
// promoted in the same order). Fast: moe_gemm_fast.hpp's form. GPU builds only.
#pragma once

#include <cstdint>
#include <string>

#include "kernels/moe_gemm/moe_gemm.hpp"
#include "kernels/moe_gemm/moe_gemm_wgmma_plan.hpp"

namespace fb {

// Whether the wgmma engine tiles this GEMM's shape (stage 1: hidden in, I outputs, each a gate/up
// pair; stage 2: I in, hidden out). The launcher and the cases' workspace both ask it.
inline bool moe_wgmma_tiles(const MoeGemmParams& p, bool stage1) {
  return stage1 ? moe_wgmma_shape_fits(p.hidden, p.inter, true, p.block)
                : moe_wgmma_shape_fits(p.inter, p.hidden, false, p.block);
}

// Whether the launcher takes the wgmma kernel for this GEMM: the exact or the fast engine, at least
// moe_wgmma_min_pairs() routed pairs, a shape it tiles (moe_wgmma_tiles) and a device that runs
// sm_90a code. Elsewhere the mma.sync kernels run (exact's bits, for both engines).
bool moe_wgmma_takes(const MoeGemmParams& p, bool stage1);
// T * k from which the wgmma kernel runs: kMoeWgmmaMinPairs, or FUSEBENCH_MOE_WGMMA_MIN_PAIRS (tests
// set 0 to run it at small shapes; benches compare the engines with a large value). Set between
// the measured points (run 57d, H200, m31 shapes): the mma.sync kernels are faster at T = 1024 and
// 2048 (stage 1 1107 / 1943 us against 1573 / 2010, stage 2 633 / 1131 against 1001 / 1323), the
// wgmma engine from T = 4096 (2869 against 3636, 1920 against 2174): 12288 pairs is T = 3072 at
// k = 4. A tile costs the same whether its 128 token rows are full or not, so sparse experts favour
// the mma.sync kernels.
inline constexpr std::int64_t kMoeWgmmaMinPairs = 12288;
std::int64_t moe_wgmma_min_pairs();
// Empty where the wgmma kernels run on this device; else why not.
std::string moe_wgmma_unavailable();
// Whether a launch of the exact or fast engine with a token_stage workspace runs the token prologue
// first (one launch more): where the wgmma kernel takes it and FUSEBENCH_MOE_TOKEN_STAGE is not 0.
bool moe_wgmma_stages_tokens(const MoeGemmParams& p, bool stage1);
// Whether it also stages the weights (MoeWeightStageLayout: a weight prologue, one launch more, and
// a weight_stage workspace of E x rows x K bytes): where it stages the tokens and
// FUSEBENCH_MOE_WEIGHT_STAGE is 1, or, unset, where moe_weight_stage_by_default says. The prologue
// converts each used expert's weights once (a read of the MXFP4 bytes, a write of twice as many e4m3
// bytes: 692 us at stage 1 of the m31 shapes on an H100, run 66p); without it the producer converts
// an expert's weight rows once per token tile of the expert.
bool moe_wgmma_stages_weights(const MoeGemmParams& p, bool stage1);
// The default: the fast engine, from kMoeWeightStageMinPairsPerExpert routed pairs an expert on.
// Measured (run 66, H100, one build, both ways): fast gains 1.16x at stage 1 and 1.07x at stage 2 at
// T = 32768 (1024 pairs an expert) and loses 1.26x / 1.25x at T = 4096 (128), crossing near 400-520
// pairs an expert; exact, paced by its consumers, loses 1.10x at stage 1 and gains 1.03x at stage 2
// at T = 32768, so it is left out.
inline constexpr std::int64_t kMoeWeightStageMinPairsPerExpert = 512;
inline bool moe_weight_stage_by_default(const MoeGemmParams& p) {
  return p.engine == MoeGemmEngine::fast && p.pairs() >= kMoeWeightStageMinPairsPerExpert * p.experts;
}
// The staged weight rows of one GEMM (stage 1: 2I rows of K = H; stage 2: H rows of K = I), for the
// case's workspace and the layer's buffers alike.
inline MoeWeightStageLayout moe_weight_stage_layout(const MoeGemmParams& p, bool stage1) {
  return {p.experts, stage1 ? 2 * p.inter : p.hidden, stage1 ? p.hidden : p.inter};
}

void moe_stage1_wgmma_launch(const MoeGemmParams& p, const MoeStage1Buffers& b, void* stream);
// Stage 2's GEMM only (Y = w_p * y); the reduction launch follows as for the other engines.
void moe_stage2_wgmma_gemm_launch(const MoeGemmParams& p, const MoeStage2Buffers& b, void* stream);

}  // namespace fb
