// The decode engine of the exact MoE GEMMs (moe_gemm_decode.hip, wgmma on sm_90a): its shapes, row
// maps and the token tile's layout, host and device code (FB_HD) so the CPU tests check every map and
// simulate the matrix unit on exactly the operands the kernel builds.
//
// Why a decode engine: on sm_90 `mma.sync ... e4m3` is not a native instruction (ptxas turns it into
// F2FP unpacks to f16 and two f16 HMMA), and the mma.sync kernels spend about 93 instructions on each
// 16-row, 32-K block (run 77p's profile at T = 96): issue-bound at half the copy rate. Hopper's fp8
// matrix unit is wgmma's. Here:
// - a CTA is one warpgroup and 64 weight rows (stage 1: 32 outputs' gate and up rows, the prefill
//   engine's row map; stage 2: 64 outputs) of one sort block; the weights are wgmma's A operand in
//   registers: each thread loads its fragment's e2m1 words straight from global memory and converts
//   them with bit operations (e2m1x8_to_e4m3x8), the mma.sync kernels' fragment and permutation of k
//   (moe_gemm_exact.hpp: the even elements of a lane's word at logical k 4q..4q+3, the odd ones at
//   16+4q..), so nothing of the weights passes through shared memory;
// - the sort block's live rows are the N side (8 or 16: the live rows rounded up to 8; a block of
//   more than 16 in passes of 16, each streaming the CTA's weights again, from L2 after the first:
//   wider passes held too many registers), converted once per CTA and stage into a small shared
//   tile in the same permutation of k, each token block carrying its scale in its operand where it
//   can (mx_token_shift), so the promotion is mostly one fma per output;
// - a stage is 128 K: four MMAs from a zero accumulator (each an exact block sum), issued together,
//   the next stage's tokens converted while they run, then the four promotions in K order.
#pragma once

#include <cstdint>
#include <cstring>

#include "kernels/moe_gemm/moe_gemm_wgmma_plan.hpp"

namespace fb {

inline constexpr int kMxDecRows = 64;       // weight rows of a CTA (one warpgroup, wgmma's M)
inline constexpr int kMxDecThreads = 128;
inline constexpr int kMxDecMaxTokens = 16;  // sorted rows of one pass (wgmma's N: 8 or 16)
inline constexpr int kMxDecStageK = 128;    // K a stage: four MX blocks
inline constexpr int kMxDecStageBlocks = kMxDecStageK / 32;

// Whether the decode engine tiles this GEMM: K of the dot products a multiple of 256 (whole pairs of
// stages: the ring's 128-byte lines; a row's four scale bytes a stage are one aligned word) and whole
// CTAs of outputs (stage 1: 32, stage 2: 64).
FB_HD bool moe_decode_shape_fits(std::int64_t inner, std::int64_t outputs, bool stage1) {
  return inner > 0 && inner % (2 * kMxDecStageK) == 0 && outputs > 0 &&
         outputs % (stage1 ? kMxDecRows / 2 : kMxDecRows) == 0;
}
// CTAs along the outputs.
FB_HD std::int64_t moe_decode_col_tiles(std::int64_t outputs, bool stage1) {
  return outputs / (stage1 ? kMxDecRows / 2 : kMxDecRows);
}

// The weight row (within the expert's rows) of CTA-local row r (0..63) of column tile `tile`:
// stage 1 takes the prefill engine's map (warp w's 16-row slice holds the gate rows of outputs
// 32 tile + 8 w + i in i < 8 and their up rows in i >= 8, so a thread's two accumulator rows are one
// output's gate and up); stage 2 the rows in order.
FB_HD std::int64_t moe_decode_weight_row(int r, std::int64_t tile, bool stage1, std::int64_t outputs) {
  return stage1 ? moe_wgmma_stage1_row(r, tile * (kMxDecRows / 2), outputs) : tile * kMxDecRows + r;
}
// Stage 1: the output of the gate row held by (warp w, lane l).
FB_HD std::int64_t moe_decode_stage1_output(int w, int lane, std::int64_t tile) {
  return moe_wgmma_stage1_output(0, w, lane, tile * (kMxDecRows / 2));
}

// wgmma's N for a pass of `rows` sorted rows (1..16): rounded up to 8.
FB_HD int moe_decode_tokens_n(std::int64_t rows) { return static_cast<int>((rows + 7) / 8 * 8); }

// The token chunk: the pass's token rows converted for kMxDecChunkBytes / (N * 128) stages at once
// (N = 8: 16 stages, 2048 K; N = 16: 8 stages), so a stage issues no token work and no CTA barrier
// (run 78b's profile: 120 of a stage's 343 instructions a warp were the next stage's token tile and
// its barrier). Stage c of the chunk is N rows of 128 bytes at c * N * 128 (four blocks of 32 e4m3
// bytes in the MMA's logical k, the 128-byte swizzle of the prefill engine: moe_wgmma_word_offset),
// then the rows' scale bytes, one a (stage, block, row), for the canonical promotion. The chunk's
// stages are whole pairs of stages (the ring's slots).
inline constexpr int kMxDecChunkBytes = 16 * 1024;
FB_HD constexpr int moe_decode_chunk_stages(int n_tokens) { return kMxDecChunkBytes / (n_tokens * 128); }
FB_HD constexpr int moe_decode_chunk_tile(int c, int n_tokens) { return c * n_tokens * 128; }
inline constexpr int kMxDecChunkScalesAt = kMxDecChunkBytes;
FB_HD constexpr int moe_decode_chunk_scale(int c, int j, int n) {
  return kMxDecChunkScalesAt + (c * kMxDecStageBlocks + j) * kMxDecMaxTokens + n;
}
inline constexpr int kMxDecChunkScaleBytes = moe_decode_chunk_stages(8) * kMxDecStageBlocks * kMxDecMaxTokens;

// The weight ring: kMxDecRingSlots slots of two stages of the CTA's 64 rows (two TMA boxes of 32 rows
// x 128 bytes, the 128-byte swizzle), filled by one thread up to kMxDecRingSlots pairs of stages
// ahead, each landing on its `full` mbarrier; each warp arrives on the slot's `empty` mbarrier once it
// has read the slot's words, and the filling thread waits for the four before it refills the slot
// (no CTA barrier a stage). Then the mbarriers (full, then empty).
inline constexpr int kMxDecRingSlots = 4;
inline constexpr int kMxDecRingSlotBytes = kMxDecRows * 128;
inline constexpr int kMxDecRingAt = (kMxDecChunkScalesAt + kMxDecChunkScaleBytes + 1023) / 1024 * 1024;
inline constexpr int kMxDecBarsAt = kMxDecRingAt + kMxDecRingSlots * kMxDecRingSlotBytes;
inline constexpr int kMxDecSmemBytes = kMxDecBarsAt + 2 * 8 * kMxDecRingSlots + 1024;  // + alignment slack

// The ring row (0..63) of CTA-local weight row r: box 0 then box 1. Stage 1's boxes are the 32 gate
// rows and the 32 up rows of the CTA's outputs (in output order), stage 2's the 64 rows in order.
FB_HD int moe_decode_ring_row(int r, bool stage1) {
  return stage1 ? (r % 16 < 8 ? 0 : 32) + 8 * (r / 16) + r % 8 : r;
}
// The first weight row (within the expert's rows) of box 0 or 1 of column tile `tile`.
FB_HD std::int64_t moe_decode_ring_box_row(int box, std::int64_t tile, bool stage1, std::int64_t outputs) {
  return stage1 ? box * outputs + (kMxDecRows / 2) * tile : kMxDecRows * tile + 32 * box;
}
// The byte of e2m1 word q of block j of stage h (0, 1: the slot's first or second) in ring row
// `row`: the box's 128-byte line of that row, its 16-byte chunks swizzled by the row (row % 8).
FB_HD int moe_decode_ring_word(int row, int h, int j, int q) {
  return row * 128 + (((4 * h + j) ^ (row % 8)) * 16) + 4 * q;
}

// Whether all four scale bytes of a word lie in the one-operation promotion's range
// [kMxFastScaleLo, kMxFastScaleHi] = [54, 180] (mx_fast_scale), in five bit operations: with lo the
// byte's low 7 bits and hi its top bit, lo + 74 reaches bit 7 iff a byte below 128 is >= 54, and
// lo + 75 does iff a byte from 128 on is >= 181; no sum carries into the next byte (127 + 75 < 256).
FB_HD bool moe_decode_fast_scales(std::uint32_t w) {
  static_assert(kMxFastScaleLo == 54 && kMxFastScaleHi == 180, "the constants below encode the range");
  const std::uint32_t hi = w & 0x80808080u, lo = w & 0x7F7F7F7Fu;
  const std::uint32_t at_least_lo = (lo + 0x4A4A4A4Au) | hi, above_hi = (lo + 0x4B4B4B4Bu) & hi;
  return (at_least_lo & ~above_hi & 0x80808080u) == 0x80808080u;
}

// Which token word a thread converts: thread t takes e2m1 word t % 16 of a row's stage (block
// (t % 16) / 4, word (t % 16) % 4 of it) for rows t / 16 + 8 p, p < N / 8.
FB_HD int moe_decode_token_row(int t, int p) { return t / 16 + 8 * p; }
FB_HD int moe_decode_token_block(int t) { return (t % 16) / 4; }
FB_HD int moe_decode_token_word(int t) { return t % 4; }

// One token word (eight e2m1 codes, elements 8 q .. 8 q + 7 of block j) into the tile: converted by
// the table of its shift (values times 2^(u-6), in order), then the even elements to logical k
// 4q..4q+3 and the odd ones to 16+4q.. (the weights' permutation, moe_gemm_exact.hpp).
FB_HD void moe_decode_store_token_word(std::uint8_t* tile, int n, int j, int q, std::uint32_t word,
                                       const E2m1E4m3Table& table) {
  std::uint32_t first, last;
  e2m1x8_to_e4m3x8_by_table(word, table, first, last);
  const std::uint32_t even = byte_permute(first, last, 0x6420u), odd = byte_permute(first, last, 0x7531u);
#if FB_DEVICE_PASS
  *reinterpret_cast<std::uint32_t*>(tile + moe_wgmma_word_offset(n, j, q)) = even;
  *reinterpret_cast<std::uint32_t*>(tile + moe_wgmma_word_offset(n, j, 4 + q)) = odd;
#else
  std::memcpy(tile + moe_wgmma_word_offset(n, j, q), &even, 4);
  std::memcpy(tile + moe_wgmma_word_offset(n, j, 4 + q), &odd, 4);
#endif
}

// The byte of logical element (n, k) of block j in the tile (k 0..31), as the matrix unit reads a
// K-major tile under the 128-byte swizzle: 16-byte chunk 2 j + k / 16 of row n at chunk slot
// (chunk ^ n % 8). The CPU tests read the operand through it.
FB_HD int moe_decode_tile_byte(int n, int j, int k) {
  const int chunk = 2 * j + k / 16;
  return n * 128 + ((chunk ^ (n % 8)) * 16) + k % 16;
}

}  // namespace fb
