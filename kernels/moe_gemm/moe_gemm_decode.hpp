// The MoE GEMMs' decode engine on Hopper's warpgroup matrix unit (moe_gemm_decode.hip; design and maps
// in moe_gemm_decode_plan.hpp): exact's bits, for the exact and fast variants below the prefill
// engine's threshold. GPU builds only.
#pragma once

#include <cstdint>
#include <string>

#include "kernels/moe_gemm/moe_gemm.hpp"

namespace fb {

// Where the decode engine runs unless FUSEBENCH_MOE_DECODE_ENGINE says otherwise: stage 1 from
// kMoeDecodeMinPairs routed pairs on. Measured (runs 78 and 78b, one H100, graph replay, the exact
// variant against the mma.sync kernels in the same call): stage 1 with the weight ring 324.98 us
// against 372.35 at T = 96 (1.15x) and 53.98 against 48.03 at T = 3 (0.89x); with register loads
// 0.99-1.04x at T = 24-192 and 0.87x at T = 3; stage 2 (register loads) 0.86-0.95x at every decode T,
// so stage 2 keeps the mma.sync kernels (its ring form is unmeasured: FUSEBENCH_MOE_DECODE_ENGINE=wgmma).
inline constexpr std::int64_t kMoeDecodeMinPairs = 64;
inline bool moe_decode_by_default(const MoeGemmParams& p, bool stage1) {
  return stage1 && p.pairs() >= kMoeDecodeMinPairs;
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
