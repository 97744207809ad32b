// CPU emulation of the MoE sort in its two algorithms (docs/numeric-contract.md#moe-sort):
//   multi-phase (chain and four-launch): per-chunk counts -> one scan -> scatter by rank in chunk
//   one-launch:  a bitmap of (expert, token) -> counts by popcount -> scan -> scatter by rank
// Both place pair (t, slot) of expert e at start[e] + (tokens before t routed to e), which is the
// contract's order (experts ascending, tokens ascending inside an expert). All integer: exact.
#include "kernels/moe_sort_mxfp4/moe_sort_mxfp4_sort_emu.hpp"

#include <algorithm>
#include <bit>
#include <cstring>

#include "kernels/moe_sort_mxfp4/moe_sort_mxfp4_math.hpp"

namespace fb {
namespace {

// Rank of bit `index` among the set bits of words[0 ..]: set bits strictly below it.
std::int64_t rank_below(const std::uint32_t* words, std::int64_t index) {
  std::int64_t r = 0;
  for (std::int64_t w = 0; w < index / 32; ++w) r += std::popcount(words[w]);
  const std::uint32_t below = (1u << (index % 32)) - 1u;
  return r + std::popcount(words[index / 32] & below);
}

MoeExpertTable table_from_info(const MoeSortMxfp4Params& p, const std::int32_t* info) {
  const MoeExpertInfoLayout l{p.experts};
  const auto E = static_cast<std::size_t>(p.experts);
  MoeExpertTable t;
  t.start.assign(info + l.start(), info + l.start() + E);
  t.start.push_back(info[l.valid()]);
  t.count.assign(info + l.count(), info + l.count() + E);
  t.local.assign(info + l.local(), info + l.local() + E);
  t.pad_start.assign(info + l.pad_start(), info + l.pad_start() + E + 1);
  return t;
}

void write_block_ids(const MoeSortMxfp4Params& p, const MoeSortMxfp4Buffers& b, const MoeExpertTable& t) {
  b.num_valid_ids[0] = static_cast<std::int32_t>(t.valid());
  b.num_valid_ids[1] = static_cast<std::int32_t>(p.tokens);
  for (std::int64_t j = 0; j < t.valid() / p.block; ++j)
    b.sorted_expert_ids[j] = t.local[static_cast<std::size_t>(moe_owner(t.start.data(), p.experts, j * p.block))];
}

}  // namespace

MoeExpertTable moe_expert_table(const MoeSortMxfp4Params& p, const std::vector<std::int32_t>& counts,
                                const std::int32_t* mask) {
  const auto E = static_cast<std::size_t>(p.experts);
  MoeExpertTable t{std::vector<std::int32_t>(E + 1), counts, std::vector<std::int32_t>(E),
                   std::vector<std::int32_t>(E + 1)};
  std::uint64_t run = 0;  // the packed exclusive scan, in expert order
  for (std::size_t e = 0; e < E; ++e) {
    const bool routed = mask == nullptr || mask[e] != 0;
    const std::int64_t padded = moe_padded_count(counts[e], p.block);
    t.start[e] = moe_scan_padded(run);
    t.local[e] = moe_scan_routed(run);
    t.pad_start[e] = moe_scan_padding(run);
    run += moe_scan_pack(padded, routed, padded - counts[e]);
  }
  t.start[E] = moe_scan_padded(run);
  t.pad_start[E] = moe_scan_padding(run);
  return t;
}

void moe_sort_write_table_outputs(const MoeSortMxfp4Params& p, const MoeSortMxfp4Buffers& b,
                                  const MoeExpertTable& t, bool zero_scale_rows) {
  write_block_ids(p, b, t);
  const std::int32_t sentinel = moe_sort_sentinel(p.tokens, p.topk);
  auto padding_position = [&](std::int64_t j) {
    const auto e = static_cast<std::size_t>(moe_owner(t.pad_start.data(), p.experts, j));
    return t.start[e] + t.count[e] + (j - t.pad_start[e]);
  };
  for (std::int64_t j = 0; j < t.padding(); ++j) {
    const std::int64_t pos = padding_position(j);
    b.sorted_token_ids[pos] = sentinel;
    b.sorted_weights[pos] = 0.0f;
  }
  if (!zero_scale_rows) return;
  // Sentinel rows, then the rows after num_valid_ids[0] up to the end of its 32-row tile.
  const std::int64_t tail = (t.valid() + 31) / 32 * 32 - t.valid();
  for (std::int64_t j = 0; j < t.padding() + tail; ++j) {
    const std::int64_t pos = j < t.padding() ? padding_position(j) : t.valid() + (j - t.padding());
    for (std::int64_t y = 0; y < p.scale_cols_pad(); ++y) b.scales[mx_scale_addr(pos, y, p.scale_cols_pad())] = 0;
  }
}

void moe_buf_zero_emu(const MoeSortMxfp4Params& p, const MoeSortMxfp4Buffers& b) {
  std::memset(b.moe_buf, 0, static_cast<std::size_t>(p.tokens * p.buf_cols) * 2);
}

void moe_sort_count_emu(const MoeSortMxfp4Params& p, const MoeSortMxfp4Buffers& b) {
  const std::int64_t E = p.experts, k = p.topk;
#pragma omp parallel for schedule(static) if (p.chunks() >= 16)
  for (std::int64_t c = 0; c < p.chunks(); ++c) {
    std::int32_t* counts = b.chunk_counts + c * E;
    std::fill(counts, counts + E, 0);
    const std::int64_t end = std::min(p.tokens, (c + 1) * kSortChunkTokens) * k;
    for (std::int64_t i = c * kSortChunkTokens * k; i < end; ++i) {
      const std::int32_t e = b.topk_ids[i];
      if (moe_expert_routed(e, E, b.expert_mask)) ++counts[e];
    }
  }
}

void moe_sort_scan_emu(const MoeSortMxfp4Params& p, const MoeSortMxfp4Buffers& b) {
  const std::int64_t E = p.experts;
  std::vector<std::int32_t> counts(static_cast<std::size_t>(E), 0);
  for (std::int64_t e = 0; e < E; ++e) {
    std::int32_t running = 0;  // chunk counts -> exclusive offsets, chunks in order
    for (std::int64_t c = 0; c < p.chunks(); ++c) {
      const std::int32_t v = b.chunk_counts[c * E + e];
      b.chunk_counts[c * E + e] = running;
      running += v;
    }
    counts[static_cast<std::size_t>(e)] = running;
  }
  const MoeExpertTable t = moe_expert_table(p, counts, b.expert_mask);
  const MoeExpertInfoLayout l{E};
  std::copy(t.start.begin(), t.start.end() - 1, b.expert_info + l.start());
  std::copy(t.count.begin(), t.count.end(), b.expert_info + l.count());
  std::copy(t.local.begin(), t.local.end(), b.expert_info + l.local());
  std::copy(t.pad_start.begin(), t.pad_start.end(), b.expert_info + l.pad_start());
  b.expert_info[l.valid()] = static_cast<std::int32_t>(t.valid());
  write_block_ids(p, b, t);
}

void moe_sort_scatter_emu(const MoeSortMxfp4Params& p, const MoeSortMxfp4Buffers& b, bool zero_moe_buf) {
  const std::int64_t E = p.experts, k = p.topk;
  const MoeExpertTable t = table_from_info(p, b.expert_info);
#pragma omp parallel for schedule(static) if (p.chunks() >= 16)
  for (std::int64_t c = 0; c < p.chunks(); ++c) {
    // One chunk of 256 tokens: a bitmap [E][8] of the tokens routed to each expert.
    std::vector<std::uint32_t> bits(static_cast<std::size_t>(E * 8), 0u);
    const std::int64_t t0 = c * kSortChunkTokens, t1 = std::min(p.tokens, t0 + kSortChunkTokens);
    for (std::int64_t i = t0 * k; i < t1 * k; ++i) {
      const std::int32_t e = b.topk_ids[i];
      if (moe_expert_routed(e, E, b.expert_mask)) bits[e * 8 + (i / k - t0) / 32] |= 1u << ((i / k - t0) % 32);
    }
    for (std::int64_t i = t0 * k; i < t1 * k; ++i) {
      const std::int32_t e = b.topk_ids[i];
      if (!moe_expert_routed(e, E, b.expert_mask)) continue;
      const std::int64_t pos = t.start[e] + b.chunk_counts[c * E + e] + rank_below(&bits[e * 8], i / k - t0);
      b.sorted_token_ids[pos] = moe_sort_entry(i / k, i % k);
      b.sorted_weights[pos] = b.topk_weights[i];
    }
  }
  moe_sort_write_table_outputs(p, b, t, false);
  if (zero_moe_buf) moe_buf_zero_emu(p, b);
}

std::vector<std::int32_t> moe_sort_one_launch_emu(const MoeSortMxfp4Params& p, const MoeSortMxfp4Buffers& b) {
  const std::int64_t E = p.experts, k = p.topk, words = (p.tokens + 31) / 32;
  std::vector<std::uint32_t> bits(static_cast<std::size_t>(E * words), 0u);
  for (std::int64_t i = 0; i < p.pairs(); ++i) {
    const std::int32_t e = b.topk_ids[i];
    if (moe_expert_routed(e, E, b.expert_mask)) bits[e * words + (i / k) / 32] |= 1u << ((i / k) % 32);
  }
  std::vector<std::int32_t> counts(static_cast<std::size_t>(E), 0);
  for (std::int64_t e = 0; e < E; ++e)
    for (std::int64_t w = 0; w < words; ++w) counts[static_cast<std::size_t>(e)] += std::popcount(bits[e * words + w]);
  const MoeExpertTable t = moe_expert_table(p, counts, b.expert_mask);

  std::vector<std::int32_t> pos(static_cast<std::size_t>(p.pairs()), -1);
  for (std::int64_t i = 0; i < p.pairs(); ++i) {
    const std::int32_t e = b.topk_ids[i];
    if (!moe_expert_routed(e, E, b.expert_mask)) continue;
    const std::int64_t at = t.start[e] + rank_below(&bits[e * words], i / k);
    b.sorted_token_ids[at] = moe_sort_entry(i / k, i % k);
    b.sorted_weights[at] = b.topk_weights[i];
    pos[static_cast<std::size_t>(i)] = static_cast<std::int32_t>(at);
  }
  moe_sort_write_table_outputs(p, b, t, true);
  return pos;
}

}  // namespace fb
