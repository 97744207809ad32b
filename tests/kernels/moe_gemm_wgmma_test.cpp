// The wgmma prefill engine of the MoE GEMMs (kernels/moe_gemm/moe_gemm_wgmma_plan.hpp), on the CPU:
// its two-operation promotion equals the canonical one wherever the kernel takes it (and not
// outside that range, which is why the range exists), its tiles cover every valid sort block once,
// stage 1's row map puts each output's gate and up rows in one thread's fragment, and the stage's
// byte layout is the 128-byte swizzle the wgmma descriptor reads. The kernel itself is compared with
// the emulation bitwise on the GPU (moe_gemm_test.cpp, MoeGemmGpu.WgmmaEngineEqualsTheEmulationBitwise).
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <random>
#include <set>
#include <vector>

#include "kernels/fp8_gemm/fp8_gemm_wgmma_layout.hpp"
#include "kernels/moe_gemm/moe_gemm_math.hpp"
#include "kernels/moe_gemm/moe_gemm_wgmma_plan.hpp"
#include "reference/codecs/host_device.hpp"

namespace fb {
namespace {

TEST(MoeGemmWgmma, FastPromotionEqualsTheCanonicalOne) {
  std::mt19937 rng(7);
  std::vector<int> sums = {0, 1, -1, 3, -4607, 4608, -4608, 1025, 2047};
  for (int i = 0; i < 8; ++i) sums.push_back(static_cast<int>(rng() % 9217) - 4608);
  std::vector<float> accs = {0.0f, -0.0f, 1.0f, -1.5e-30f, 3.0e30f, 0x1p-140f, -7.25f, 0x1.fffffep127f};
  for (int i = 0; i < 6; ++i) accs.push_back(std::ldexp(static_cast<float>(rng() % 65536) - 32768.0f, static_cast<int>(rng() % 200) - 120));
  std::int64_t checked = 0;
  for (std::uint32_t sa = kMxFastScaleLo; sa <= kMxFastScaleHi; ++sa)
    for (std::uint32_t sw = kMxFastScaleLo; sw <= kMxFastScaleHi; ++sw)
      for (int q : sums)
        for (float acc : accs) {
          const float f = static_cast<float>(q) * kMxMmaSumScale;
          const float want = mx_block_promote_mma(acc, f, mx_scale_float(sa), mx_scale_float(sw));
          const float got = mx_block_promote_fast(acc, f, mx_scale_float(sa), mx_fast_weight_scale(sw));
          ASSERT_EQ(float_bits(got), float_bits(want)) << "sa " << sa << " sw " << sw << " S_q " << q << " acc " << acc;
          ++checked;
        }
  EXPECT_GT(checked, 127 * 127 * 17 * 14 - 1);
  // Just outside the range the two forms differ: with sa + sw = 105 and S_q = 5 the exact product
  // is 1.25 * 2^-149; the canonical form rounds it to 2^-149 first, and 2^-125 + 2^-149 is then a tie
  // that rounds to even (2^-125), while one rounding of the exact sum goes up. The vote is what
  // keeps the kernel on the canonical bits there.
  {
    const float f = 5.0f * kMxMmaSumScale;
    const float want = mx_block_promote_mma(0x1p-125f, f, mx_scale_float(52), mx_scale_float(53));
    const float got = mx_block_promote_fast(0x1p-125f, f, mx_scale_float(52), mx_scale_float(53u + 12u));
    EXPECT_EQ(float_bits(want), float_bits(0x1p-125f));
    EXPECT_NE(float_bits(got), float_bits(want));
  }
  EXPECT_TRUE(mx_fast_scale(54) && mx_fast_scale(180) && !mx_fast_scale(53) && !mx_fast_scale(181) && !mx_fast_scale(255));
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
