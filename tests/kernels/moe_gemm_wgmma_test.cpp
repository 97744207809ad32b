// The wgmma prefill engine of the MoE GEMMs (kernels/moe_gemm/moe_gemm_wgmma_plan.hpp), on the CPU:
// - the table e4m3 conversion (a token block's scale carried in its operand) is exact on every input;
// - its one-operation promotion and the canonical one on the shifted sums give the contract's bits
//   wherever the kernel takes them (and the one-operation form does not everywhere outside its
//   range, which is why the range exists);
// - the warp-parallel walk visits the one-at-a-time walk's tiles, and the tiles cover every valid
//   sort block once;
// - stage 1's row map puts each output's gate and up rows in one thread's fragment, and the staged
//   weight rows hold each tile's rows in the order the tile reads them;
// - the stage's byte layout is the 128-byte swizzle the wgmma descriptor reads.
// The kernel itself is compared with the emulation bitwise on the GPU (moe_gemm_test.cpp,
// MoeGemmGpu.WgmmaEngineEqualsTheEmulationAsClaimed).
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <random>
#include <set>
#include <vector>

#include "kernels/fp8_gemm/fp8_gemm_wgmma_layout.hpp"
#include "kernels/moe_gemm/moe_gemm_math.hpp"
#include "kernels/moe_gemm/moe_gemm_wgmma_plan.hpp"
#include "reference/codecs/fp8.hpp"
#include "reference/codecs/host_device.hpp"

namespace fb {
namespace {

TEST(MoeGemmWgmma, ShiftedPromotionEqualsTheCanonicalOne) {
  std::mt19937 rng(7);
  std::vector<int> sums = {0, 1, -1, 3, -4607, 4608, -4608, 1025, 2047};
  for (int i = 0; i < 8; ++i) sums.push_back(static_cast<int>(rng() % 9217) - 4608);
  std::vector<float> accs = {0.0f, -0.0f, 1.0f, -1.5e-30f, 3.0e30f, 0x1p-140f, -7.25f, 0x1.fffffep127f};
  for (int i = 0; i < 6; ++i) accs.push_back(std::ldexp(static_cast<float>(rng() % 65536) - 32768.0f, static_cast<int>(rng() % 200) - 120));
  // The fast form: every token scale that shifts, every weight scale of the fast range.
  std::int64_t checked = 0;
  for (std::uint32_t sa = kMxTokenShiftLo; sa <= kMxTokenShiftHi; ++sa)
    for (std::uint32_t sw = kMxFastScaleLo; sw <= kMxFastScaleHi; ++sw)
      for (int q : sums)
        for (float acc : accs) {
          const float f = static_cast<float>(q) * kMxMmaSumScale;
          const float d = std::ldexp(f, static_cast<int>(mx_token_shift(sa)));  // the shifted operand's sum
          const float want = mx_block_promote_mma(acc, f, mx_scale_float(sa), mx_scale_float(sw));
          const float got = mx_block_promote_fast(acc, d, mx_fast_weight_scale(sw));
          ASSERT_EQ(float_bits(got), float_bits(want)) << "sa " << sa << " sw " << sw << " S_q " << q << " acc " << acc;
          ++checked;
        }
  EXPECT_EQ(checked, 12 * 127 * 17 * 14);
  // The canonical form on the shifted sum (2^(12-u) first): every pair of scale bytes, NaN included.
  for (std::uint32_t sa = 0; sa < 256; ++sa)
    for (std::uint32_t sw = 0; sw < 256; sw += (sw < 40 || sw > 200) ? 1 : 7)
      for (int q : {0, 1, -3, 5, 4608, -4607})
        for (float acc : {0.0f, 0x1p-125f, 1.5f, -3.0e30f}) {
          const float f = static_cast<float>(q) * kMxMmaSumScale;
          const std::uint32_t u = mx_token_shift(sa);
          const float want = mx_block_promote_mma(acc, f, mx_scale_float(sa), mx_scale_float(sw));
          const float got = mx_block_promote_shifted(acc, std::ldexp(f, static_cast<int>(u)), mx_token_pre(u),
                                                     mx_scale_float(sa), mx_scale_float(sw));
          ASSERT_EQ(float_bits(got), float_bits(want)) << "sa " << sa << " sw " << sw << " S_q " << q << " acc " << acc;
        }
  // Past the weight range the one rounding can differ from the canonical steps: with sa = 133,
  // sw = 239 and S_q = 4608 the canonical weight-scale multiply overflows to inf (1.125 * 2^128),
  // while the fma adds the exact product to acc = -2^127 and stays finite. The weight range
  // [54, 180] is conservative for the shifted form (with sa in [122, 133] no product of the order
  // rounds for sw up to 238); the vote keeps the kernel on the canonical steps outside it.
  {
    const float f = 4608.0f * kMxMmaSumScale, acc = -0x1p127f;
    const float want = mx_block_promote_mma(acc, f, mx_scale_float(133), mx_scale_float(239));
    const float got = mx_block_promote_fast(acc, std::ldexp(f, static_cast<int>(mx_token_shift(133))), mx_fast_weight_scale(239));
    EXPECT_TRUE(std::isinf(want));
    EXPECT_TRUE(std::isfinite(got));
  }
  EXPECT_TRUE(mx_fast_scale(54) && mx_fast_scale(180) && !mx_fast_scale(53) && !mx_fast_scale(181) && !mx_fast_scale(255));
  EXPECT_EQ(mx_token_shift(121), 0u);
  EXPECT_EQ(mx_token_shift(122), 1u);
  EXPECT_EQ(mx_token_shift(133), 12u);
  EXPECT_EQ(mx_token_shift(134), 0u);
  EXPECT_EQ(mx_token_shift(255), 0u);
}

// The engine's conversion on every 16-bit input (either half of the word) and every shift: each
// e4m3 byte is its code's value times 2^(u-6), exactly, in k order; the byte permute's CPU form is
// PTX prmt's generic mode (the device form is the instruction itself: the GPU tests compare the
// engine and its block sums with the emulation).
TEST(MoeGemmWgmma, TableConversionIsTheCodeValueTimesItsScaleOnEveryInput) {
  EXPECT_EQ(byte_permute(0x33221100u, 0x77665544u, 0x7531u), 0x77553311u);
  EXPECT_EQ(byte_permute(0x7F80FF01u, 0u, 0xA9B8u), 0xFFFF0000u);  // top bit: the selected byte's sign, repeated
  for (std::uint32_t u = 0; u <= 12; ++u) {
    const E2m1E4m3Table table = e2m1_e4m3_table(u);
    const float scale = std::ldexp(1.0f, static_cast<int>(u) - 6);
    for (std::uint32_t t = 0; t < 0x10000u; ++t)
      for (const int half : {0, 1}) {  // t in bytes 2 half, 2 half + 1 of the word: elements 4 half + e
        std::uint32_t first, last;
        e2m1x8_to_e4m3x8_by_table(half ? (t << 16) | 0x1234u : t | 0xABCD0000u, table, first, last);
        const std::uint32_t mine = half ? last : first, other = half ? first : last;
        for (int e = 0; e < 4; ++e) {
          const auto code = static_cast<std::uint8_t>((t >> (4 * e)) & 0xFu);
          ASSERT_EQ(float_bits(fp8_e4m3fn_to_float(static_cast<std::uint8_t>(mine >> (8 * e)))),
                    float_bits(e2m1_to_float(code) * scale)) << "u " << u << " t " << t << " element " << e;
        }
        // The other half's constant codes (0x1234 or 0xABCD), converted the same way.
        for (int e = 0; e < 4; ++e) {
          const auto code = static_cast<std::uint8_t>(((half ? 0x1234u : 0xABCDu) >> (4 * e)) & 0xFu);
          ASSERT_EQ(float_bits(fp8_e4m3fn_to_float(static_cast<std::uint8_t>(other >> (8 * e)))),
                    float_bits(e2m1_to_float(code) * scale)) << "u " << u;
        }
      }
  }
}

// Random sorted layouts (runs of blocks per expert, some experts empty), every tile size: walking
// the blocks as the kernel does, every valid block is in exactly one tile, a tile has one expert,
// at most 128 / B blocks, and never crosses a group of 128 / B.
TEST(MoeGemmWgmma, TilesCoverEveryValidBlockOnce) {
  std::mt19937 rng(9);
  for (int trial = 0; trial < 400; ++trial) {
    std::vector<std::int32_t> experts;
    for (int e = 0; e < 1 + static_cast<int>(rng() % 12); ++e)
      for (int n = static_cast<int>(rng() % 11); n > 0; --n) experts.push_back(e);
    if (experts.empty()) experts.push_back(0);
    const auto blocks = static_cast<std::int64_t>(experts.size());
    const std::int64_t valid_blocks = 1 + static_cast<std::int64_t>(rng() % blocks);
    for (std::int64_t B : {16, 32, 64, 128}) {
      const std::int64_t per_tile = kMxWgTokens / B;
      std::vector<int> covered(static_cast<std::size_t>(blocks), 0);
      for (std::int64_t y = 0; y < valid_blocks; ++y) {
        if (!moe_wgmma_tile_start(experts.data(), y, per_tile)) continue;
        const int n = moe_wgmma_tile_blocks(experts.data(), y, per_tile, valid_blocks);
        ASSERT_GE(n, 1);
        ASSERT_LE(n, per_tile);
        ASSERT_EQ(y / per_tile, (y + n - 1) / per_tile) << "a tile crosses its group";
        for (std::int64_t b = y; b < y + n; ++b) {
          ASSERT_EQ(experts[static_cast<std::size_t>(b)], experts[static_cast<std::size_t>(y)]);
          ++covered[static_cast<std::size_t>(b)];
        }
      }
      for (std::int64_t b = 0; b < blocks; ++b)
        ASSERT_EQ(covered[static_cast<std::size_t>(b)], b < valid_blocks ? 1 : 0) << "block " << b << " trial " << trial;
    }
  }
}

// The kernel's warp-parallel walk (moe_wgmma_walk_next, here with a 32-lane loop for the ballot)
// visits the same tiles in the same order as testing the CTA's items one at a time, with the same
// lengths: random layouts, every sort block size (B = 1 makes tiles of up to 128 blocks, so the
// length takes several ballots), several grids and column tile counts, every CTA of the grid.
TEST(MoeGemmWgmma, WarpWalkVisitsTheTilesOfTheOneAtATimeWalk) {
  const auto ballot = [](auto&& pred) {
    std::uint32_t mask = 0;
    for (int lane = 0; lane < 32; ++lane)
      if (pred(lane)) mask |= 1u << lane;
    return mask;
  };
  std::mt19937 rng(21);
  std::int64_t tiles = 0;
  for (int trial = 0; trial < 60; ++trial) {
    std::vector<std::int32_t> experts;
    const int run_max = trial % 3 == 0 ? 300 : 12;
    for (int e = 0; e < 1 + static_cast<int>(rng() % 16); ++e)
      for (int n = static_cast<int>(rng() % run_max); n > 0; --n) experts.push_back(e);
    if (experts.empty()) experts.push_back(0);
    const auto count = static_cast<std::int64_t>(experts.size());
    const std::int64_t valid_blocks = 1 + static_cast<std::int64_t>(rng() % count);
    for (std::int64_t B : {1, 4, 16, 32, 128}) {
      const std::int64_t per_tile = kMxWgTokens / B;
      for (std::int64_t col_tiles : {1, 12, 48})
        for (std::int64_t step : {1, 5, 132})
          for (std::int64_t cta = 0; cta < step; ++cta) {
            std::int64_t i = cta;
            for (std::int64_t want = cta; want < valid_blocks * col_tiles; want += step) {
              const std::int64_t y = want / col_tiles;
              if (!moe_wgmma_tile_start(experts.data(), y, per_tile)) continue;
              std::int64_t item = -1;
              int blocks = 0;
              ASSERT_TRUE(moe_wgmma_walk_next(experts.data(), i, step, valid_blocks, col_tiles, per_tile, item, blocks, ballot));
              ASSERT_EQ(item, want) << "trial " << trial << " B " << B << " step " << step << " cta " << cta;
              ASSERT_EQ(blocks, moe_wgmma_tile_blocks(experts.data(), y, per_tile, valid_blocks)) << "item " << item;
              ASSERT_EQ(i, want + step);
              ++tiles;
            }
            std::int64_t item = -1;
            int blocks = 0;
            ASSERT_FALSE(moe_wgmma_walk_next(experts.data(), i, step, valid_blocks, col_tiles, per_tile, item, blocks, ballot));
          }
    }
  }
  EXPECT_GT(tiles, 100000);
}

// Stage 1: the 128 rows of a tile are the gate and up rows of its 64 outputs, each once, and the
// accumulator rows of every consumer thread (rows l/4 and l/4 + 8 of its warp's 16, the wgmma
// fragment) are the gate and the up row of the output its epilogue writes.
TEST(MoeGemmWgmma, Stage1RowMapPairsGateAndUpInOneThread) {
  const std::int64_t I = 768;
  for (std::int64_t o0 : {0, 64, 704}) {
    std::set<std::int64_t> rows;
    for (int r = 0; r < kMxWgRows; ++r) rows.insert(moe_wgmma_stage1_row(r, o0, I));
    ASSERT_EQ(rows.size(), static_cast<std::size_t>(kMxWgRows));
    for (std::int64_t o = o0; o < o0 + 64; ++o) {
      EXPECT_EQ(rows.count(o), 1u);
      EXPECT_EQ(rows.count(I + o), 1u);
    }
    for (int g = 0; g < 2; ++g)
      for (int w = 0; w < 4; ++w)
        for (int lane = 0; lane < 32; ++lane) {
          const int r = 64 * g + 16 * w + lane / 4;
          const std::int64_t o = moe_wgmma_stage1_output(g, w, lane, o0);
          EXPECT_EQ(moe_wgmma_stage1_row(r, o0, I), o);
          EXPECT_EQ(moe_wgmma_stage1_row(r + 8, o0, I), I + o);
        }
  }
}

// The staged weight rows are a permutation of an expert's rows, and a TMA box of 128 staged rows
// from column tile c's first holds, at CTA-local row t, the row the producer converts for (t, c):
// stage 1's gate/up map, stage 2 in order. 1.2 GB at stage 1 of the m31 shapes.
TEST(MoeGemmWgmma, StagedWeightRowsAreTheTilesRowsInOrder) {
  for (const bool stage1 : {true, false}) {
    const std::int64_t outputs = stage1 ? 768 : 6144, rows = stage1 ? 2 * outputs : outputs;
    const std::int64_t per_tile = stage1 ? kMxWgRows / 2 : kMxWgRows;
    std::vector<int> seen(static_cast<std::size_t>(rows), 0);
    for (std::int64_t q = 0; q < rows; ++q) {
      const std::int64_t src = moe_wgmma_staged_weight_row(q, stage1, outputs);
      ASSERT_GE(src, 0);
      ASSERT_LT(src, rows);
      ++seen[static_cast<std::size_t>(src)];
      const std::int64_t col = q / kMxWgRows;
      const int t = static_cast<int>(q % kMxWgRows);
      const std::int64_t producer = stage1 ? moe_wgmma_stage1_row(t, col * per_tile, outputs) : col * kMxWgRows + t;
      EXPECT_EQ(src, producer) << "stage1 " << stage1 << " q " << q;
    }
    for (std::int64_t r = 0; r < rows; ++r) EXPECT_EQ(seen[static_cast<std::size_t>(r)], 1) << "row " << r;
  }
  EXPECT_EQ((MoeWeightStageLayout{128, 2 * 768, 6144}.bytes()), 128LL * 1536 * 6144);
}

// The producer writes e4m3 word v of MX block j in row r where the descriptor's 128-byte swizzle
// (the fp8 GEMM's checked layout) reads byte 32 j + 4 v of the row: each word at its own 4 bytes,
// and the stage's regions do not overlap.
TEST(MoeGemmWgmma, StageLayoutIsTheDescriptorsSwizzle) {
  std::set<int> offsets;
  for (int r = 0; r < kMxWgRows; ++r)
    for (int j = 0; j < kMxWgStageBlocks; ++j)
      for (int v = 0; v < 8; ++v) {
        const int at = moe_wgmma_word_offset(r, j, v);
        ASSERT_EQ(at, wgmma_tile_offset(r, 32 * j + 4 * v)) << r << " " << j << " " << v;
        ASSERT_EQ(at % 4, 0);
        offsets.insert(at);
      }
  EXPECT_EQ(offsets.size(), static_cast<std::size_t>(kMxWgTileBytes / 4));
  EXPECT_EQ(*offsets.rbegin(), kMxWgTileBytes - 4);
  EXPECT_EQ(kMxWgTokenScalesAt, 2 * kMxWgTileBytes);
  EXPECT_LE(kMxWgVotesAt + 4, kMxWgStageBytes);
  EXPECT_EQ(kMxWgStageBytes % 1024, 0);
  EXPECT_LE(kMxWgSmemBytes, 227 * 1024);  // what one CTA may use on sm_90
}

}  // namespace
}  // namespace fb
