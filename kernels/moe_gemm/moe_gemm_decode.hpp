// The MoE GEMMs' decode engine on Hopper's warpgroup matrix unit (moe_gemm_decode.hip; design and maps
// in moe_gemm_decode_plan.hpp): exact's bits, for the exact and fast variants below the prefill
// engine's threshold. GPU builds only.
#pragma once

#include <cstdint>
#include <string>

#include "kernels/moe_gemm/moe_gemm.hpp"

namespace fb {

// Where the decode engine runs unless FUSEBENCH_MOE_DECODE_ENGINE says otherwise: stage 1 at every
// decode size, stage 2 from kMoeDecodeStage2MinPairs routed pairs on. Measured (run 79, one H100,
// graph replay, the exact variant, this engine against the mma.sync kernels in the same call): stage
// 1 42.1 / 134.1 / 266.0 / 285.2 us against 48.1 / 191.8 / 373.6 / 412.2 at T = 3 / 24 / 96 / 192
// (1.14-1.45x); stage 2 29.2 / 109.4 / 191.1 / 210.3 against 25.8 / 106.7 / 210.6 / 228.2 (0.88x,
// 0.98x, 1.10x, 1.09x: its K = 768 is three stage pairs, so the pass's fixed work weighs more). The
// stage-2 threshold sits between the 96 pairs where it lost and the 384 where it won.
inline constexpr std::int64_t kMoeDecodeStage2MinPairs = 192;
inline bool moe_decode_by_default(const MoeGemmParams& p, bool stage1) {
  return stage1 || p.pairs() >= kMoeDecodeStage2MinPairs;
}

// Whether the launcher takes the decode engine for this GEMM: not plain, below the prefill engine's
// threshold (moe_wgmma_takes says no), FUSEBENCH_MOE_DECODE_ENGINE `wgmma`, or unset where
// moe_decode_by_default says so (`warp`: never, the mma.sync kernels), a shape it tiles
// (moe_decode_shape_fits) and a device that runs sm_90a code. Elsewhere the mma.sync kernels run
// (the same bits).
bool moe_decode_takes(const MoeGemmParams& p, bool stage1);

void moe_stage1_decode_launch(const MoeGemmParams& p, const MoeStage1Buffers& b, void* stream);
// Stage 2's GEMM only (Y = w_p * y); the reduction launch follows as for the other engines.
void moe_stage2_decode_gemm_launch(const MoeGemmParams& p, const MoeStage2Buffers& b, void* stream);

}  // namespace fb
