// The multi-phase MoE sort (docs/numeric-contract.md#moe-sort): three launches, shared by the chain
// and by moe_sort_quant_large (whose first launch runs the count body next to its quant blocks).
//   moe_sort_count_kernel    one block per 256-token chunk: pairs per expert in the chunk
//   moe_sort_scan_kernel     one block: chunk counts -> exclusive offsets (chunks in order, per
//                            expert), expert table (packed scan), num_valid_ids, sorted_expert_ids
//   moe_sort_scatter_kernel  one block per chunk: a bitmap [E][8 words] of its tokens; pair (t, s)
//                            of expert e goes to start[e] + offset[chunk][e] + rank of t in the
//                            chunk. Then, grid-strided: sentinels, and (chain) moe_buf zeroing;
//                            moe_sort_quant_large zeroes moe_buf in its first launch instead.
// Deterministic: counts are integer sums (atomicAdd in shared memory only adds), positions come
// from ranks in a bitmap (atomicOr only sets bits), so no result depends on an order of arrival.
#include <algorithm>

#include "kernels/common/gpu_check.hpp"
#include "kernels/moe_sort_mxfp4/moe_sort_mxfp4_device.hpp"

namespace fb {
namespace {

constexpr int kScanThreads = 1024;
constexpr int kChunk = static_cast<int>(kSortChunkTokens);
static_assert(kChunk == kMxThreads, "the scatter gives each thread of a chunk block one token");

__global__ __launch_bounds__(kMxThreads) void moe_sort_count_kernel(const std::int32_t* ids, const std::int32_t* mask,
                                                                     std::int32_t* chunk_counts, int tokens, int topk,
                                                                     int experts) {
  extern __shared__ std::uint64_t moe_sort_smem[];
  moe_sort_count_block(ids, mask, chunk_counts, tokens, topk, experts, blockIdx.x,
                       reinterpret_cast<std::int32_t*>(moe_sort_smem));
}

__global__ __launch_bounds__(kScanThreads) void moe_sort_scan_kernel(std::int32_t* chunk_counts,
                                                                      const std::int32_t* mask, std::int32_t* info,
                                                                      std::int32_t* sorted_expert_ids,
                                                                      std::int32_t* num_valid_ids, int tokens,
                                                                      int experts, int block, int chunks) {
  extern __shared__ std::uint64_t moe_sort_smem[];
  auto* partial = moe_sort_smem;                                  // [kScanThreads]
  auto* vals = partial + kScanThreads;                            // [E]
  auto* seg = reinterpret_cast<std::int32_t*>(vals + experts);    // [kScanThreads]
  auto* start = seg + kScanThreads;                               // [E + 1]
  auto* local = start + experts + 1;                              // [E]
  const MoeExpertInfoLayout l{experts};

  // Thread (s, e) = s * E + e sums chunk segment s of expert e (consecutive threads read
  // consecutive experts of one chunk row: coalesced).
  const int segments = max(1, kScanThreads / experts), seg_len = (chunks + segments - 1) / segments;
  const int e = threadIdx.x % experts, s = threadIdx.x / experts;
  const bool owner = s < segments;
  const int c0 = min(chunks, s * seg_len), c1 = min(chunks, c0 + seg_len);
  std::int32_t sum = 0;
  if (owner)
    for (int c = c0; c < c1; ++c) sum += chunk_counts[c * experts + e];
  seg[threadIdx.x] = sum;
  __syncthreads();
  if (static_cast<int>(threadIdx.x) < experts) {
    std::int32_t run = 0;  // segments of this expert -> exclusive prefixes
    for (int k = 0; k < segments; ++k) {
      const std::int32_t v = seg[k * experts + threadIdx.x];
      seg[k * experts + threadIdx.x] = run;
      run += v;
    }
    const std::int64_t padded = moe_padded_count(run, block);
    info[l.count() + threadIdx.x] = run;
    vals[threadIdx.x] = moe_scan_pack(padded, mask == nullptr || mask[threadIdx.x] != 0, padded - run);
  }
  __syncthreads();
  const std::uint64_t total = block_exclusive_scan_u64<kScanThreads>(vals, experts, partial);
  for (int x = threadIdx.x; x < experts; x += kScanThreads) {
    start[x] = moe_scan_padded(vals[x]);
    local[x] = moe_scan_routed(vals[x]);
    info[l.start() + x] = start[x];
    info[l.local() + x] = local[x];
    info[l.pad_start() + x] = moe_scan_padding(vals[x]);
  }
  const std::int32_t valid = moe_scan_padded(total);
  if (threadIdx.x == 0) {
    start[experts] = valid;
    info[l.pad_start() + experts] = moe_scan_padding(total);
    info[l.valid()] = valid;
    num_valid_ids[0] = valid;
    num_valid_ids[1] = tokens;
  }
  __syncthreads();
  // Counts -> offsets, chunks in order.
  if (owner) {
    std::int32_t run = seg[threadIdx.x];
#pragma unroll 8
    for (int c = c0; c < c1; ++c) {
      const std::int32_t v = chunk_counts[c * experts + e];
      chunk_counts[c * experts + e] = run;
      run += v;
    }
  }
  for (int j = threadIdx.x; j < valid / block; j += kScanThreads)
    sorted_expert_ids[j] = local[moe_owner(start, experts, static_cast<std::int64_t>(j) * block)];
}

template <bool kZeroMoeBuf>
__global__ __launch_bounds__(kMxThreads) void moe_sort_scatter_kernel(
    const std::int32_t* ids, const float* weights, const std::int32_t* mask, const std::int32_t* chunk_offsets,
    const std::int32_t* info, std::int32_t* sorted_ids, float* sorted_weights, std::uint16_t* moe_buf, int tokens,
    int topk, int experts, int chunks, std::uint64_t moe_units) {
  extern __shared__ std::uint64_t moe_sort_smem[];
  auto* bits = reinterpret_cast<std::uint32_t*>(moe_sort_smem);  // [E][8]
  auto* base = reinterpret_cast<std::int32_t*>(bits + experts * 8);  // [E]
  const MoeExpertInfoLayout l{experts};
  if (static_cast<int>(blockIdx.x) < chunks) {
    const int c = blockIdx.x, t0 = c * kChunk, n = min(kChunk, tokens - t0);
    for (int i = threadIdx.x; i < experts * 8; i += kMxThreads) bits[i] = 0;
    for (int x = threadIdx.x; x < experts; x += kMxThreads) base[x] = info[l.start() + x] + chunk_offsets[c * experts + x];
    __syncthreads();
    for (int i = threadIdx.x; i < n * topk; i += kMxThreads) {
      const std::int32_t e = ids[t0 * topk + i];
      if (moe_expert_routed(e, experts, mask)) atomicOr(&bits[e * 8 + (i / topk) / 32], 1u << ((i / topk) % 32));
    }
    __syncthreads();
    if (static_cast<int>(threadIdx.x) < n) {
      const int t = t0 + threadIdx.x;
      for (int s = 0; s < topk; ++s) {
        const int pair = t * topk + s;
        const std::int32_t e = ids[pair];
        if (moe_expert_routed(e, experts, mask)) {
          const std::int32_t p = base[e] + rank_below(&bits[e * 8], threadIdx.x);
          sorted_ids[p] = moe_sort_entry(t, s);
          sorted_weights[p] = weights[pair];
        }
      }
    }
  }
  const std::int64_t gtid = static_cast<std::int64_t>(blockIdx.x) * kMxThreads + threadIdx.x;
  const std::int64_t gstride = static_cast<std::int64_t>(gridDim.x) * kMxThreads;
  const std::int32_t* pad_start = info + l.pad_start();
  moe_padding_duty(info + l.start(), info + l.count(), pad_start, experts, info[l.valid()], pad_start[experts],
                   moe_sort_sentinel(tokens, topk), sorted_ids, sorted_weights, nullptr, 0, gtid, gstride);
  if (kZeroMoeBuf) moe_buf_zero_duty<std::uint64_t>(moe_buf, moe_units, gtid, gstride);
}

}  // namespace

void moe_sort_count_launch(const MoeSortMxfp4Params& p, const MoeSortMxfp4Buffers& b, void* stream) {
  const std::size_t smem = static_cast<std::size_t>(p.experts) * 4;
  moe_sort_count_kernel<<<static_cast<unsigned>(p.chunks()), kMxThreads, smem, static_cast<hipStream_t>(stream)>>>(
      b.topk_ids, b.expert_mask, b.chunk_counts, static_cast<int>(p.tokens), static_cast<int>(p.topk),
      static_cast<int>(p.experts));
  gpu_check_launch("moe_sort_count_kernel");
}

void moe_sort_scan_launch(const MoeSortMxfp4Params& p, const MoeSortMxfp4Buffers& b, void* stream) {
  const std::size_t smem = 8 * (kScanThreads + p.experts) + 4 * (kScanThreads + 2 * p.experts + 1);
  moe_sort_scan_kernel<<<1, kScanThreads, smem, static_cast<hipStream_t>(stream)>>>(
      b.chunk_counts, b.expert_mask, b.expert_info, b.sorted_expert_ids, b.num_valid_ids, static_cast<int>(p.tokens),
      static_cast<int>(p.experts), static_cast<int>(p.block), static_cast<int>(p.chunks()));
  gpu_check_launch("moe_sort_scan_kernel");
}

void moe_sort_scatter_launch(const MoeSortMxfp4Params& p, const MoeSortMxfp4Buffers& b, bool zero_moe_buf,
                             void* stream) {
  const std::size_t smem = static_cast<std::size_t>(p.experts) * (8 * 4 + 4);
  const std::uint64_t moe_units = static_cast<std::uint64_t>(p.tokens * p.buf_cols / 8);
  // The chain's scatter also zeroes moe_buf: enough extra blocks for 4 vectors per thread. Without
  // it (moe_sort_quant_large zeroes moe_buf in its first launch), enough blocks for one thread per
  // sentinel entry (at most min(E, pairs) * (B - 1); each costs a binary search).
  const std::int64_t extra_blocks =
      zero_moe_buf ? static_cast<std::int64_t>(grid_for(static_cast<std::int64_t>(moe_units), kMxThreads * 4))
                   : static_cast<std::int64_t>(grid_for(std::min(p.experts, p.pairs()) * (p.block - 1), kMxThreads));
  const auto grid = static_cast<unsigned>(std::max<std::int64_t>({p.chunks(), extra_blocks, 1}));
  auto* s = static_cast<hipStream_t>(stream);
  const int tokens = static_cast<int>(p.tokens), topk = static_cast<int>(p.topk), experts = static_cast<int>(p.experts);
  const int chunks = static_cast<int>(p.chunks());
  if (zero_moe_buf)
    moe_sort_scatter_kernel<true><<<grid, kMxThreads, smem, s>>>(b.topk_ids, b.topk_weights, b.expert_mask,
                                                                 b.chunk_counts, b.expert_info, b.sorted_token_ids,
                                                                 b.sorted_weights, b.moe_buf, tokens, topk, experts,
                                                                 chunks, moe_units);
  else
    moe_sort_scatter_kernel<false><<<grid, kMxThreads, smem, s>>>(b.topk_ids, b.topk_weights, b.expert_mask,
                                                                  b.chunk_counts, b.expert_info, b.sorted_token_ids,
                                                                  b.sorted_weights, b.moe_buf, tokens, topk, experts,
                                                                  chunks, moe_units);
  gpu_check_launch("moe_sort_scatter_kernel");
}

}  // namespace fb
