// The prefill engine of the exact MoE GEMMs (moe_gemm_wgmma.hip, wgmma on sm_90a): its tiles, row
// maps, shared-memory layout and promotion, host and device code (FB_HD) so the CPU tests check every
// map and the promotion's equality with the canonical order without a GPU.
//
// A CTA tile is 128 weight rows x 128 sorted rows (tokens): the tokens are up to 128 / B consecutive
// sort blocks of one expert (a "tile start" is a block that begins its group of 128 / B or whose
// expert differs from the block before; the tile runs to the group's end, the expert's end or the
// last valid block), so every valid sort block lies in exactly one tile. The weight rows are the
// MMA's A (two consumer warpgroups of 64), the tokens its B (N = 128). K advances in stages of 128
// (four 32-element MX blocks, one m64n128k32 MMA each, a fresh accumulator per block).
//
// Stage 1's row map puts an output's gate and up rows 8 apart inside each 16-row slice of a
// warpgroup's 64 rows: the accumulator fragment then holds gate and up of one output in one thread
// (rows l/4 and l/4 + 8 of its warp's slice), so SwiGLU runs in registers.
#pragma once

#include <cstdint>

#include "kernels/moe_gemm/moe_gemm_math.hpp"

namespace fb {

inline constexpr int kMxWgRows = 128;    // weight rows of a CTA tile (2 warpgroups x 64)
inline constexpr int kMxWgTokens = 128;  // sorted rows of a CTA tile (the MMA's N)
inline constexpr int kMxWgStageK = 128;  // K elements per pipeline stage: 4 MX blocks
inline constexpr int kMxWgStageBlocks = kMxWgStageK / 32;
inline constexpr int kMxWgStages = 4;    // stages in flight

// Whether the prefill engine takes a GEMM of this shape: inner (the dot products' K) a multiple of
// 128, the output columns a whole number of CTA tiles (stage 1: 64 outputs, stage 2: 128), and sort
// blocks that tile 128 rows.
FB_HD bool moe_wgmma_shape_fits(std::int64_t inner, std::int64_t outputs, bool stage1, std::int64_t block) {
  const std::int64_t per_tile = stage1 ? kMxWgRows / 2 : kMxWgRows;
  return inner % kMxWgStageK == 0 && outputs % per_tile == 0 && block > 0 && block <= kMxWgTokens &&
         kMxWgTokens % block == 0;
}

// Whether sort block y starts a tile (y < the valid blocks; expert ids of blocks 0..y).
FB_HD bool moe_wgmma_tile_start(const std::int32_t* expert_ids, std::int64_t y, std::int64_t per_tile) {
  return y % per_tile == 0 || expert_ids[y - 1] != expert_ids[y];
}
// Whether block y + k (k >= 1) belongs to the tile starting at y: before the group's end, the
// expert's end and valid_blocks (the kernel asks for k = 1.. in parallel and counts the run).
FB_HD bool moe_wgmma_tile_continues(const std::int32_t* expert_ids, std::int64_t y, std::int64_t k,
                                    std::int64_t per_tile, std::int64_t valid_blocks) {
  return y + k < valid_blocks && (y + k) % per_tile != 0 && expert_ids[y + k] == expert_ids[y];
}
// The sort blocks of the tile starting at y: the run of blocks that continue it, plus y.
FB_HD int moe_wgmma_tile_blocks(const std::int32_t* expert_ids, std::int64_t y, std::int64_t per_tile,
                                std::int64_t valid_blocks) {
  int n = 1;
  while (moe_wgmma_tile_continues(expert_ids, y, n, per_tile, valid_blocks)) ++n;
  return n;
}

// The lowest set lane of a 32-lane mask (mask != 0).
FB_HD int moe_lowest_lane(std::uint32_t mask) {
#if defined(__CUDA_ARCH__)
  return __ffs(mask) - 1;
#else
  return __builtin_ctz(mask);
#endif
}

// A CTA's walk over work items (sort block, column tile), column tiles fastest: from item i in
// steps of `step` (the grid), the next item whose block starts a tile, and that tile's blocks.
// Warp-parallel: ballot(pred) returns the mask of the 32 lanes l with pred(l) (in the kernel
// __ballot_sync, each lane evaluating its own l; on the CPU a loop), so one round of reads tests 32
// items and one round finds up to 32 further blocks of the tile (run 60b's profile of stage 2: the
// one-item-at-a-time walk, each skip and each block of a tile's length a dependent read of the expert
// ids, and the epilogue's reads were about a fifth of the samples). The same items in the same
// order as testing them one at a time (MoeGemmWgmma.WarpWalkVisitsTheTilesOfTheOneAtATimeWalk).
// Returns false past the last item; else `item` is the found item, `blocks` its tile's sort blocks,
// and i the item after it.
template <class Ballot>
FB_HD bool moe_wgmma_walk_next(const std::int32_t* expert_ids, std::int64_t& i, std::int64_t step,
                               std::int64_t valid_blocks, std::int64_t col_tiles, std::int64_t per_tile,
                               std::int64_t& item, int& blocks, Ballot&& ballot) {
  const std::int64_t items = valid_blocks * col_tiles;
  for (; i < items; i += 32 * step) {
    const std::uint32_t starts = ballot([&](int lane) {
      const std::int64_t m = i + lane * step;
      return m < items && moe_wgmma_tile_start(expert_ids, m / col_tiles, per_tile);
    });
    if (starts == 0) continue;
    item = i + moe_lowest_lane(starts) * step;
    const std::int64_t y = item / col_tiles;
    blocks = 1;
    for (std::int64_t k0 = 1;; k0 += 32) {  // only the run from k0 counts: later lanes may say yes again
      const std::uint32_t more =
          ballot([&](int lane) { return moe_wgmma_tile_continues(expert_ids, y, k0 + lane, per_tile, valid_blocks); });
      const int run = more == 0xFFFFFFFFu ? 32 : moe_lowest_lane(~more);
      blocks += run;
      if (run < 32) break;
    }
    i = item + step;
    return true;
  }
  return false;
}

// Stage 1: the W13 row (within the expert's 2I rows) of CTA-local weight row r for the tile of
// outputs o0 .. o0 + 63: warpgroup g = r / 64, warp w = (r / 16) % 4, i = r % 16; rows i < 8 are the
// gate rows of outputs o0 + 32 g + 8 w + i, rows i >= 8 the up rows of the same outputs.
FB_HD std::int64_t moe_wgmma_stage1_row(int r, std::int64_t o0, std::int64_t inter) {
  const int g = r / 64, w = (r / 16) % 4, i = r % 16;
  const std::int64_t o = o0 + 32 * g + 8 * w + (i & 7);
  return i < 8 ? o : inter + o;
}
// The output of the gate row held by (warpgroup g, warp w, lane l): o0 + 32 g + 8 w + l / 4.
FB_HD std::int64_t moe_wgmma_stage1_output(int g, int w, int lane, std::int64_t o0) {
  return o0 + 32 * g + 8 * w + lane / 4;
}

// Shared-memory layout of one stage: the weight and token tiles as e4m3 (K-major, 128-byte rows,
// the 128-byte swizzle of fp8_gemm_wgmma_layout.hpp: row r's 16-byte chunk c at slot c ^ (r % 8)),
// then per block j of the stage: the tokens' scales as floats, the tokens' first factors 2^(12-u)
// (below), the weights' fast scales as floats, the weights' scale bytes; then one fast-path vote per
// producer warp.
inline constexpr int kMxWgTileBytes = kMxWgRows * kMxWgStageK;  // 16 KB (tokens: the same)
inline constexpr int kMxWgTokenScalesAt = 2 * kMxWgTileBytes;
inline constexpr int kMxWgTokenPreAt = kMxWgTokenScalesAt + kMxWgStageBlocks * kMxWgTokens * 4;
inline constexpr int kMxWgWeightScalesAt = kMxWgTokenPreAt + kMxWgStageBlocks * kMxWgTokens * 4;
inline constexpr int kMxWgWeightBytesAt = kMxWgWeightScalesAt + kMxWgStageBlocks * kMxWgRows * 4;
inline constexpr int kMxWgVotesAt = kMxWgWeightBytesAt + kMxWgStageBlocks * kMxWgRows;
inline constexpr int kMxWgStageBytes = (kMxWgVotesAt + 4 + 1023) / 1024 * 1024;  // tiles stay 1024-aligned
// Stages, 2 mbarriers a stage, 1024 bytes of alignment slack.
inline constexpr int kMxWgSmemBytes = kMxWgStages * kMxWgStageBytes + 2 * kMxWgStages * 8 + 1024;

// The staged token rows (a workspace of the exact and fast variants, written by the engine's token
// prologue, moe_gemm_wgmma.hip): every sorted position's activation row converted once to the e4m3
// bytes the stage's token tile holds (its blocks by their tables, in k order), so the producer reads
// a token tile by TMA instead of converting it once per column tile (stage 1 converted each row 12
// times at the m31 shapes, stage 2 48 times). Then each row's scale bytes, row-major (one 32-bit
// word a stage), and each row's largest scale byte (fast). Rows that hold no pair (padding, past the
// valid count) are zeros with scale bytes 0x7F.
struct MoeTokenStageLayout {
  std::int64_t rows = 0, inner = 0;  // sorted positions (max_entries) x the dot products' K
  FB_HD std::int64_t scales_at() const { return rows * inner; }
  FB_HD std::int64_t maxima_at() const { return scales_at() + rows * (inner / 32); }
  FB_HD std::int64_t bytes() const { return (maxima_at() + rows + 15) / 16 * 16; }
};

// The staged weight rows (a workspace of the exact and fast variants where the engine stages them:
// moe_wgmma_stages_weights, moe_gemm_wgmma.hpp): every weight row converted once to the e4m3 bytes a
// stage's weight tile holds (exact: the codes' values times 2^-6, the scales left to the promotion;
// fast: each block by its window below the row's largest scale byte), in k order, row-major in the
// order the CTA tiles read them, so one TMA box of 128 rows x 128 K is a stage's weight tile. Without
// it the producer converts its weight row once per token tile (8 times an expert at T = 32768).
// Staged row q of expert e is CTA-local row q % 128 of column tile q / 128 (stage 1's gate/up map);
// the scale bytes stay where they are (the producer reads them from the weights' own array).
struct MoeWeightStageLayout {
  std::int64_t experts = 0, rows = 0, inner = 0;  // rows: an expert's weight rows (stage 1: 2I; stage 2: K)
  FB_HD std::int64_t bytes() const { return experts * rows * inner; }
};
// The weight row (within its expert's rows) that staged row q holds.
FB_HD std::int64_t moe_wgmma_staged_weight_row(std::int64_t q, bool stage1, std::int64_t outputs) {
  if (!stage1) return q;
  return moe_wgmma_stage1_row(static_cast<int>(q % kMxWgRows), q / kMxWgRows * (kMxWgRows / 2), outputs);
}

// Where the 32 e4m3 bytes of MX block j (0..3) of a stage go in row r: e2m1 word q (bytes 4q..4q+3
// of the block's 16, elements 8q..8q+7) becomes e4m3 words 2q (elements 8q..8q+3) and 2q + 1
// (8q+4..8q+7), so the block's 32 bytes are in k order (until run 60 they were a permutation of it,
// the same for the weights and the tokens). Byte offset of e4m3 word v (0..7) of block j in row r:
FB_HD int moe_wgmma_word_offset(int r, int j, int v) {
  const int chunk = 2 * j + v / 4;  // 16-byte chunk of the row's 128 bytes
  return r * 128 + ((chunk ^ (r % 8)) * 16) + (v % 4) * 4;
}

// The promotion. Canonical (moe_gemm_math.hpp): acc + ((f * 2^12) * 2^(sa-127)) * 2^(sw-127), four
// operations, f = S_q * 2^-14 the unscaled block sum. Where both scale bytes lie in
// [kMxFastScaleLo, kMxFastScaleHi] every step of it is exact but the add: f * 2^12 = S_q / 4, then
// S_q * 2^(sa-129) and S_q * 2^(sa+sw-256) with |S_q| < 2^13 and sa + sw in [108, 360], so no
// product leaves fp32's range or loses a bit (2^(108-256) = 2^-148 is above the smallest subnormal
// step, 2^-149). One fma of the same exact product rounds once: the same bits.
inline constexpr std::uint32_t kMxFastScaleLo = 54, kMxFastScaleHi = 180;
FB_HD bool mx_fast_scale(std::uint32_t s) { return s >= kMxFastScaleLo && s <= kMxFastScaleHi; }

// The token's scale rides in its operand. A token row's block whose scale byte sa lies in
// [kMxTokenShiftLo, kMxTokenShiftHi] is converted with u = sa - 121 (1..12;
// e2m1x8_to_e4m3x8_by_table: each e4m3 byte is the code's value times 2^(u-6), exactly), so the
// matrix unit's block sum is d = f * 2^u, exact (the block's products all carry the same 2^u;
// MoeGemmGpu.MatrixUnitBlockSumsAreExact checks the fp8 unit on operands so converted at u = 0, 1, 6
// and 12, through mma.sync; the wgmma instruction itself is checked end to end by the engine's
// bitwise test). Other blocks keep u = 0. Then:
// - fast, where the stage's every token block is shifted and every weight scale is in the fast
//   range: fma(d, 2^(sw-121), acc). d * 2^(sw-121) = f * 2^(sa-127) * 2^(sw-115) is the canonical
//   exact product (sa in [122, 133] lies in the fast range), rounded once: one operation per
//   output, no per-token factor (before, a product of the two scales per output came first);
// - otherwise the canonical operations with d * 2^(12-u) (= f * 2^12 exactly, a power of two on
//   a 13-bit value) in place of f * 2^12: the same bits.
// MoeGemmWgmma.ShiftedPromotionEqualsTheCanonicalOne checks both forms against the canonical one.
inline constexpr std::uint32_t kMxTokenShiftLo = 122, kMxTokenShiftHi = 133;
FB_HD std::uint32_t mx_token_shift(std::uint32_t sa) {
  return sa >= kMxTokenShiftLo && sa <= kMxTokenShiftHi ? sa - (kMxTokenShiftLo - 1u) : 0u;
}
FB_HD float mx_token_pre(std::uint32_t u) { return mx_scale_float(139u - u); }  // 2^(12-u)
// The weights' factor of the fast form: 2^(sw-121) (fast range only).
FB_HD float mx_fast_weight_scale(std::uint32_t sw) { return mx_scale_float(sw + 6u); }
FB_HD float mx_block_promote_fast(float acc, float shifted_sum, float fast_scale_w) {
#if defined(__CUDA_ARCH__)
  return __fmaf_rn(shifted_sum, fast_scale_w, acc);
#else
  return __builtin_fmaf(shifted_sum, fast_scale_w, acc);
#endif
}
FB_HD float mx_block_promote_shifted(float acc, float shifted_sum, float pre, float scale_a, float scale_w) {
  return acc + ((shifted_sum * pre) * scale_a) * scale_w;
}

}  // namespace fb
