// The block-scale GEMM's vendor variant: cuBLASLt's Hopper block scaling (fp8_blockscale_vendor.cpp),
// A (our activations) with 1x128 scales as VEC128_32F, B (our weights) with 128x128 scales as
// BLK128x128_32F, bf16 C written directly (no split-K, no fp32 buffer).
//
// cuBLASLt sees row-major C[M][N] as column-major D[N][M]: its A_lt is our b (op T, m_lt = N), its
// B_lt our a (op N, n_lt = M). The scale layouts it documents for those operands:
//   weights (BLK128x128 on A_lt): [N/128][L4] row-major, L4 = round_up(K/128, 4): our row-major
//     b_scale with each row padded to L4 entries (zeros in the pad). Prepared once per point,
//     untimed, as the case's `b_scale_lt` weight input (fp8_blockscale_vendor_pad_weight_scales).
//   activations (VEC128 on B_lt): [K/128][M], the token index contiguous: our row-major
//     a_scale[M][K/128] transposed. Activations change every call, so one call is 2 launches: a
//     small transpose kernel (fp8_blockscale_vendor_scales.hip) into the variant's workspace, then
//     the GEMM. (A producer can write this layout itself: fp8_quant's ScaleLayout::k_major.)
#pragma once

#include <cstdint>
#include <string>

#include "kernels/fp8_gemm_blockscale/fp8_blockscale.hpp"

namespace fb {

struct Fp8BlockscaleVendorBuffers {
  const std::uint8_t* a = nullptr;       // fp8 [M][K]
  const float* a_scale = nullptr;        // fp32 [M][K/128], row-major (the case's input)
  const std::uint8_t* b = nullptr;       // fp8 [N][K]
  const float* b_scale_lt = nullptr;     // fp32 [N/128][L4] (fp8_blockscale_vendor_pad_weight_scales)
  float* a_scale_k_major = nullptr;      // fp32 [K/128][M], workspace: the transpose writes it
  std::uint16_t* c = nullptr;            // bf16 [M][N]
};

// L4: the padded row length of the weight scales cuBLASLt reads.
inline std::int64_t blockscale_vendor_scale_row(std::int64_t k_blocks) { return (k_blocks + 3) / 4 * 4; }

// Host: b_scale [N/128][K/128] -> out [N/128][L4], zeros in the pad (the untimed weight preparation).
void fp8_blockscale_vendor_pad_weight_scales(const Fp8BlockscaleParams& p, const float* b_scale, float* out);
// Host: a_scale [M][K/128] -> out [K/128][M] (what the transpose kernel writes; for the tests).
void fp8_blockscale_vendor_k_major_scales(const Fp8BlockscaleParams& p, const float* a_scale, float* out);

// Why cuBLASLt cannot run the point (empty: it can). Found at plan time from
// cublasLtMatmulAlgoGetHeuristic (M not a multiple of 4, for one, on cuBLASLt 13.1), never by running it.
std::string fp8_blockscale_vendor_unavailable(const Fp8BlockscaleParams& p);
// The transpose, then cublasLtMatmul; throws DeviceError where it cannot run or a call fails.
void fp8_blockscale_vendor_launch(const Fp8BlockscaleParams& p, const Fp8BlockscaleVendorBuffers& b, void* stream);
// The transpose alone (fp8_blockscale_vendor_scales.hip): a_scale_k_major[kb][m] = a_scale[m][kb].
void fp8_blockscale_vendor_transpose_scales_launch(const Fp8BlockscaleParams& p, const float* a_scale,
                                                   float* a_scale_k_major, void* stream);

}  // namespace fb
