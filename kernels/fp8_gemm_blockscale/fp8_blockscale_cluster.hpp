// The direct form's split-K (fp8_blockscale_wgmma.hip, S > 1): the S slices of a tile run on the S
// CTAs of one thread-block cluster, and are added in shared memory instead of in the fp32 buffer.
// Per unit (per round of its columns, BlockscaleExchange below), each CTA
//   1. writes its slice's partial sums (fp32, its registers) into its exchange area;
//   2. arrives on every cluster CTA's `ready` mbarrier (after a barrier of its consumer threads) and
//      waits on its own: all S partials of the tile are then written and visible;
//   3. adds, for its share of the tile's rows x columns (blockscale_cluster_share), the S partials
//      in slice order from +0, reading the other CTAs' areas through the cluster's shared window,
//      and writes C = bf16(sum): the acc form's bits at the same S after a memset (its acc is +0,
//      then + part_0, ..., + part_{S-1});
//   4. arrives on every CTA's `drained` mbarrier and waits on its own: nobody reads its area any
//      more, so the next unit may write it (and the CTA may exit after its last).
// No CTA waits on another cluster, and a cluster's CTAs are scheduled together, so every launch
// finishes whatever the grid. Host and device code: the CPU test checks the layout and the shares.
#pragma once

#include <cstdint>

#include "reference/codecs/host_device.hpp"

namespace fb {

// The most slices the direct form adds in a cluster: the largest cluster every sm_90 device
// schedules (kPortableClusterSize of kernels/common/thread_block_cluster.hpp).
inline constexpr int kBlockscaleClusterMaxSlices = 8;

// CTA `rank` of `size` adds groups [begin, end) of the `groups` 16-byte groups of a round (row-major;
// a contiguous share each, the shares covering them once).
struct ClusterShare {
  int begin, end;
};
FB_HD constexpr ClusterShare blockscale_cluster_share(int groups, int rank, int size) {
  return {rank * groups / size, (rank + 1) * groups / size};
}

// The exchange area of a tile kTileN wide, in rounds of kCols columns: the 128-wide tile in one
// round, the wide tile's 192 in two of 96 (its area then fits beside its larger pipeline: 165 KB
// + 53 KB). The area holds the tile's 128 rows of kCols fp32 sums, each row padded by 8 floats: a
// warp's 8-byte stores of one accumulator register pair (8 rows, 4 lanes of 2 columns in each)
// then hit each of the 32 banks twice, the fewest for 256 bytes, and rows stay 16-byte aligned for
// the sum's 16-byte loads (tested on the CPU). Two mbarriers (ready, drained) follow it.
template <int kTileN>
struct BlockscaleExchange {
  static_assert(kTileN == 128 || kTileN == 192, "wgmma tiles are 128 or 192 columns wide");
  static constexpr int kRows = 128;
  static constexpr int kCols = kTileN == 128 ? 128 : 96;
  static constexpr int kRounds = kTileN / kCols;
  static constexpr int kRowFloats = kCols + 8;
  static constexpr int kAreaBytes = kRows * kRowFloats * 4;
  static constexpr int kSharedBytes = kAreaBytes + 2 * 8;
  static constexpr int kGroupsPerRow = kCols / 4;  // a 16-byte group of 4 columns: the sum's unit
  FB_HD static constexpr int offset(int row, int col) { return row * kRowFloats + col; }
};

}  // namespace fb
