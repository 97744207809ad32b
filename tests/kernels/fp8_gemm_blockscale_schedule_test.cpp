// The persistent block-scale wgmma kernel's schedule (fp8_blockscale_schedule.hpp: the arithmetic
// the kernel runs), on the CPU: every (tile, slice) is exactly one unit, a CTA's units increase, a
// unit waits only on a lower one, the 32-bit copy agrees with the 64-bit one, and G CTAs that each
// take their next unit once its turn has come finish every launch, for G from 1 to the unit count.
// The simulation can fail: CTAs walking their units backwards deadlock, and it says so.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "kernels/fp8_gemm/fp8_gemm_wgmma_layout.hpp"
#include "kernels/fp8_gemm_blockscale/fp8_blockscale.hpp"
#include "kernels/fp8_gemm_blockscale/fp8_blockscale_cluster.hpp"
#include "kernels/fp8_gemm_blockscale/fp8_blockscale_schedule.hpp"

namespace fb {
namespace {

using Schedule = BlockscaleSchedule<std::int64_t>;
using CtaOrder = std::function<std::vector<std::int64_t>(const Schedule&, std::int64_t cta, std::int64_t ctas)>;

// The kernel's order: CTA c takes c, c + G, ... while below units().
std::vector<std::int64_t> kernel_order(const Schedule& s, std::int64_t cta, std::int64_t ctas) {
  std::vector<std::int64_t> units;
  for (std::int64_t i = 0; s.unit(cta, i, ctas) < s.units(); ++i) units.push_back(s.unit(cta, i, ctas));
  return units;
}

// Every CTA resident; in each round each CTA takes its next unit if the unit it waits on is done.
// Returns false when a round moves nothing while units remain (the turnstile would spin forever).
bool runs_to_the_end(const Schedule& s, std::int64_t ctas, const CtaOrder& order) {
  std::vector<std::vector<std::int64_t>> queue;
  for (std::int64_t c = 0; c < ctas; ++c) queue.push_back(order(s, c, ctas));
  std::vector<std::size_t> next(static_cast<std::size_t>(ctas), 0);
  std::vector<bool> done(static_cast<std::size_t>(s.units()), false);
  std::int64_t left = s.units();
  while (left > 0) {
    bool moved = false;
    for (std::int64_t c = 0; c < ctas; ++c) {
      auto& at = next[static_cast<std::size_t>(c)];
      const auto& q = queue[static_cast<std::size_t>(c)];
      if (at == q.size()) continue;
      const std::int64_t u = q[at], before = s.waits_on(u);
      if (before >= 0 && !done[static_cast<std::size_t>(before)]) continue;
      done[static_cast<std::size_t>(u)] = true;
      ++at, --left, moved = true;
    }
    if (!moved) return false;
  }
  return true;
}

struct Shape {
  std::int64_t m, n, k, s;
};

std::vector<Shape> shapes() {
  std::vector<Shape> out;
  // The m31 points (qkv, o_proj, shared down at M = 3 .. 32768, S = 1, 2, 4), odd M and S = 3, 6.
  for (const std::int64_t m : {1, 3, 129, 192, 300, 4096, 32768})
    for (const auto& [n, k] : std::vector<std::pair<std::int64_t, std::int64_t>>{{2304, 6144}, {6144, 2048}, {6144, 768}, {128, 768}})
      for (const std::int64_t s : {1, 2, 3, 4, 6}) out.push_back({m, n, k, s});
  return out;
}

// Each shape with each tile width the kernel may run it with: 128, and the wide tile where N
// allows it (blockscale_tile_cols).
std::vector<std::pair<Shape, std::int64_t>> shapes_and_widths() {
  std::vector<std::pair<Shape, std::int64_t>> out;
  for (const Shape& sh : shapes()) {
    out.emplace_back(sh, 128);
    const int wide = blockscale_tile_cols({sh.m, sh.n, sh.k, sh.s}, TileWidthAsk::wide);
    if (wide != 128) out.emplace_back(sh, wide);
  }
  return out;
}

std::string name(const Shape& sh, std::int64_t cols) {
  return "M=" + std::to_string(sh.m) + " N=" + std::to_string(sh.n) + " K=" + std::to_string(sh.k) +
         " S=" + std::to_string(sh.s) + " tile width " + std::to_string(cols);
}

TEST(Fp8BlockscaleSchedule, TheWideTileOnlyWhereNIsAMultipleOf384AndAskedOrFrom4096Rows) {
  for (const std::int64_t n : {128, 256, 384, 768, 1152, 1536, 2048, 2304, 6144})
    for (const std::int64_t m : {1, 192, 4095, 4096, 32768}) {
      const Fp8BlockscaleParams p{m, n, 768, 1};
      const int wide_where_allowed = n % 384 == 0 ? 192 : 128;
      EXPECT_EQ(blockscale_tile_cols(p, TileWidthAsk::narrow), 128) << m << " x " << n;
      EXPECT_EQ(blockscale_tile_cols(p, TileWidthAsk::wide), wide_where_allowed) << m << " x " << n;
      EXPECT_EQ(blockscale_tile_cols(p), m >= 4096 ? wide_where_allowed : 128) << m << " x " << n;
    }
}

TEST(Fp8BlockscaleSchedule, EveryTileSliceIsOneUnitAndTheIndicesAgree) {
  for (const auto& [sh, cols] : shapes_and_widths()) {
    const Fp8BlockscaleParams p{sh.m, sh.n, sh.k, sh.s};
    const Schedule s = blockscale_schedule(p, kWgmmaCtaM, cols);
    const BlockscaleSchedule<int> s32 = s.narrow();
    const std::int64_t m_tiles = (sh.m + kWgmmaCtaM - 1) / kWgmmaCtaM;
    ASSERT_EQ(s.tiles, m_tiles * (sh.n / cols)) << name(sh, cols);
    ASSERT_EQ(s.n_blocks * cols, sh.n) << name(sh, cols);
    ASSERT_EQ(s.units(), s.tiles * sh.s) << name(sh, cols);
    std::vector<int> seen(static_cast<std::size_t>(s.units()), 0);
    for (std::int64_t u = 0; u < s.units(); ++u) {
      const std::int64_t slice = s.slice(u), tile = s.tile(u);
      ASSERT_LT(slice, sh.s) << name(sh, cols);
      ASSERT_LT(s.m_tile(u), m_tiles) << name(sh, cols);
      ASSERT_LT(s.n_block(u), s.n_blocks) << name(sh, cols);
      ASSERT_EQ(s.m_tile(u) * s.n_blocks + s.n_block(u), tile) << name(sh, cols);
      ++seen[static_cast<std::size_t>(slice * s.tiles + tile)];
      // The epilogue's 32-bit copy names the same unit.
      const int u32 = static_cast<int>(u);
      ASSERT_EQ(s32.slice(u32), slice) << name(sh, cols);
      ASSERT_EQ(s32.tile(u32), tile) << name(sh, cols);
      ASSERT_EQ(s32.m_tile(u32), s.m_tile(u)) << name(sh, cols);
      ASSERT_EQ(s32.n_block(u32), s.n_block(u)) << name(sh, cols);
      // A unit waits on its tile's previous slice, a lower number; slice 0 on nothing.
      const std::int64_t before = s.waits_on(u);
      if (slice == 0) {
        ASSERT_EQ(before, -1) << name(sh, cols);
      } else {
        ASSERT_LT(before, u) << name(sh, cols);
        ASSERT_EQ(s.tile(before), tile) << name(sh, cols);
        ASSERT_EQ(s.slice(before), slice - 1) << name(sh, cols);
      }
    }
    EXPECT_TRUE(std::all_of(seen.begin(), seen.end(), [](int c) { return c == 1; })) << name(sh, cols);
  }
}

TEST(Fp8BlockscaleSchedule, CtasCoverTheUnitsInIncreasingOrder) {
  for (const auto& [sh, cols] : shapes_and_widths()) {
    const Schedule s = blockscale_schedule({sh.m, sh.n, sh.k, sh.s}, kWgmmaCtaM, cols);
    for (const std::int64_t ctas : {std::int64_t{1}, std::int64_t{7}, std::int64_t{132}, s.units()}) {
      if (ctas > s.units()) continue;  // the launcher's grid is min(units, SMs)
      std::vector<int> seen(static_cast<std::size_t>(s.units()), 0);
      for (std::int64_t c = 0; c < ctas; ++c) {
        const std::vector<std::int64_t> units = kernel_order(s, c, ctas);
        ASSERT_FALSE(units.empty()) << name(sh, cols) << " G=" << ctas;
        ASSERT_TRUE(std::is_sorted(units.begin(), units.end())) << name(sh, cols);
        for (const std::int64_t u : units) ++seen[static_cast<std::size_t>(u)];
      }
      EXPECT_TRUE(std::all_of(seen.begin(), seen.end(), [](int n) { return n == 1; })) << name(sh, cols) << " G=" << ctas;
    }
  }
}

TEST(Fp8BlockscaleSchedule, ResidentCtasFinishEveryLaunch) {
  for (const auto& [sh, cols] : shapes_and_widths()) {
    const Schedule s = blockscale_schedule({sh.m, sh.n, sh.k, sh.s}, kWgmmaCtaM, cols);
    for (const std::int64_t ctas : {std::int64_t{1}, std::int64_t{2}, std::int64_t{7}, std::int64_t{132}, s.units()}) {
      if (ctas > s.units()) continue;
      EXPECT_TRUE(runs_to_the_end(s, ctas, kernel_order)) << name(sh, cols) << " G=" << ctas;
    }
  }
}

TEST(Fp8BlockscaleSchedule, AnOrderThatWaitsOnLaterWorkIsCaughtAsADeadlock) {
  // Each CTA walks its units from the last: its first is a late slice whose turn waits on a unit
  // that some CTA (itself, here) takes only at its end.
  const Schedule s = blockscale_schedule({256, 256, 768, 2}, kWgmmaCtaM);  // 4 tiles x 2 slices
  const CtaOrder backwards = [](const Schedule& sc, std::int64_t cta, std::int64_t ctas) {
    std::vector<std::int64_t> units = kernel_order(sc, cta, ctas);
    std::reverse(units.begin(), units.end());
    return units;
  };
  EXPECT_FALSE(runs_to_the_end(s, 2, backwards));
  EXPECT_TRUE(runs_to_the_end(s, 2, kernel_order));
}

// The direct form's split-K (fp8_blockscale_cluster.hpp): G = C x S CTAs in clusters of S. Every
// (tile, slice) is one unit; a CTA's slice is its rank in the cluster; the CTAs of a cluster take
// the same tiles in the same order (each exchange has all S of them).
TEST(Fp8BlockscaleSchedule, ClustersTakeEveryTileSliceOnceAndTheirCtasShareTheirTiles) {
  for (const auto& [sh, cols] : shapes_and_widths()) {
    const Schedule s = blockscale_schedule({sh.m, sh.n, sh.k, sh.s}, kWgmmaCtaM, cols);
    for (const std::int64_t clusters : {std::int64_t{1}, std::int64_t{7}, std::int64_t{33}, s.tiles}) {
      if (clusters > s.tiles) continue;  // the launcher's clusters: min(tiles, what fits)
      const std::int64_t ctas = clusters * sh.s;
      std::vector<int> seen(static_cast<std::size_t>(s.units()), 0);
      for (std::int64_t c = 0; c < ctas; ++c) {
        std::vector<std::int64_t> tiles;
        for (std::int64_t i = 0; s.cluster_unit(c, i, ctas) < s.units(); ++i) {
          const std::int64_t u = s.cluster_unit(c, i, ctas);
          ASSERT_EQ(s.slice(u), c % sh.s) << name(sh, cols) << " cta " << c;
          ++seen[static_cast<std::size_t>(u)];
          tiles.push_back(s.tile(u));
        }
        // The rank-0 CTA of the cluster takes the same tiles.
        std::vector<std::int64_t> first;
        const std::int64_t lead = c - c % sh.s;
        for (std::int64_t i = 0; s.cluster_unit(lead, i, ctas) < s.units(); ++i)
          first.push_back(s.tile(s.cluster_unit(lead, i, ctas)));
        ASSERT_EQ(tiles, first) << name(sh, cols) << " cta " << c;
        ASSERT_FALSE(tiles.empty()) << name(sh, cols) << " cta " << c;
      }
      EXPECT_TRUE(std::all_of(seen.begin(), seen.end(), [](int n) { return n == 1; }))
          << name(sh, cols) << " clusters " << clusters;
    }
  }
}

// The exchange areas (both tile widths): every element of a round's 128 x kCols columns written once
// by the two warpgroups' register pairs of that round, a warp's 8-byte pair stores hitting each
// bank exactly twice (two wavefronts, the fewest for 256 bytes), rows 16-byte aligned for the
// sum's 16-byte loads, and the CTAs' shares of a round's valid groups contiguous and covering them
// once, for every cluster size.
template <int kTileN>
void expect_exchange_layout() {
  using X = BlockscaleExchange<kTileN>;
  EXPECT_EQ(X::kRounds * X::kCols, kTileN);
  for (int round = 0; round < X::kRounds; ++round) {
    std::vector<int> hits(static_cast<std::size_t>(X::kRows) * X::kRowFloats, 0);
    for (int group = 0; group < kWgmmaConsumerGroups; ++group)
      for (int warp = 0; warp < 4; ++warp)
        for (int j = 0; j < kTileN / 2; j += 2) {
          if (j / 4 < round * X::kCols / 8 || j / 4 >= (round + 1) * X::kCols / 8) continue;  // the kernel's test
          std::vector<int> bank_hits(32, 0);
          for (int lane = 0; lane < 32; ++lane) {
            const int row = kWgmmaTileM * group + 16 * warp + lane / 4 + 8 * ((j / 2) % 2);
            const int col = 8 * (j / 4) + 2 * (lane % 4) - round * X::kCols;
            ASSERT_GE(col, 0);
            ASSERT_LT(col + 1, X::kCols);
            const int at = X::offset(row, col);
            ASSERT_EQ(at % 2, 0);
            for (int word = 0; word < 2; ++word) {
              ++hits[static_cast<std::size_t>(at + word)];
              ++bank_hits[static_cast<std::size_t>((at + word) % 32)];
            }
          }
          for (const int h : bank_hits) ASSERT_EQ(h, 2) << kTileN << " warp " << warp << " j " << j;
        }
    for (int row = 0; row < X::kRows; ++row)
      for (int col = 0; col < X::kRowFloats; ++col)
        ASSERT_EQ(hits[static_cast<std::size_t>(X::offset(row, col))], col < X::kCols ? 1 : 0)
            << kTileN << " round " << round << ": " << row << " " << col;
  }
  EXPECT_EQ(X::offset(1, 0) * 4 % 16, 0);
  EXPECT_EQ(X::kAreaBytes % 8, 0);  // the mbarriers after it
  for (const int valid : {1, 63, 64, 127, 128})
    for (int size = 1; size <= kBlockscaleClusterMaxSlices; ++size) {
      int next = 0;
      for (int rank = 0; rank < size; ++rank) {
        const ClusterShare share = blockscale_cluster_share(valid * X::kGroupsPerRow, rank, size);
        ASSERT_EQ(share.begin, next) << valid << " " << size << " " << rank;
        ASSERT_LE(share.begin, share.end);
        next = share.end;
      }
      ASSERT_EQ(next, valid * X::kGroupsPerRow) << valid << " " << size;
    }
}

TEST(Fp8BlockscaleCluster, ExchangeAreaIsCoveredOnceWithoutExtraWavefrontsAndSharesPartitionTheTile) {
  expect_exchange_layout<128>();
  expect_exchange_layout<192>();
}

// The direct form's split-K takes the 128-wide tile unless its CTAs outnumber the SMs and N allows
// the wide tile; the knob's ask wins.
TEST(Fp8BlockscaleSchedule, ClusterTileIsWideOnlyWhereTheNarrowCtasOutnumberTheSms) {
  EXPECT_EQ(blockscale_cluster_tile_cols({192, 2304, 6144, 3}, 132), 128);  // 36 tiles x 3 = 108 CTAs
  EXPECT_EQ(blockscale_cluster_tile_cols({192, 6144, 2048, 2}, 132), 192);  // 96 x 2 = 192
  EXPECT_EQ(blockscale_cluster_tile_cols({192, 6144, 2048, 2}, 200), 128);
  EXPECT_EQ(blockscale_cluster_tile_cols({3, 2304, 6144, 8}, 132), 192);    // 18 x 8 = 144
  EXPECT_EQ(blockscale_cluster_tile_cols({192, 256, 2048, 8}, 4), 128);     // N = 256 has no wide tile
  EXPECT_EQ(blockscale_cluster_tile_cols({192, 6144, 2048, 2}, 132, TileWidthAsk::narrow), 128);
  EXPECT_EQ(blockscale_cluster_tile_cols({192, 2304, 6144, 3}, 132, TileWidthAsk::wide), 192);
}

}  // namespace
}  // namespace fb
