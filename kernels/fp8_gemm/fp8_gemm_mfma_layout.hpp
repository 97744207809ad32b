// The operand and result layout of AMD's v_mfma_f32_16x16x32_fp8_fp8 (CDNA3: gfx940, gfx941, gfx942;
// one wave of 64 lanes), as AMD's matrix instruction calculator gives it for CDNA3, and how the
// `mma` variant's AMD kernel (fp8_gemm_mfma.hip) feeds it. Host and device (FB_HD), so the CPU test
// (tests/kernels/fp8_gemm_mfma_layout_test.cpp) simulates the instruction on exactly the bytes the
// kernel hands each lane and checks that the result is the 128-K block's dot product.
//   A (16 x 32, fp8): lane l holds A[l % 16][8 (l / 16) + e] in byte e of a 64-bit operand;
//   B (32 x 16, fp8): lane l holds B[8 (l / 16) + e][l % 16] in byte e;
//   D (16 x 16, fp32): lane l holds D[4 (l / 16) + r][l % 16] in element r (r = 0..3).
// The kernel puts 16 weight rows (output channels) in A and 16 rows of the activations (tokens) in
// B, and covers a 128-K block with 4 instructions: lane group g = l / 16 loads bytes 32 g .. 32 g +
// 31 of the block for its row (two 16-byte loads) and instruction j takes bytes 32 g + 8 j .. + 7
// as its k = 8 g .. 8 g + 7. A and B use the same map, so the 4 x 32 logical k of the 4
// instructions are a permutation of the block's 128: their sum is the block's dot product (in the
// matrix unit's own accumulation, which is not IEEE fp32: the variant's claim is the matrix-unit
// bound, as for mma.sync and wgmma).
#pragma once

#include "reference/codecs/host_device.hpp"

namespace fb {

inline constexpr int kMfmaLanes = 64;
inline constexpr int kMfmaTile = 16;  // M = N = 16
inline constexpr int kMfmaK = 32;     // k per instruction
inline constexpr int kMfmaPerBlock = 4;  // instructions per 128-K block

FB_HD int mfma_operand_row(int lane) { return lane % kMfmaTile; }  // A's row, B's column
FB_HD int mfma_operand_group(int lane) { return lane / kMfmaTile; }  // k = 8 group + byte
FB_HD int mfma_result_row(int lane, int r) { return 4 * (lane / kMfmaTile) + r; }
FB_HD int mfma_result_col(int lane) { return lane % kMfmaTile; }

// The byte of a 128-K block that instruction j's operand byte e comes from, in lane `lane`.
FB_HD int mfma_block_byte(int lane, int j, int e) { return 32 * mfma_operand_group(lane) + 8 * j + e; }

}  // namespace fb
