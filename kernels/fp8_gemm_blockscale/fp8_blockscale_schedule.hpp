// The persistent wgmma kernel's schedule (fp8_blockscale_wgmma.hip), host and device code, so that
// a CPU test runs the same arithmetic through a simulation of the turnstile
// (tests/kernels/fp8_gemm_blockscale_schedule_test.cpp, Fp8BlockscaleSchedule.*).
//
// A unit is one kWgmmaCtaM x tile_cols tile's split-K slice (tile_cols 128, or 192: the wide
// tile, blockscale_tile_cols). Units are numbered slice-major,
// u = slice * tiles + tile, with tile = m-tile * n_blocks + n-block (N fastest, so the CTAs in flight
// share A tiles through L2). CTA c of G takes units c, c + G, c + 2G, ... in increasing order. Unit
// u's turnstile waits for the turn its tile's previous slice hands on: unit u - tiles, a lower
// number. So the lowest unfinished unit can always run (its CTA has finished its earlier, lower
// units, and the unit it waits on is lower still), as long as every CTA gets an SM while others
// spin: the launcher keeps G at most the SM count, one CTA per SM.
// Int is the kernel's choice of index type: 64-bit where the units are handed out, 32-bit in the
// epilogue (the launcher refuses more than 2^31 units).
#pragma once

#include <cstdint>

#include "kernels/fp8_gemm/fp8_gemm_tile_width.hpp"
#include "kernels/fp8_gemm_blockscale/fp8_blockscale.hpp"
#include "reference/codecs/host_device.hpp"

namespace fb {

template <class Int>
struct BlockscaleSchedule {
  Int n_blocks = 0;  // tiles along N: N / tile_cols
  Int tiles = 0;     // output tiles: n_blocks x m-tiles
  Int slices = 1;    // S

  FB_HD Int units() const { return tiles * slices; }
  // CTA `cta`'s i-th unit of `ctas` (past units() when it has no more).
  FB_HD Int unit(Int cta, Int i, Int ctas) const { return cta + i * ctas; }
  FB_HD Int slice(Int u) const { return u / tiles; }
  FB_HD Int tile(Int u) const { return u % tiles; }  // its turnstile's ticket
  FB_HD Int m_tile(Int u) const { return tile(u) / n_blocks; }
  FB_HD Int n_block(Int u) const { return tile(u) % n_blocks; }
  // The direct form's split-K (fp8_blockscale_cluster.hpp): CTAs in clusters of `slices`, the CTA of
  // rank r in a cluster taking slice r of the cluster's tiles c, c + C, ... (c the cluster, C the
  // clusters): its i-th unit, numbered as above, or units() when it has no more. A cluster's CTAs
  // take the same tiles in the same order, so each reaches each tile's exchange.
  FB_HD Int cluster_unit(Int cta, Int i, Int ctas) const {
    const Int clusters = ctas / slices, t = cta / slices + i * clusters;
    return t < tiles ? (cta % slices) * tiles + t : units();
  }
  // The unit whose turn comes just before u's (the same tile's previous slice), or -1 for slice 0.
  FB_HD Int waits_on(Int u) const { return u < tiles ? Int(-1) : u - tiles; }
  FB_HD BlockscaleSchedule<int> narrow() const {
    return {static_cast<int>(n_blocks), static_cast<int>(tiles), static_cast<int>(slices)};
  }
};

// The schedule of a launch whose tiles are `tile_rows` rows high and `tile_cols` (a divisor of N)
// wide.
FB_HD BlockscaleSchedule<std::int64_t> blockscale_schedule(const Fp8BlockscaleParams& p, std::int64_t tile_rows,
                                                           std::int64_t tile_cols = 128) {
  const std::int64_t n_tiles = p.cols / tile_cols;
  return {n_tiles, n_tiles * ((p.rows + tile_rows - 1) / tile_rows), p.slices};
}

// The wgmma kernel's tile width: 192 columns (the wide tile: m64n192k32, 1.5x the matrix-unit work
// per block for each wait and promotion) or 128. The wide tile needs N a multiple of 384, so that
// each tile's columns lie in two whole 128-column scale blocks (its first 128 - n0 % 128 columns in
// block n0 / 128, the rest in the next; n0 % 128 is 0 or 64); every m31 N (2304, 6144) is one.
// Chosen by default from M (run 68, H100, 192 against 128 in one call): from 4096 rows it was
// 1.02-1.18x faster wherever K >= 2048 or S = 4 and level at K = 768, S = 1; at 192 rows and fewer,
// with a third fewer units to spread over the SMs, 1.09-1.30x slower. Between 192 and 4096 rows
// nothing was measured, so the 128-wide tile stays there.
// `ask` comes from the FUSEBENCH_BLOCKSCALE_TILE_N knob (fp8_gemm_tile_width.hpp): by default the
// measured rule, else one width wherever N allows it.
inline constexpr int kBlockscaleWideTileCols = kWgmmaWideTileN;
inline constexpr std::int64_t kBlockscaleWideMinRows = 4096;
inline constexpr const char* kBlockscaleTileWidthVariable = "FUSEBENCH_BLOCKSCALE_TILE_N";
FB_HD int blockscale_tile_cols(const Fp8BlockscaleParams& p, TileWidthAsk ask = TileWidthAsk::by_default) {
  if (p.cols % (2 * kBlockscaleWideTileCols) != 0 || ask == TileWidthAsk::narrow) return 128;
  return ask == TileWidthAsk::wide || p.rows >= kBlockscaleWideMinRows ? kBlockscaleWideTileCols : 128;
}
// The direct form's split-K (a cluster of S CTAs a tile, fp8_blockscale_cluster.hpp) by default
// takes the 128-wide tile unless its tiles' CTAs would not all find an SM at once (more than `sms`)
// and N allows the wide tile: with a third fewer tiles they may (at 192 x 6144 x 2048, S = 2: 192
// CTAs against 128). A prediction, not a measurement: run 76 found the wide form slower than S = 1
// wherever this chose it, and did not time the narrow form there. The knob's ask overrides, as for
// the other forms.
FB_HD int blockscale_cluster_tile_cols(const Fp8BlockscaleParams& p, int sms, TileWidthAsk ask = TileWidthAsk::by_default) {
  if (p.cols % (2 * kBlockscaleWideTileCols) != 0 || ask == TileWidthAsk::narrow) return 128;
  if (ask == TileWidthAsk::wide) return kBlockscaleWideTileCols;
  const std::int64_t narrow_ctas = blockscale_schedule(p, 128, 128).tiles * p.slices;
  return narrow_ctas > sms ? kBlockscaleWideTileCols : 128;
}
// The width the sm_90a launcher takes (host): the knob's, else the rule (the direct form's split-K:
// the cluster rule above, given the device's SM count). The cases report the same call
// (launch_configs, through fp8_blockscale_launch_tile_cols on the GPU), so a report names what ran.
inline int blockscale_launch_tile_cols(const Fp8BlockscaleParams& p, bool direct = false, int sms = 132) {
  const TileWidthAsk ask = tile_width_asked(kBlockscaleTileWidthVariable);
  if (direct && p.slices > 1) return blockscale_cluster_tile_cols(p, sms, ask);
  return blockscale_tile_cols(p, ask);
}

}  // namespace fb
