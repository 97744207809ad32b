// The MoE GEMMs' exact engine on AMD's matrix units (moe_gemm_mfma.hip; the wave's work and why its
// block sums are exact in moe_gemm_mfma_wave.hpp): exact's bits, for the exact and fast variants on
// an AMD device with integer MFMA (gfx908, gfx90a, gfx940-gfx942, gfx950). GPU builds only.
#pragma once

#include <string>

#include "kernels/moe_gemm/moe_gemm.hpp"

namespace fb {

// Why the MFMA engine cannot run here, in one line (empty: it can): not a hipcc build for AMD, or
// no integer-MFMA code in this build for the device (a run-time probe, once a process).
std::string moe_mfma_unavailable();

// FUSEBENCH_MOE_MFMA=1 asks for it; 0 or unset (the default until an AMD run has verified and
// timed it, as for the fp8 GEMM's MFMA kernel) keeps the warp kernels. Any other value: InputError.
bool moe_mfma_wanted();

// Whether the launchers take it: asked for (moe_mfma_wanted), an exact or fast launch that the
// 32-bit activation offsets cover (moe_exact_fits), at most 65535 sort blocks, where
// moe_mfma_unavailable() is empty. Elsewhere the warp kernels (the same bits).
bool moe_mfma_takes(const MoeGemmParams& p, bool stage1);

void moe_stage1_mfma_launch(const MoeGemmParams& p, const MoeStage1Buffers& b, void* stream);
// Stage 2's GEMM only (Y = w_p * y); the reduction launch follows as for the other engines.
void moe_stage2_mfma_gemm_launch(const MoeGemmParams& p, const MoeStage2Buffers& b, void* stream);

}  // namespace fb
