// The exact MoE GEMMs' prefill engine on Hopper's warpgroup matrix unit (moe_gemm_wgmma.hip; tiles
// and maps in moe_gemm_wgmma_plan.hpp). The same bits as the other engines: the same exact block
// sums, promoted in the same order. GPU builds only.
#pragma once

#include <cstdint>
#include <string>

#include "kernels/moe_gemm/moe_gemm.hpp"

namespace fb {

// Whether the exact engine's launcher takes the wgmma kernel for this GEMM: the exact engine, at
// least moe_wgmma_min_pairs() routed pairs, a shape it tiles (moe_wgmma_shape_fits) and a device
// that runs sm_90a code. Elsewhere the mma.sync kernels run (the same bits).
bool moe_wgmma_takes(const MoeGemmParams& p, bool stage1);
// T * k from which the wgmma kernel runs: 4096 (prefill), or FUSEBENCH_MOE_WGMMA_MIN_PAIRS (tests
// set 0 to run it at small shapes; benches compare the engines with a large value).
std::int64_t moe_wgmma_min_pairs();
// Empty where the wgmma kernels run on this device; else why not.
std::string moe_wgmma_unavailable();

void moe_stage1_wgmma_launch(const MoeGemmParams& p, const MoeStage1Buffers& b, void* stream);
// Stage 2's GEMM only (Y = w_p * y); the reduction launch follows as for the other engines.
void moe_stage2_wgmma_gemm_launch(const MoeGemmParams& p, const MoeStage2Buffers& b, void* stream);

}  // namespace fb
