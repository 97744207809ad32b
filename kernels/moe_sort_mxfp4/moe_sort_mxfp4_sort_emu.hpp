// Pieces of the MoE sort emulation that the chain, the one-launch and the four-launch emulations
// share (moe_sort_mxfp4_sort_emu.cpp). Host only.
#pragma once

#include <cstdint>
#include <vector>

#include "kernels/moe_sort_mxfp4/moe_sort_mxfp4.hpp"

namespace fb {

// The expert table every sort path derives from the per-expert counts: the same packed exclusive
// scan as the kernels (moe_scan_pack), in expert order.
struct MoeExpertTable {
  std::vector<std::int32_t> start;      // E + 1 (start[E] = num_valid_ids[0])
  std::vector<std::int32_t> count;      // E
  std::vector<std::int32_t> local;      // E
  std::vector<std::int32_t> pad_start;  // E + 1 (pad_start[E] = padding entries in all)
  std::int64_t valid() const { return start.back(); }
  std::int64_t padding() const { return pad_start.back(); }
};

MoeExpertTable moe_expert_table(const MoeSortMxfp4Params& p, const std::vector<std::int32_t>& counts,
                                const std::int32_t* mask);

// Writes what follows from the table alone: num_valid_ids, sorted_expert_ids, the sentinel entries
// and (one-launch path) zero scale bytes for sentinel rows and for rows [valid, pad32(valid)).
void moe_sort_write_table_outputs(const MoeSortMxfp4Params& p, const MoeSortMxfp4Buffers& b,
                                  const MoeExpertTable& table, bool zero_scale_rows);

// Zeroes moe_buf (T rows of D).
void moe_buf_zero_emu(const MoeSortMxfp4Params& p, const MoeSortMxfp4Buffers& b);

// The one-launch sort: a bitmap of (expert, token), counts by popcount, positions by rank. Writes
// the sort outputs and returns the sorted position of every pair (-1: not routed).
std::vector<std::int32_t> moe_sort_one_launch_emu(const MoeSortMxfp4Params& p, const MoeSortMxfp4Buffers& b);

}  // namespace fb
