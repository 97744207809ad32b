// Device pieces shared by F5's kernels (fused one-launch, fused four-launch, chain): option
// dispatch, a block-wide exclusive scan, ranks in a token bitmap, the per-chunk count and the
// row-order quant block bodies, the MXFP4 quant of a row tile with scales at sorted positions, and
// the grid-strided duties (sentinels, zero scale rows, moe_buf zeroing).
// NOTE: every reduction here is an integer max, popcount or sum: exact and order-free, so neither
// the wave width (32 or 64) nor the grid can change a bit. Lanes cooperate only in aligned groups
// of 4 (one 32-element MX block = 4 lanes x 8 bf16), which exist on wave32 and wave64 alike.
#pragma once

#include <algorithm>
#include <type_traits>

#include "kernels/common/hip_compat.hpp"
#include "kernels/common/vector_io.hpp"
#include "kernels/fp8_quant/fp8_quant_device.hpp"
#include "kernels/moe_sort_mxfp4/moe_sort_mxfp4_math.hpp"

namespace fb {

constexpr int kMxThreads = 256;
constexpr int kMxUnroll = 8;                       // 16-byte loads in flight per thread
constexpr int kMxRound = kMxThreads * kMxUnroll;   // vectors a block covers per round

// Runtime options -> template arguments, so the per-element code has no branch on them.
template <class Fn>
void with_mx_options(MxScaleRule rule, Fp4Rounding rounding, Fn&& fn) {
  auto with_rounding = [&](auto r) {
    if (rounding == Fp4Rounding::rne)
      fn(r, std::integral_constant<Fp4Rounding, Fp4Rounding::rne>{});
    else
      fn(r, std::integral_constant<Fp4Rounding, Fp4Rounding::half_away>{});
  };
  if (rule == MxScaleRule::roundup)
    with_rounding(std::integral_constant<MxScaleRule, MxScaleRule::roundup>{});
  else if (rule == MxScaleRule::even)
    with_rounding(std::integral_constant<MxScaleRule, MxScaleRule::even>{});
  else
    with_rounding(std::integral_constant<MxScaleRule, MxScaleRule::floor>{});
}

// Max over an aligned group of 4 lanes (one MX block); every lane gets it.
__device__ inline std::uint32_t group4_max_u32(std::uint32_t v) {
  v = max_u32(v, shfl_xor_u32(v, 1));
  return max_u32(v, shfl_xor_u32(v, 2));
}

// In-place exclusive scan of v[0, n) by a block of exactly kThreads threads; returns the total to
// every thread. Each thread sums a contiguous segment, the partials are scanned (Hillis-Steele),
// then each segment is rewritten. Integer sums: the order cannot matter.
template <int kThreads>
__device__ inline std::uint64_t block_exclusive_scan_u64(std::uint64_t* v, int n, std::uint64_t* partial) {
  const int per = (n + kThreads - 1) / kThreads;
  const int lo = min(n, static_cast<int>(threadIdx.x) * per), hi = min(n, lo + per);
  std::uint64_t sum = 0;
  for (int i = lo; i < hi; ++i) sum += v[i];
  partial[threadIdx.x] = sum;
  __syncthreads();
  for (int offset = 1; offset < kThreads; offset <<= 1) {
    const std::uint64_t add = threadIdx.x >= static_cast<unsigned>(offset) ? partial[threadIdx.x - offset] : 0;
    __syncthreads();
    partial[threadIdx.x] += add;
    __syncthreads();
  }
  std::uint64_t run = threadIdx.x > 0 ? partial[threadIdx.x - 1] : 0;
  const std::uint64_t total = partial[kThreads - 1];
  for (int i = lo; i < hi; ++i) {
    const std::uint64_t x = v[i];
    v[i] = run;
    run += x;
  }
  __syncthreads();
  return total;
}

// Set bits of words[] strictly below bit `index`: a token's rank among its expert's tokens.
__device__ inline int rank_below(const std::uint32_t* words, int index) {
  int r = 0;
  for (int w = 0; w < index / 32; ++w) r += __popc(words[w]);
  return r + __popc(words[index / 32] & ((1u << (index % 32)) - 1u));
}

// ---- block bodies shared by several kernels ----

// The one-launch sort table, built by one block of kMxThreads threads in shared memory (the
// one-launch kernels: F5's moe_sort_quant, F4's decode router): a bitmap [E][W] (W = ceil(T/32)) of
// which tokens each expert receives (atomicOr: bits only get set, so arrival order is irrelevant),
// counts by popcount, and the packed exclusive scan that gives each expert's start, local id and
// padding start. Pair (t, s) of expert e then sits at start[e] + rank_below(&bits[e * W], t).
struct MoeSortTable {
  std::uint64_t* vals;     // [E] scan values
  std::uint64_t* partial;  // [kMxThreads] scan partials
  std::uint32_t* bits;     // [E][W]
  std::int32_t* start;     // [E + 1]
  std::int32_t* count;     // [E]
  std::int32_t* local;     // [E]
  std::int32_t* pad_start; // [E + 1]
  std::int32_t valid;      // num_valid_ids[0]
  std::int32_t padding;    // sentinel entries in all
};

// Ends with a barrier: the table is ready for every thread of the block.
__device__ inline void moe_sort_build_table(MoeSortTable& tb, const std::int32_t* ids, const std::int32_t* mask,
                                            int tokens, int topk, int experts, int block) {
  const int E = experts, W = (tokens + 31) / 32;
  for (int i = threadIdx.x; i < E * W; i += kMxThreads) tb.bits[i] = 0;
  __syncthreads();
  for (int i = threadIdx.x; i < tokens * topk; i += kMxThreads) {
    const std::int32_t e = ids[i];
    const int t = i / topk;
    if (moe_expert_routed(e, E, mask)) atomicOr(&tb.bits[e * W + t / 32], 1u << (t % 32));
  }
  __syncthreads();
  for (int e = threadIdx.x; e < E; e += kMxThreads) {
    int c = 0;
    for (int w = 0; w < W; ++w) c += __popc(tb.bits[e * W + w]);
    tb.count[e] = c;
    const std::int64_t padded = moe_padded_count(c, block);
    tb.vals[e] = moe_scan_pack(padded, mask == nullptr || mask[e] != 0, padded - c);
  }
  __syncthreads();
  const std::uint64_t total = block_exclusive_scan_u64<kMxThreads>(tb.vals, E, tb.partial);
  for (int e = threadIdx.x; e < E; e += kMxThreads) {
    tb.start[e] = moe_scan_padded(tb.vals[e]);
    tb.local[e] = moe_scan_routed(tb.vals[e]);
    tb.pad_start[e] = moe_scan_padding(tb.vals[e]);
  }
  tb.valid = moe_scan_padded(total);
  tb.padding = moe_scan_padding(total);
  if (threadIdx.x == 0) {
    tb.start[E] = tb.valid;
    tb.pad_start[E] = tb.padding;
  }
  __syncthreads();
}

// Pairs per expert in 256-token chunk `chunk` (moe_sort_count_kernel, and the first launch of
// moe_sort_quant_large). counts: [E] ints of shared memory. Integer sums: arrival order is irrelevant.
__device__ inline void moe_sort_count_block(const std::int32_t* ids, const std::int32_t* mask,
                                            std::int32_t* chunk_counts, int tokens, int topk, int experts, int chunk,
                                            std::int32_t* counts) {
  constexpr int kChunk = static_cast<int>(kSortChunkTokens);
  for (int e = threadIdx.x; e < experts; e += kMxThreads) counts[e] = 0;
  __syncthreads();
  const int t0 = chunk * kChunk, n = min(kChunk, tokens - t0) * topk;
  for (int i = threadIdx.x; i < n; i += kMxThreads) {
    const std::int32_t e = ids[t0 * topk + i];
    if (moe_expert_routed(e, experts, mask)) atomicAdd(&counts[e], 1);
  }
  __syncthreads();
  for (int e = threadIdx.x; e < experts; e += kMxThreads) chunk_counts[chunk * experts + e] = counts[e];
}

// One block of row-order MXFP4 quant (mxfp4_quant_rows_kernel, and the first launch of
// moe_sort_quant_large): vectors [block * kMxRound, (block + 1) * kMxRound) of x, 8 bf16 each; e2m1
// bytes in row order and per-row scales [rows][K/32]. Index: int64 (chain) or uint32 (fused,
// where the dispatcher keeps rows * K below 2^31).
template <MxScaleRule kRule, Fp4Rounding kRounding, class Index>
__device__ inline void mx_quant_rows_block(const std::uint16_t* x, std::uint8_t* xq, std::uint8_t* row_scales,
                                           Index vectors, Index block) {
  const Index first = block * kMxRound + threadIdx.x;
  Bf16x8 v[kMxUnroll];
#pragma unroll
  for (int u = 0; u < kMxUnroll; ++u) {
    const Index i = first + u * kMxThreads;
    v[u] = i < vectors ? load_bf16x8(x + i * 8) : Bf16x8{make_uint4(0, 0, 0, 0)};
  }
#pragma unroll
  for (int u = 0; u < kMxUnroll; ++u) {
    const Index i = first + u * kMxThreads;
    const std::uint32_t amax = group4_max_u32(bf16x8_abs_max_bits(v[u]));  // all lanes take part
    if (i >= vectors) continue;
    const std::uint8_t s = mx_scale_byte(amax, kRule);
    *reinterpret_cast<std::uint32_t*>(xq + i * 4) =
        mx_quantize_bf16x8(v[u].words.x, v[u].words.y, v[u].words.z, v[u].words.w, e8m0_inverse(s), kRounding);
    // Block index = i / 4 = row * K/32 + y: the per-row scales are [rows][K/32], row-major.
    if (threadIdx.x % 4 == 0) row_scales[i / 4] = s;
  }
}

// ---- MXFP4 quant of a tile of whole rows [row0, row0 + rows), K = 8 * vectors_per_row ----
// Round r covers tile vectors [r * kMxRound, (r + 1) * kMxRound); thread t takes vectors
// r * kMxRound + u * kMxThreads + t. Four consecutive vectors are one MX block (K/8 is a multiple
// of 4 and so is every round and unroll offset), so the 4 lanes of a block are in or out together.
// Offsets are 32-bit: the dispatcher guarantees rows * K < 2^31.
struct MxTile {
  std::uint32_t row0;
  std::uint32_t rows;
  std::uint32_t vectors_per_row;
  __device__ std::uint32_t vectors() const { return rows * vectors_per_row; }
  __device__ std::uint32_t rounds() const { return (vectors() + kMxRound - 1) / kMxRound; }
};

__device__ inline void mx_tile_load(const std::uint16_t* x, const MxTile& t, std::uint32_t round,
                                    Bf16x8 (&v)[kMxUnroll]) {
  const std::uint16_t* base = x + t.row0 * t.vectors_per_row * 8u;
#pragma unroll
  for (int u = 0; u < kMxUnroll; ++u) {
    const std::uint32_t j = round * kMxRound + u * kMxThreads + threadIdx.x;
    v[u] = j < t.vectors() ? load_bf16x8(base + j * 8u) : Bf16x8{make_uint4(0, 0, 0, 0)};
  }
}

// Quantizes one round: 4 bytes of xq per vector, and each block's scale byte at the sorted
// positions of its row (pos[row_in_tile * slots + s], -1 where the pair is not routed), with the
// row's pad columns as 0.
template <MxScaleRule kRule, Fp4Rounding kRounding>
__device__ inline void mx_tile_quantize(const MxTile& t, std::uint32_t round, const Bf16x8 (&v)[kMxUnroll],
                                        std::uint8_t* xq, std::uint8_t* scales, const std::int32_t* pos, int slots,
                                        int scale_cols, int cols_pad) {
  std::uint8_t* qbase = xq + t.row0 * t.vectors_per_row * 4u;
#pragma unroll
  for (int u = 0; u < kMxUnroll; ++u) {
    const std::uint32_t j = round * kMxRound + u * kMxThreads + threadIdx.x;
    const std::uint32_t amax = group4_max_u32(bf16x8_abs_max_bits(v[u]));  // all lanes take part
    if (j >= t.vectors()) continue;
    const std::uint8_t s = mx_scale_byte(amax, kRule);
    const std::uint32_t packed =
        mx_quantize_bf16x8(v[u].words.x, v[u].words.y, v[u].words.z, v[u].words.w, e8m0_inverse(s), kRounding);
    *reinterpret_cast<std::uint32_t*>(qbase + j * 4u) = packed;
    if (threadIdx.x % 4 != 0) continue;
    const int r = static_cast<int>(j / t.vectors_per_row), y = static_cast<int>(j % t.vectors_per_row) / 4;
    for (int slot = 0; slot < slots; ++slot) {
      const std::int32_t p = pos[r * slots + slot];
      if (p < 0) continue;
      scales[mx_scale_addr(p, y, cols_pad)] = s;
      if (y == scale_cols - 1)
        for (int yp = scale_cols; yp < cols_pad; ++yp) scales[mx_scale_addr(p, yp, cols_pad)] = 0;
    }
  }
}

// ---- grid-strided duties ----

// Sentinel entries of every expert's padding; with `scales`, also zero scale bytes for the
// sentinel rows and for rows [valid, pad32(valid)). A padding entry's position costs a binary
// search over the experts, so it is found once per (row, 8-column group): that thread writes the
// group's 8 bytes (consecutive threads take consecutive rows of one group, i.e. neighbouring words).
__device__ inline void moe_padding_duty(const std::int32_t* start, const std::int32_t* count,
                                        const std::int32_t* pad_start, int experts, std::int64_t valid,
                                        std::int64_t padding, std::int32_t sentinel, std::int32_t* sorted_ids,
                                        float* sorted_weights, std::uint8_t* scales, std::int64_t cols_pad,
                                        std::int64_t gtid, std::int64_t gstride) {
  auto padding_position = [&](std::int64_t j) {
    const std::int64_t e = moe_owner(pad_start, experts, j);
    return start[e] + count[e] + (j - pad_start[e]);
  };
  for (std::int64_t j = gtid; j < padding; j += gstride) {
    const std::int64_t p = padding_position(j);
    sorted_ids[p] = sentinel;
    sorted_weights[p] = 0.0f;
  }
  if (scales == nullptr) return;
  const std::int64_t rows = padding + (valid + 31) / 32 * 32 - valid, groups = cols_pad / 8;
  for (std::int64_t z = gtid; z < rows * groups; z += gstride) {
    const std::int64_t j = z % rows, g = z / rows;
    const std::int64_t p = j < padding ? padding_position(j) : valid + (j - padding);
    // mx_scale_addr(p, 8g + 4h + c) = base + c*64 + h*2 for c = 0..3, h = 0..1.
    std::uint8_t* base = scales + mx_scale_addr(p, 8 * g, cols_pad);
#pragma unroll
    for (int c = 0; c < 4; ++c) {
      base[c * 64] = 0;
      base[c * 64 + 2] = 0;
    }
  }
}

// Threads the scale part of moe_padding_duty can use: at most min(E, pairs) * (B - 1) sentinel rows
// plus 31 tail rows, one thread per (row, 8-column group).
inline std::int64_t moe_padding_duty_items(const MoeSortMxfp4Params& p) {
  return (std::min(p.experts, p.pairs()) * (p.block - 1) + 31) * (p.scale_cols_pad() / 8);
}

// Zeroes `units` 16-byte vectors of moe_buf.
template <class Index>
__device__ inline void moe_buf_zero_duty(std::uint16_t* moe_buf, Index units, Index gtid, Index gstride) {
  uint4* dst = reinterpret_cast<uint4*>(moe_buf);
  for (Index i = gtid; i < units; i += gstride) dst[i] = make_uint4(0, 0, 0, 0);
}

}  // namespace fb
