// Where F5 chooses: the fused role's path (one launch, four launches, or the chain where 32-bit
// offsets would overflow), the quant tile size, and the host-side validation of shapes and ids.
#include <fmt/format.h>

#include <algorithm>
#include <vector>

#include "core/errors.hpp"
#include "kernels/moe_sort_mxfp4/moe_sort_mxfp4.hpp"

namespace fb {

const char* moe_sort_quant_path_name(MoeSortQuantPath path) {
  switch (path) {
    case MoeSortQuantPath::one_launch: return "moe_sort_quant (one launch)";
    case MoeSortQuantPath::four_launch: return "moe_sort_quant_large (four launches)";
    case MoeSortQuantPath::chain: return "chain (32-bit offsets would overflow)";
  }
  return "";
}

std::int64_t MoeSortMxfp4Params::tile_rows() const {
  // About 2048 16-byte vectors (32 KiB of bf16) per tile, whole rows, and no more sorted positions
  // than the tile's position cache holds.
  const std::int64_t vectors_per_row = cols / 8;
  const std::int64_t by_size = std::max<std::int64_t>(1, 2048 / std::max<std::int64_t>(vectors_per_row, 1));
  return std::max<std::int64_t>(1, std::min(by_size, kPositionCache / slots_per_row()));
}

std::int64_t MoeSortMxfp4Params::one_launch_smem_bytes() const {
  const std::int64_t words = (tokens + 31) / 32;
  // bitmap [E][W] + expert table (4E + 2 words) + position cache + scan partials + scan values
  return experts * words * 4 + (4 * experts + 2) * 4 + kPositionCache * 4 + 256 * 8 + experts * 8;
}

MoeSortQuantPath moe_sort_quant_path(const MoeSortMxfp4Params& p) {
  // NOTE: both fused kernels use 32-bit element offsets into x, xq and moe_buf (cheaper index math
  // in the streaming loop); at T*K >= 2^31 (T > 349,525 at K = 6144) only the chain is correct.
  const std::int64_t elements = std::max(p.rows() * p.cols, p.tokens * p.buf_cols);
  if (elements >= p.offset_limit) return MoeSortQuantPath::chain;
  if (p.tokens <= kOneLaunchMaxTokens && p.one_launch_smem_bytes() <= kOneLaunchSmemBytes)
    return MoeSortQuantPath::one_launch;
  return MoeSortQuantPath::four_launch;
}

void moe_sort_validate_shape(const MoeSortMxfp4Params& p) {
  if (p.topk < 1 || p.topk >= 256)
    throw InputError(fmt::format("k={} is outside [1, 255]: the slot field of a sorted entry is 8 bits", p.topk));
  if (p.tokens < 1 || p.tokens >= (std::int64_t{1} << 24))
    throw InputError(fmt::format("T={} is outside [1, 2^24): the token field of a sorted entry (and the sentinel, "
                                 "which stores T) is 24 bits",
                                 p.tokens));
  if (p.experts < 1 || p.experts > 1024)
    throw InputError(fmt::format("E={} is outside [1, 1024], the experts one sort block scans", p.experts));
  if (p.topk > p.experts)
    throw InputError(fmt::format("k={} distinct experts per token need E >= k (E={})", p.topk, p.experts));
  if (p.block < 1 || p.block > 128) throw InputError(fmt::format("B={} is outside [1, 128]", p.block));
  if (p.max_entries() >= (std::int64_t{1} << 31))
    throw InputError(fmt::format("T*k + E*B - k = {} sorted entries reach 2^31: positions are int32", p.max_entries()));
  if (p.cols < kMxBlock || p.cols % kMxBlock != 0)
    throw InputError(fmt::format("K={} is not a positive multiple of the MX block (32)", p.cols));
  if (p.buf_cols < 0 || p.buf_cols % 8 != 0)
    throw InputError(fmt::format("D={} is not a multiple of 8 (moe_buf rows are zeroed in 16-byte vectors)", p.buf_cols));
}

void moe_sort_validate_ids(const MoeSortMxfp4Params& p, const std::int32_t* topk_ids) {
  // The row and slot where each expert was last seen: a repeat inside the same row is a duplicate.
  std::vector<std::int64_t> seen_row(static_cast<std::size_t>(p.experts), -1), seen_slot(seen_row.size(), -1);
  for (std::int64_t t = 0; t < p.tokens; ++t) {
    for (std::int64_t s = 0; s < p.topk; ++s) {
      const std::int32_t e = topk_ids[t * p.topk + s];
      if (e < 0 || e >= p.experts)
        throw InputError(fmt::format("topk_ids[{}][{}] = {} is outside [0, E={})", t, s, e, p.experts));
      const auto i = static_cast<std::size_t>(e);
      if (seen_row[i] == t)
        throw InputError(fmt::format("topk_ids[{}] holds expert {} twice (slots {} and {})", t, e, seen_slot[i], s));
      seen_row[i] = t;
      seen_slot[i] = s;
    }
  }
}

}  // namespace fb
