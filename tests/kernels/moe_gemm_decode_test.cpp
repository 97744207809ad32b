// The wgmma decode engine of the MoE GEMMs (kernels/moe_gemm/moe_gemm_decode_plan.hpp), on the CPU:
// - the matrix unit, simulated from its definition on exactly the operands the kernel builds (each
//   thread's A registers from its weight words, the token tile written by the 128 threads' stores
//   and read through the 128-byte swizzle), gives every block sum S_q * 2^(u-14) with the token
//   block's shift u, for every pass width N;
// - the threads' token words cover a stage's tile once (no byte written twice, none left out), and a
//   chunk's stage tiles and scale bytes are disjoint, aligned and inside the chunk;
// - the weight scale words' range test (five bit operations) is the byte rule;
// - stage 1's row map gives each thread one output's gate and up rows, and a CTA's 64 rows are the
//   gate and up rows of its 32 outputs, each once;
// - the shapes it takes.
// The kernel itself is compared with the emulation bitwise on the GPU (moe_gemm_test.cpp,
// MoeGemmGpu.DecodeEngineEqualsTheEmulationAsClaimed).
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <random>
#include <set>
#include <vector>

#include "kernels/moe_gemm/moe_gemm_decode.hpp"
#include "kernels/moe_gemm/moe_gemm_decode_plan.hpp"
#include "kernels/moe_gemm/moe_gemm_fragments.hpp"
#include "reference/codecs/fp8.hpp"

namespace fb {
namespace {

// A random e2m1 byte pair pool with the adversarial codes (all 6s, 0.5s, zeros, signs).
std::uint8_t random_codes(std::mt19937& rng) {
  switch (rng() % 6) {
    case 0: return 0x77;  // +6 +6
    case 1: return 0xFF;  // -6 -6
    case 2: return 0x11;  // 0.5 0.5
    case 3: return 0x00;
    default: return static_cast<std::uint8_t>(rng());
  }
}

void expect_block_sums(int n_tokens, std::uint64_t seed) {
  std::mt19937 rng(static_cast<std::uint32_t>(seed));
  // One stage: 64 weight rows and n_tokens token rows of 64 e2m1 bytes (4 blocks), token scale bytes.
  std::vector<std::uint8_t> w(kMxDecRows * 64), x(kMxDecMaxTokens * 64, 0);
  std::uint32_t sa[kMxDecMaxTokens][kMxDecStageBlocks];
  for (auto& b : w) b = random_codes(rng);
  for (int n = 0; n < n_tokens; ++n)
    for (int i = 0; i < 64; ++i) x[n * 64 + i] = random_codes(rng);
  for (auto& row : sa)
    for (auto& s : row) s = (rng() % 3 == 0) ? rng() % 256 : kMxTokenShiftLo + rng() % 12;  // shifted and not
  const auto word = [](const std::vector<std::uint8_t>& v, int row, int j, int q) {
    return load_u32(v.data() + row * 64 + 16 * j + 4 * q);
  };

  // The token tile, written as the kernel's threads write it, as the chunk's last stage.
  std::vector<std::uint8_t> chunk(kMxDecChunkBytes, 0xA5);  // poisoned: every byte the MMA reads must be written
  std::uint8_t* tile = chunk.data() + moe_decode_chunk_tile(moe_decode_chunk_stages(n_tokens) - 1, n_tokens);
  for (int t = 0; t < kMxDecThreads; ++t)
    for (int p = 0; p < n_tokens / 8; ++p) {
      const int n = moe_decode_token_row(t, p), j = moe_decode_token_block(t), q = moe_decode_token_word(t);
      moe_decode_store_token_word(tile, n, j, q, word(x, n, j, q), e2m1_e4m3_table(mx_token_shift(sa[n][j])));
    }

  const auto e4m3 = [](std::uint32_t reg, int i) {
    return static_cast<double>(fp8_e4m3fn_to_float(static_cast<std::uint8_t>(reg >> (8 * i))));
  };
  for (int j = 0; j < kMxDecStageBlocks; ++j) {
    // A (64 x 32) from the threads' registers: PTX's fragment of wgmma m64nNk32 with 8-bit A in
    // registers, warp w holding rows 16 w .. 16 w + 15 as mma.m16n8k32's A.
    double A[kMxDecRows][32];
    for (int t = 0; t < kMxDecThreads; ++t) {
      const int warp = t / 32, lane = t % 32, q = lane % 4, r0 = 16 * warp + lane / 4;
      const MxAFragment f = mx_a_fragment_from_words(word(w, r0, j, q), word(w, r0 + 8, j, q));
      for (int i = 0; i < 4; ++i) {
        A[r0][4 * q + i] = e4m3(f.a[0], i);
        A[r0 + 8][4 * q + i] = e4m3(f.a[1], i);
        A[r0][16 + 4 * q + i] = e4m3(f.a[2], i);
        A[r0 + 8][16 + 4 * q + i] = e4m3(f.a[3], i);
      }
    }
    for (int r = 0; r < kMxDecRows; ++r)
      for (int n = 0; n < n_tokens; ++n) {
        double d = 0.0;
        for (int k = 0; k < 32; ++k) {
          const std::uint8_t b = tile[static_cast<std::size_t>(moe_decode_tile_byte(n, j, k))];
          ASSERT_NE(b, 0xA5) << "an unwritten tile byte: row " << n << " block " << j << " k " << k;
          d += A[r][k] * static_cast<double>(fp8_e4m3fn_to_float(b));
        }
        const int u = static_cast<int>(mx_token_shift(sa[n][j]));
        const int want = mx_block_sum_quarters(x.data() + n * 64 + 16 * j, w.data() + r * 64 + 16 * j);
        ASSERT_EQ(d, std::ldexp(static_cast<double>(want), u - 14))
            << "N " << n_tokens << " row " << r << " token " << n << " block " << j << " u " << u;
      }
  }
}

TEST(MoeGemmDecode, MatrixUnitOnTheKernelsOperandsGivesTheBlockSums) {
  for (int n : {8, 16})
    for (std::uint64_t seed = 1; seed <= 6; ++seed) expect_block_sums(n, seed * 31 + static_cast<std::uint64_t>(n));
}

TEST(MoeGemmDecode, TokenWordsCoverTheStageTileOnce) {
  for (int n_tokens : {8, 16}) {
    std::vector<int> writes(kMxDecMaxTokens * 128, 0);
    std::set<std::tuple<int, int, int>> words;
    for (int t = 0; t < kMxDecThreads; ++t)
      for (int p = 0; p < n_tokens / 8; ++p) {
        const int n = moe_decode_token_row(t, p), j = moe_decode_token_block(t), q = moe_decode_token_word(t);
        ASSERT_LT(n, n_tokens);
        EXPECT_TRUE(words.insert({n, j, q}).second) << "word converted twice";
        for (int v : {q, 4 + q})
          for (int b = 0; b < 4; ++b) ++writes[static_cast<std::size_t>(moe_wgmma_word_offset(n, j, v) + b)];
      }
    EXPECT_EQ(words.size(), static_cast<std::size_t>(n_tokens * 16));
    for (std::size_t i = 0; i < writes.size(); ++i) EXPECT_EQ(writes[i], static_cast<int>(i) < n_tokens * 128 ? 1 : 0) << i;
  }
}

// A chunk's stage tiles lie inside the chunk, one after another, each on a 1024-byte boundary (the
// swizzle's period, which the wgmma descriptor assumes); its scale bytes, one a (stage, block, row),
// lie between the tiles and the ring; the chunk is whole pairs of stages; and the shared memory lets
// four CTAs share an SM (Hopper: 228 KB, 1 KB of it reserved a CTA, plus the kernel's static 640).
TEST(MoeGemmDecode, ChunkLayoutIsDisjointAndAligned) {
  for (int n_tokens : {8, 16}) {
    const int stages = moe_decode_chunk_stages(n_tokens);
    EXPECT_EQ(stages % 2, 0);
    EXPECT_EQ(stages * n_tokens * 128, kMxDecChunkBytes);
    for (int c = 0; c < stages; ++c) {
      EXPECT_EQ(moe_decode_chunk_tile(c, n_tokens) % 1024, 0);
      EXPECT_LE(moe_decode_chunk_tile(c, n_tokens) + n_tokens * 128, kMxDecChunkBytes);
      if (c > 0) {
        EXPECT_EQ(moe_decode_chunk_tile(c, n_tokens), moe_decode_chunk_tile(c - 1, n_tokens) + n_tokens * 128);
      }
    }
    std::set<int> at;
    for (int c = 0; c < stages; ++c)
      for (int j = 0; j < kMxDecStageBlocks; ++j)
        for (int n = 0; n < n_tokens; ++n) {
          const int b = moe_decode_chunk_scale(c, j, n);
          EXPECT_TRUE(at.insert(b).second);
          EXPECT_GE(b, kMxDecChunkBytes);
          EXPECT_LT(b, kMxDecRingAt);
        }
  }
  EXPECT_EQ(kMxDecRingAt % 1024, 0);
  EXPECT_LE(4 * (kMxDecSmemBytes + 640 + 1024), 228 * 1024);
}

// The five-operation range test of a scale word is the byte rule (mx_fast_scale of each byte): every
// byte value in every position (the others in range), then random words.
TEST(MoeGemmDecode, FastScalesWordIsTheByteRule) {
  const auto rule = [](std::uint32_t w) {
    for (int j = 0; j < 4; ++j)
      if (!mx_fast_scale((w >> (8 * j)) & 0xFFu)) return false;
    return true;
  };
  for (int j = 0; j < 4; ++j)
    for (std::uint32_t b = 0; b < 256; ++b)
      for (std::uint32_t other : {54u, 127u, 180u}) {
        std::uint32_t w = other * 0x01010101u;
        w = (w & ~(0xFFu << (8 * j))) | (b << (8 * j));
        EXPECT_EQ(moe_decode_fast_scales(w), rule(w)) << std::hex << w;
      }
  std::mt19937 rng(7);
  for (int i = 0; i < 200000; ++i) {
    const std::uint32_t w = i % 2 ? static_cast<std::uint32_t>(rng()) : 0x36363636u + (static_cast<std::uint32_t>(rng()) & 0x7F7F7F7Fu);
    ASSERT_EQ(moe_decode_fast_scales(w), rule(w)) << std::hex << w;
  }
}

TEST(MoeGemmDecode, Stage1ThreadsHoldOneOutputsGateAndUp) {
  const std::int64_t inter = 768;
  for (std::int64_t tile : {0, 1, 23}) {
    std::set<std::int64_t> rows;
    for (int t = 0; t < kMxDecThreads; ++t) {
      const int warp = t / 32, lane = t % 32, r0 = 16 * warp + lane / 4;
      const std::int64_t o = moe_decode_stage1_output(warp, lane, tile);
      EXPECT_GE(o, 32 * tile);
      EXPECT_LT(o, 32 * tile + 32);
      EXPECT_EQ(moe_decode_weight_row(r0, tile, true, inter), o);
      EXPECT_EQ(moe_decode_weight_row(r0 + 8, tile, true, inter), inter + o);
    }
    for (int r = 0; r < kMxDecRows; ++r) rows.insert(moe_decode_weight_row(r, tile, true, inter));
    std::set<std::int64_t> want;
    for (std::int64_t o = 32 * tile; o < 32 * tile + 32; ++o) want.insert({o, inter + o});
    EXPECT_EQ(rows, want);
    EXPECT_EQ(moe_decode_weight_row(5, tile, false, 6144), 64 * tile + 5);
  }
}

// The ring's boxes hold each CTA-local row once, where the row map says; and its word addresses
// are the 128-byte swizzle of a TMA box (chunk c of a row's line at slot c ^ row % 8).
TEST(MoeGemmDecode, RingRowsAreTheCtasRows) {
  for (bool stage1 : {true, false}) {
    const std::int64_t outputs = stage1 ? 768 : 6144;
    for (std::int64_t tile : {0, 5}) {
      std::set<int> ring_rows;
      for (int r = 0; r < kMxDecRows; ++r) {
        const int row = moe_decode_ring_row(r, stage1);
        EXPECT_TRUE(ring_rows.insert(row).second);
        EXPECT_EQ(moe_decode_ring_box_row(row / 32, tile, stage1, outputs) + row % 32,
                  moe_decode_weight_row(r, tile, stage1, outputs))
            << "stage1 " << stage1 << " r " << r;
      }
      EXPECT_EQ(ring_rows.size(), static_cast<std::size_t>(kMxDecRows));
    }
  }
  std::set<int> bytes;
  for (int row = 0; row < kMxDecRows; ++row)
    for (int h = 0; h < 2; ++h)
      for (int j = 0; j < 4; ++j)
        for (int q = 0; q < 4; ++q) {
          const int at = moe_decode_ring_word(row, h, j, q), line_byte = 64 * h + 16 * j + 4 * q;
          EXPECT_EQ(at, row * 128 + ((line_byte / 16) ^ (row % 8)) * 16 + line_byte % 16);
          EXPECT_TRUE(bytes.insert(at).second);
        }
}

// The measured rule (run 79): stage 1 at every decode size; stage 2 from 192 routed pairs (T = 48 at
// k = 4) on.
TEST(MoeGemmDecode, DefaultRuleIsStage1AlwaysAndStage2FromItsThreshold) {
  MoeGemmParams p;
  p.topk = 4;
  p.experts = 128;
  p.hidden = 6144;
  p.inter = 768;
  for (std::int64_t T : {1, 3, 24, 47, 48, 96, 192, 2048}) {
    p.tokens = T;
    EXPECT_TRUE(moe_decode_by_default(p, true)) << T;
    EXPECT_EQ(moe_decode_by_default(p, false), 4 * T >= kMoeDecodeStage2MinPairs) << T;
  }
  p.tokens = 24;  // 96 pairs: the mma.sync kernels were faster at stage 2 there (run 79)
  EXPECT_FALSE(moe_decode_by_default(p, false));
  p.tokens = 96;
  EXPECT_TRUE(moe_decode_by_default(p, false));
}

TEST(MoeGemmDecode, ShapesItTakes) {
  EXPECT_TRUE(moe_decode_shape_fits(6144, 768, true));    // m31 stage 1: K = 6144, I = 768
  EXPECT_TRUE(moe_decode_shape_fits(768, 6144, false));   // m31 stage 2
  EXPECT_FALSE(moe_decode_shape_fits(288, 96, true));     // K not whole stages
  EXPECT_FALSE(moe_decode_shape_fits(384, 64, true));     // K not whole pairs of stages (the ring's lines)
  EXPECT_FALSE(moe_decode_shape_fits(96, 256, false));    // I not whole stages
  EXPECT_FALSE(moe_decode_shape_fits(256, 48, true));     // outputs not whole CTAs
  EXPECT_FALSE(moe_decode_shape_fits(256, 96, false));
  EXPECT_EQ(moe_decode_col_tiles(768, true), 24);
  EXPECT_EQ(moe_decode_col_tiles(6144, false), 96);
  EXPECT_EQ(moe_decode_tokens_n(1), 8);
  EXPECT_EQ(moe_decode_tokens_n(9), 16);
  EXPECT_EQ(moe_decode_tokens_n(16), 16);
}

}  // namespace
}  // namespace fb
