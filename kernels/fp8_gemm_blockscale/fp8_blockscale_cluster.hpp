// The direct form's split-K (fp8_blockscale_wgmma.hip, S > 1): the S slices of a 128 x 128 tile run
// on the S CTAs of one thread-block cluster, and are added in shared memory instead of in the fp32
// buffer. Per unit, each CTA
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

// The exchange area: the tile's 128 rows of 128 fp32 sums, each row padded by 8 floats: a warp's
// 8-byte stores of one accumulator register pair (8 rows, 4 lanes of 2 columns in each) then hit
// each of the 32 banks twice, the fewest for 256 bytes (tested on the CPU).
inline constexpr int kBlockscaleExchangeRows = 128;
inline constexpr int kBlockscaleExchangeCols = 128;
inline constexpr int kBlockscaleExchangeRowFloats = kBlockscaleExchangeCols + 8;
inline constexpr int kBlockscaleExchangeBytes = kBlockscaleExchangeRows * kBlockscaleExchangeRowFloats * 4;
// Then the two mbarriers (ready, drained).
inline constexpr int kBlockscaleClusterBytes = kBlockscaleExchangeBytes + 2 * 8;
// A 16-byte group of 4 adjacent columns is the unit of the sum: 32 groups a row.
inline constexpr int kBlockscaleExchangeGroupsPerRow = kBlockscaleExchangeCols / 4;

FB_HD constexpr int blockscale_exchange_offset(int row, int col) { return row * kBlockscaleExchangeRowFloats + col; }

// CTA `rank` of `size` adds groups [begin, end) of a tile whose first `valid_rows` rows lie in C
// (row-major groups, a contiguous share each; the shares cover them once).
struct ClusterShare {
  int begin, end;
};
FB_HD constexpr ClusterShare blockscale_cluster_share(int valid_rows, int rank, int size) {
  const int groups = valid_rows * kBlockscaleExchangeGroupsPerRow;
  return {rank * groups / size, (rank + 1) * groups / size};
}

}  // namespace fb
