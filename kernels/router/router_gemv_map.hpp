// The router GEMV's work-item mapping (which block computes which partials), shared by the kernels
// and the CPU test of the mapping (tests/kernels/router_gemv_map_test.cpp): host and device, FB_HD,
// no HIP. The mapping never changes a partial's order (router_math.hpp): each partial
// P_s[m][e] is always one 32-lane group's whole dot product over slice s, whichever block runs it.
#pragma once

#include "reference/codecs/host_device.hpp"

namespace fb {

inline constexpr int kRouterGemvGroups = 8;  // 32-lane groups of a GEMV block (256 threads)

// The GEMV's work items: (row tile, slice, expert group), expert group fastest, so blocks that run
// together share the x tile through the caches. An item is row_tile rows x item_experts experts of
// one slice: lane group g takes experts e0 + g P .. e0 + g P + P - 1 (P = item_experts / 8) for
// every row of the tile. item_experts: 8 (one expert per lane group: router_gemv_item) or 16 (two:
// router_gemv_wide_item, past 16 rows: router_gemv_plan).
struct RouterGemvShape {
  int rows, hidden, experts, split_k, row_tile;
  int item_experts = kRouterGemvGroups;
  FB_HD int slice() const { return hidden / split_k; }
  FB_HD int experts_per_group() const { return item_experts / kRouterGemvGroups; }
  FB_HD int expert_groups() const { return experts / item_experts; }
  FB_HD int row_tiles() const { return (rows + row_tile - 1) / row_tile; }
  FB_HD int items() const { return row_tiles() * split_k * expert_groups(); }
};

// The router/gate GEMV's plan (router_kernels.hip; F3 and F4 keep their own tiles): up to 16 rows
// the tiles of with_router_decode_row_tile (1, 2, 4, 8) with one expert per lane group (the tails
// of the M <= 16 launches); past 16 rows the wide item (two experts per lane group, 16 per item)
// at a row tile of 16, or of 8 while the tile of 16 would give fewer items than multiprocessors
// (M = 17..64 at S = 4, E = 128 on 132 SMs: 16-row items would leave SMs idle).
struct RouterGemvPlan {
  int row_tile, item_experts;
};
FB_HD RouterGemvPlan router_gemv_plan(int rows, int experts, int split_k, int multiprocessors) {
  if (rows <= 16) return {rows <= 1 ? 1 : rows <= 2 ? 2 : rows <= 4 ? 4 : 8, kRouterGemvGroups};
  const int wide = 2 * kRouterGemvGroups, items16 = (rows + 15) / 16 * split_k * (experts / wide);
  return {items16 >= multiprocessors ? 16 : 8, wide};
}

// Item `item`'s rows [m0, m0 + rows), slice s and first expert e0.
struct RouterGemvItem {
  int m0, rows, s, e0;
};
FB_HD RouterGemvItem router_gemv_item_at(const RouterGemvShape& sh, int item) {
  const int groups = sh.expert_groups();
  RouterGemvItem it{};
  it.e0 = item % groups * sh.item_experts;
  it.s = item / groups % sh.split_k;
  it.m0 = item / (groups * sh.split_k) * sh.row_tile;
  const int left = sh.rows - it.m0;
  it.rows = left < sh.row_tile ? left : sh.row_tile;
  return it;
}

// The expert of lane group g's q-th accumulator set (q < experts_per_group()) in item `it`.
FB_HD int router_gemv_expert(const RouterGemvShape& sh, const RouterGemvItem& it, int g, int q) {
  return it.e0 + g * sh.experts_per_group() + q;
}

}  // namespace fb
