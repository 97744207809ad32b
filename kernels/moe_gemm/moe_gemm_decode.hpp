// The MoE GEMMs' decode engine on Hopper's warpgroup matrix unit (moe_gemm_decode.hip; design and maps
// in moe_gemm_decode_plan.hpp): exact's bits, for the exact and fast variants below the prefill
// engine's threshold. GPU builds only.
#pragma once

#include <string>

#include "kernels/moe_gemm/moe_gemm.hpp"

namespace fb {

// Whether the launcher takes the decode engine for this GEMM: not plain, below the prefill engine's
// threshold (moe_wgmma_takes says no), a shape it tiles (moe_decode_shape_fits), a device that runs
// sm_90a code and FUSEBENCH_MOE_DECODE_ENGINE unset or `wgmma` (`warp`: the mma.sync kernels, for
// timing both in one build). Elsewhere the mma.sync kernels run (the same bits).
bool moe_decode_takes(const MoeGemmParams& p, bool stage1);
// The form its launch takes, for the report's launch_configs: "wgmma decode", with ", weight ring"
// (FUSEBENCH_MOE_DECODE_RING=1 where K allows it) or ", L2 256B loads" (FUSEBENCH_MOE_DECODE_L2_256B=1).
std::string moe_decode_form(const MoeGemmParams& p, bool stage1);

void moe_stage1_decode_launch(const MoeGemmParams& p, const MoeStage1Buffers& b, void* stream);
// Stage 2's GEMM only (Y = w_p * y); the reduction launch follows as for the other engines.
void moe_stage2_decode_gemm_launch(const MoeGemmParams& p, const MoeStage2Buffers& b, void* stream);

}  // namespace fb
