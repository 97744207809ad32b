// The exact MoE GEMMs at prefill on the warpgroup matrix unit (wgmma, sm_90a): stage 1 (gate_up and
// SwiGLU) and stage 2's GEMM, one persistent CTA per SM walking 128 x 128 tiles (weight rows x sorted
// rows of one expert; moe_gemm_wgmma_plan.hpp).
//
// A CTA is three warpgroups. The producer (128 threads; thread t owns weight row t and token row t
// of the tile) loads each stage's MXFP4 bytes and scale bytes a stage ahead into registers, converts
// the codes to e4m3 (e2m1x8_to_e4m3x8_by_table, exact; a token block with a scale near 1 also carries
// its scale) into the stage's 128-byte-swizzled tiles, decodes the scales into
// floats, votes whether every scale of the stage allows the one-operation promotion,
// then `fence.proxy.async` (its generic stores become visible to the matrix unit's async reads) and
// arrives on the stage's `full` barrier. Each consumer warpgroup (64 weight rows) runs, per 32-K MX
// block, one m64n128k32 e4m3 MMA from a zero accumulator, waits for it and promotes the 64 block
// sums into its fp32 accumulators on the CUDA cores, blocks in ascending K; after a stage's four
// blocks it releases the stage (`empty`). While one warpgroup promotes, the other's MMA runs.
//
// Staged tokens (since run 64, where the case gives the token_stage workspace): a prologue launch
// (moe_token_stage_kernel) converts every sorted position's activation row once, by the same tables,
// into MoeTokenStageLayout; the producer's first thread then copies each stage's token tile by TMA
// (128 rows x 128 bytes, the same 128-byte swizzle) and the producer converts only its weight row.
// Stage 1 converted each token row once per column tile (12 times at the m31 shapes), stage 2 48
// times; run 63's profile found the producer's conversion the engine's limit.
//
// Exactness: each MMA forms whole-block sums S_q * 2^(u-14) (13 significant bits), exact in the matrix
// unit (MoeGemmGpu.MatrixUnitBlockSumsAreExact proves the fp8 unit keeps them; this kernel's GPU test
// compares it with the emulation bitwise at every path). The promotion is the canonical one, or its
// one-operation form where the stage's scales make it the same bits (moe_gemm_wgmma_plan.hpp). So
// the outputs equal the emulation's bitwise, and the kernel is deterministic (no atomics, fixed
// order).
//
// kFast (the fast variant, moe_gemm_fast.hpp): the producer first finds its two rows' largest scale
// bytes and converts every block relative to them (one table a block for both operands), so the
// scales leave the K loop; a consumer warpgroup issues a stage's four k32 MMAs as one 128-K partial,
// waits for it and adds it to its fp32 accumulators (one add per output and stage), and scales the
// sums by the rows' factors at the tile's last stage. Deterministic too, within a derived bound of
// the emulation.
#include <algorithm>
#include <cstdlib>
#include <string>

#include "core/errors.hpp"
#include "core/knob_choice.hpp"
#include "kernels/common/gpu_check.hpp"
#include "kernels/common/multiprocessors.hpp"
#include "kernels/fp8_gemm/fp8_gemm_wgmma_device.hpp"
#include "kernels/fp8_gemm/fp8_gemm_wgmma_probe.hpp"
#include "kernels/fp8_gemm/fp8_gemm_wgmma_tma.hpp"
#include "kernels/moe_gemm/moe_gemm_exact.hpp"
#include "kernels/moe_gemm/moe_gemm_fast.hpp"
#include "kernels/moe_gemm/moe_gemm_wgmma.hpp"
#include "kernels/moe_gemm/moe_gemm_wgmma_plan.hpp"

namespace fb {
namespace {

constexpr int kConsumerThreads = 256;             // two warpgroups of 64 weight rows
constexpr int kCtaThreads = kConsumerThreads + 128;  // and the producer warpgroup

struct MxWgArgs {
  const std::int32_t* sorted_token_ids;
  const float* sorted_weights;  // stage 2
  const std::int32_t* sorted_expert_ids;
  const std::int32_t* num_valid_ids;
  const std::uint8_t* act;         // stage 1: xq [T][K/2]; stage 2: a2q [T*k][I/2]
  const std::uint8_t* act_scales;  // swizzled at sorted positions
  const std::uint8_t* w;           // W13 [E][2I][K/2] or W2 [E][K][I/2]
  const std::uint8_t* w_scales;
  std::uint16_t* a1;  // stage 1
  float* y;           // stage 2
  std::int64_t tokens, topk, block, inner, outputs, max_entries, experts;
  std::uint8_t* token_stage;   // the staged token rows (MoeTokenStageLayout), or null
  std::uint8_t* weight_stage;  // the staged weight rows (MoeWeightStageLayout), or null
};

// What the GEMM reads by TMA instead of converting it in its producer: nothing, the token tiles
// (the prologue's staged rows, since run 64), or the token and the weight tiles (run 66).
constexpr int kStageNone = 0, kStageTokens = 1, kStageTokensWeights = 2;

// One tile of a CTA's walk: work item i = (sort block, column tile), column tiles fastest, so the
// CTAs in flight share a token tile's bytes through L2. Items whose block does not start a tile are
// skipped (every warp walks the same items, so the producer and the consumers agree).
struct MxWgTile {
  std::int64_t first;   // sorted position of the tile's first row
  std::int64_t expert;
  std::int64_t col;     // column tile
  int rows;             // sorted rows the tile covers (its blocks x B)
};

#if FB_WGMMA_AVAILABLE
// The walk (moe_wgmma_walk_next), one warp's lanes at a time: every lane of the calling warp must
// call next() with the same i, and all get the same tile.
struct MxWgWalk {
  const MxWgArgs& a;
  std::int64_t valid, valid_blocks, per_tile, col_tiles;

  __device__ bool next(std::int64_t& i, MxWgTile& t) const {
    const int lane = static_cast<int>(threadIdx.x % 32);
    std::int64_t item = 0;
    int blocks = 0;
    if (!moe_wgmma_walk_next(a.sorted_expert_ids, i, gridDim.x, valid_blocks, col_tiles, per_tile, item, blocks,
                             [lane](auto&& pred) { return __ballot_sync(0xFFFFFFFFu, pred(lane)); }))
      return false;
    const std::int64_t yb = item / col_tiles;
    t = MxWgTile{yb * a.block, a.sorted_expert_ids[yb], item % col_tiles, blocks * static_cast<int>(a.block)};
    return true;
  }
};

// A producer thread's bytes of one stage: 64 bytes (4 MX blocks) of its weight row and of its token
// row, and their 4 scale bytes each.
struct MxWgRaw {
  uint4 w[kMxWgStageBlocks], x[kMxWgStageBlocks];
  std::uint32_t ws, xs;
};

// One MX block of a row into the stage: the codes' values times 2^u (the table's u; u > 0 carries a
// token block's scale in the operand), in k order.
__device__ inline void store_e4m3_block(std::uint8_t* tile, int r, int j, uint4 raw, const E2m1E4m3Table& table) {
  const std::uint32_t words[4] = {raw.x, raw.y, raw.z, raw.w};
  std::uint32_t e[8];
#pragma unroll
  for (int q = 0; q < 4; ++q) e2m1x8_to_e4m3x8_by_table(words[q], table, e[2 * q], e[2 * q + 1]);
  *reinterpret_cast<uint4*>(tile + moe_wgmma_word_offset(r, j, 0)) = make_uint4(e[0], e[1], e[2], e[3]);
  *reinterpret_cast<uint4*>(tile + moe_wgmma_word_offset(r, j, 4)) = make_uint4(e[4], e[5], e[6], e[7]);
}

// part = the MX block's sums of this warpgroup's 64 rows x the tile's 128 tokens (fresh, waited for),
// the two tiles named by their descriptors.
__device__ inline void mx_wgmma_block(float* part, std::uint64_t rows, std::uint64_t tokens) {
  wgmma_fence_registers(part);
  asm volatile("wgmma.fence.sync.aligned;\n" ::: "memory");
  wgmma_m64n128k32_e4m3(part, rows, tokens, 0);
  asm volatile("wgmma.commit_group.sync.aligned;\n" ::: "memory");
  asm volatile("wgmma.wait_group.sync.aligned 0;\n" ::: "memory");
  wgmma_fence_registers(part);
}
#endif

// The token prologue: one warp per sorted position writes its activation row's e4m3 bytes (each
// block by the table the producer would use: exact's token shift, or fast's window below the row's
// largest scale byte), its scale bytes row-major and its largest scale byte (MoeTokenStageLayout).
// The same conversion as the producer's, so the same bytes reach the matrix unit.
constexpr int kStageWarps = 8;
template <bool kStage1, bool kFast>
__global__ __launch_bounds__(32 * kStageWarps) void moe_token_stage_kernel(MxWgArgs a) {
#if FB_WGMMA_AVAILABLE
  const std::int64_t p = static_cast<std::int64_t>(blockIdx.x) * kStageWarps + threadIdx.x / 32;
  const int lane = static_cast<int>(threadIdx.x % 32);
  if (p >= a.max_entries) return;
  const MoeTokenStageLayout L{a.max_entries, a.inner};
  const std::int64_t nb = a.inner / 32, pad = (nb + 7) / 8 * 8, row_bytes = a.inner / 2;
  std::uint8_t* e4m3 = a.token_stage + p * a.inner;
  std::uint8_t* scales = a.token_stage + L.scales_at() + p * nb;
  const std::uint8_t* x = nullptr;
  std::uint32_t xs_row = 0;
  if (p < moe_valid_entries(a.num_valid_ids[0], a.max_entries)) {
    const std::int32_t entry = a.sorted_token_ids[p];
    const std::int64_t token = moe_entry_token(entry);
    if (token < a.tokens) {
      x = a.act + (kStage1 ? token : token * a.topk + moe_entry_slot(entry)) * row_bytes;
      xs_row = mx_scale_row_part(p, pad);
    }
  }
  std::uint32_t c = 0x7Fu;  // a padding row's largest scale byte (as the producer's)
  if (x && kFast) {
    c = 0;
    for (std::int64_t y = lane; y < nb; y += 32) c = max(c, static_cast<std::uint32_t>(a.act_scales[xs_row + mx_scale_block_part(y)]));
    c = __reduce_max_sync(0xFFFFFFFFu, c);
  }
  for (std::int64_t y = lane; y < nb; y += 32) {
    uint4 lo = make_uint4(0, 0, 0, 0), hi = lo;
    std::uint32_t s = 0x7Fu;
    if (x) {
      s = a.act_scales[xs_row + mx_scale_block_part(y)];
      const E2m1E4m3Table table = kFast ? mx_fast_table(s, c) : e2m1_e4m3_table(mx_token_shift(s));
      const uint4 raw = reinterpret_cast<const uint4*>(x)[y];
      e2m1x8_to_e4m3x8_by_table(raw.x, table, lo.x, lo.y);
      e2m1x8_to_e4m3x8_by_table(raw.y, table, lo.z, lo.w);
      e2m1x8_to_e4m3x8_by_table(raw.z, table, hi.x, hi.y);
      e2m1x8_to_e4m3x8_by_table(raw.w, table, hi.z, hi.w);
    }
    reinterpret_cast<uint4*>(e4m3 + 32 * y)[0] = lo;
    reinterpret_cast<uint4*>(e4m3 + 32 * y)[1] = hi;
    scales[y] = static_cast<std::uint8_t>(s);
  }
  if (lane == 0) a.token_stage[L.maxima_at() + p] = static_cast<std::uint8_t>(c);
#else
  (void)a;
#endif
}

// The weight prologue: a CTA per 128 staged rows (one column tile of one expert), a warp per row at a
// time, writes the e4m3 bytes the producer would convert (exact: the plain table; fast: each block by
// its window below the row's largest scale byte) in k order (MoeWeightStageLayout). Experts that no
// sort block names are skipped (their rows are never read): the CTA scans the valid blocks' expert
// ids first.
template <bool kStage1, bool kFast>
__global__ __launch_bounds__(32 * kStageWarps) void moe_weight_stage_kernel(MxWgArgs a) {
#if FB_WGMMA_AVAILABLE
  const std::int64_t rows = kStage1 ? 2 * a.outputs : a.outputs;  // an expert's weight rows
  const std::int64_t tiles = rows / kMxWgRows;
  const std::int64_t e = blockIdx.x / tiles, q0 = blockIdx.x % tiles * kMxWgRows;
  const std::int64_t valid_blocks = (moe_valid_entries(a.num_valid_ids[0], a.max_entries) + a.block - 1) / a.block;
  bool used = false;
  for (std::int64_t y0 = 0; y0 < valid_blocks && !used; y0 += blockDim.x) {
    const std::int64_t y = y0 + threadIdx.x;
    used = __syncthreads_or(y < valid_blocks && a.sorted_expert_ids[y] == e) != 0;
  }
  if (!used) return;
  const std::int64_t nb = a.inner / 32, row_bytes = a.inner / 2;
  const int lane = static_cast<int>(threadIdx.x % 32);
  const E2m1E4m3Table plain = e2m1_e4m3_table(0);
  for (int r = static_cast<int>(threadIdx.x / 32); r < kMxWgRows; r += kStageWarps) {
    const std::int64_t q = q0 + r, src = e * rows + moe_wgmma_staged_weight_row(q, kStage1, a.outputs);
    const std::uint8_t* w = a.w + src * row_bytes;
    const std::uint8_t* ws = a.w_scales + src * nb;
    std::uint8_t* dst = a.weight_stage + (e * rows + q) * a.inner;
    std::uint32_t c = 0;
    if constexpr (kFast) {
      for (std::int64_t y = lane; y < nb; y += 32) c = max(c, static_cast<std::uint32_t>(ws[y]));
      c = __reduce_max_sync(0xFFFFFFFFu, c);
    }
    for (std::int64_t y = lane; y < nb; y += 32) {
      const E2m1E4m3Table table = kFast ? mx_fast_table(ws[y], c) : plain;
      const uint4 raw = reinterpret_cast<const uint4*>(w)[y];
      uint4 lo, hi;
      e2m1x8_to_e4m3x8_by_table(raw.x, table, lo.x, lo.y);
      e2m1x8_to_e4m3x8_by_table(raw.y, table, lo.z, lo.w);
      e2m1x8_to_e4m3x8_by_table(raw.z, table, hi.x, hi.y);
      e2m1x8_to_e4m3x8_by_table(raw.w, table, hi.z, hi.w);
      reinterpret_cast<uint4*>(dst + 32 * y)[0] = lo;
      reinterpret_cast<uint4*>(dst + 32 * y)[1] = hi;
    }
  }
#else
  (void)a;
#endif
}

template <bool kStage1, bool kOai, bool kFast, int kStaging>
__global__ __launch_bounds__(kCtaThreads, 1) void moe_wgmma_kernel(MxWgArgs a, const FB_GRID_CONSTANT WgmmaTensorMap tokens,
                                                                   const FB_GRID_CONSTANT WgmmaTensorMap weights) {
#if FB_WGMMA_AVAILABLE
  constexpr bool kStaged = kStaging >= kStageTokens, kStagedW = kStaging == kStageTokensWeights;
  extern __shared__ __align__(128) std::uint8_t smem_raw[];
  std::uint8_t* smem = smem_raw + (1024 - smem_address(smem_raw) % 1024) % 1024;
  auto* full = reinterpret_cast<std::uint64_t*>(smem + kMxWgStages * kMxWgStageBytes);
  std::uint64_t* empty = full + kMxWgStages;
  if (threadIdx.x == 0) {
    for (int s = 0; s < kMxWgStages; ++s) {
      mbar_init(&full[s], 128);                 // every producer thread, after its stores
      mbar_init(&empty[s], kConsumerThreads);   // every consumer thread, after its reads
    }
    asm volatile("fence.mbarrier_init.release.cluster;\n" ::: "memory");
  }
  __syncthreads();

  const std::int64_t valid = moe_valid_entries(a.num_valid_ids[0], a.max_entries);
  const MxWgWalk walk{a, valid, (valid + a.block - 1) / a.block, kMxWgTokens / a.block,
                      a.outputs / (kStage1 ? kMxWgRows / 2 : kMxWgRows)};
  const std::int64_t nb = a.inner / 32, pad = (nb + 7) / 8 * 8, row_bytes = a.inner / 2;
  const int stages = static_cast<int>(a.inner / kMxWgStageK);
  const MoeTokenStageLayout staged{a.max_entries, a.inner};
  std::int64_t it = 0;  // stages through the ring so far: slot it % kMxWgStages, its use it / kMxWgStages
  std::int64_t i = blockIdx.x;
  MxWgTile tile{};

  if (threadIdx.x >= kConsumerThreads) {  // the producer warpgroup
    const int t = static_cast<int>(threadIdx.x) - kConsumerThreads;
    const E2m1E4m3Table plain = e2m1_e4m3_table(0);  // the weights' values times 2^-6
    while (walk.next(i, tile)) {
      const std::uint8_t* x = nullptr;
      std::uint32_t xs_row = 0;
      if (t < tile.rows && tile.first + t < valid) {
        const std::int32_t entry = a.sorted_token_ids[tile.first + t];
        const std::int64_t token = moe_entry_token(entry);
        if (token < a.tokens) {
          x = a.act + (kStage1 ? token : token * a.topk + moe_entry_slot(entry)) * row_bytes;
          xs_row = mx_scale_row_part(tile.first + t, pad);
        }
      }
      // Staged: the row's scale bytes, one word a stage, from the prologue's copy.
      const std::uint8_t* xs_staged = nullptr;
      if (kStaged && x) xs_staged = a.token_stage + staged.scales_at() + (tile.first + t) * nb;
      const std::int64_t wrow = kStage1 ? tile.expert * 2 * a.outputs +
                                              moe_wgmma_stage1_row(t, tile.col * (kMxWgRows / 2), a.outputs)
                                        : tile.expert * a.outputs + tile.col * kMxWgRows + t;
      const std::uint8_t* w = a.w + wrow * row_bytes;
      const std::uint8_t* ws = a.w_scales + wrow * nb;
      // Staged weights: the tile's first staged row (moe_wgmma_staged_weight_row's order).
      const std::int64_t wstaged = tile.expert * (kStage1 ? 2 * a.outputs : a.outputs) + tile.col * kMxWgRows;
      const auto load = [&](int ks) {
        MxWgRaw r;
        const uint4* wp = reinterpret_cast<const uint4*>(w + ks * (kMxWgStageK / 2));
#pragma unroll
        for (int j = 0; j < kMxWgStageBlocks; ++j) r.w[j] = kStagedW ? make_uint4(0, 0, 0, 0) : wp[j];
        r.ws = load_u32(ws + ks * kMxWgStageBlocks);
        r.xs = 0x7F7F7F7Fu;  // padding rows: scale 1 (their sums are 0, their outputs never written)
        if constexpr (kStaged) {  // the token tile comes by TMA
#pragma unroll
          for (int j = 0; j < kMxWgStageBlocks; ++j) r.x[j] = make_uint4(0, 0, 0, 0);  // unused, defined
          if (xs_staged) r.xs = load_u32(xs_staged + ks * kMxWgStageBlocks);
        } else if (x) {
          const uint4* xp = reinterpret_cast<const uint4*>(x + ks * (kMxWgStageK / 2));
          std::uint32_t xs = 0;
#pragma unroll
          for (int j = 0; j < kMxWgStageBlocks; ++j) {
            r.x[j] = xp[j];
            xs |= static_cast<std::uint32_t>(a.act_scales[xs_row + mx_scale_block_part(kMxWgStageBlocks * ks + j)]) << (8 * j);
          }
          r.xs = xs;
        } else {
#pragma unroll
          for (int j = 0; j < kMxWgStageBlocks; ++j) r.x[j] = make_uint4(0, 0, 0, 0);
        }
        return r;
      };
      MxWgRaw cur = load(0);
      // fast: the two rows' largest scale bytes (padding rows: scale 1, as their loads say).
      std::uint32_t cw = 0, ca = 0x7Fu;
      if constexpr (kFast) {
        for (std::int64_t y = 0; y < nb; y += 4) cw = mx_max_scale_byte(cw, load_u32(ws + y));
        if (kStaged && x) {
          ca = a.token_stage[staged.maxima_at() + tile.first + t];
        } else if (x) {
          ca = 0;
          for (std::int64_t y = 0; y < nb; ++y) ca = mx_max_scale_byte(ca, a.act_scales[xs_row + mx_scale_block_part(y)]);
        }
      }
      for (int ks = 0; ks < stages; ++ks, ++it) {
        MxWgRaw next = cur;
        if (ks + 1 < stages) next = load(ks + 1);  // in flight while this stage is converted
        const int s = static_cast<int>(it % kMxWgStages);
        const std::int64_t use = it / kMxWgStages;
        if (use > 0) mbar_wait(&empty[s], static_cast<std::uint32_t>((use - 1) & 1));
        std::uint8_t* stage = smem + s * kMxWgStageBytes;
        if (kStaged && t == 0) {  // the token tile: 128 staged rows from the tile's first, this stage's 128 K
          mbar_expect_bytes(&full[s], kStagedW ? 2 * kMxWgTileBytes : kMxWgTileBytes);
          if constexpr (kStagedW)  // and the weight tile: the tile's 128 staged weight rows
            tma_load_box(stage, &weights, static_cast<std::int64_t>(ks) * kMxWgStageK, wstaged, &full[s]);
          tma_load_box(stage + kMxWgTileBytes, &tokens, static_cast<std::int64_t>(ks) * kMxWgStageK, tile.first, &full[s]);
        }
        if constexpr (kFast) {
#pragma unroll
          for (int j = 0; j < kMxWgStageBlocks; ++j) {
            [[maybe_unused]] const std::uint32_t sa = (cur.xs >> (8 * j)) & 0xFFu;
            [[maybe_unused]] const std::uint32_t sw = (cur.ws >> (8 * j)) & 0xFFu;
            if constexpr (!kStagedW) store_e4m3_block(stage, t, j, cur.w[j], mx_fast_table(sw, cw));
            if constexpr (!kStaged) store_e4m3_block(stage + kMxWgTileBytes, t, j, cur.x[j], mx_fast_table(sa, ca));
          }
          // The rows' factors ride in every stage; the consumers read them at the tile's last.
          reinterpret_cast<float*>(stage + kMxWgTokenScalesAt)[t] = mx_fast_row_factor(ca);
          reinterpret_cast<float*>(stage + kMxWgWeightScalesAt)[t] = mx_fast_row_factor(cw);
          asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory");
          mbar_arrive(&full[s]);
          cur = next;
          continue;
        }
        bool fast = true;
#pragma unroll
        for (int j = 0; j < kMxWgStageBlocks; ++j) {
          const std::uint32_t sa = (cur.xs >> (8 * j)) & 0xFFu, sw = (cur.ws >> (8 * j)) & 0xFFu;
          const std::uint32_t u = mx_token_shift(sa);
          if constexpr (!kStagedW) store_e4m3_block(stage, t, j, cur.w[j], plain);
          if constexpr (!kStaged) store_e4m3_block(stage + kMxWgTileBytes, t, j, cur.x[j], e2m1_e4m3_table(u));
          fast = fast && u != 0 && mx_fast_scale(sw);
          reinterpret_cast<float*>(stage + kMxWgTokenScalesAt)[j * kMxWgTokens + t] = mx_scale_float(sa);
          reinterpret_cast<float*>(stage + kMxWgTokenPreAt)[j * kMxWgTokens + t] = mx_token_pre(u);
          reinterpret_cast<float*>(stage + kMxWgWeightScalesAt)[j * kMxWgRows + t] =
              mx_fast_scale(sw) ? mx_fast_weight_scale(sw) : 0.0f;
          stage[kMxWgWeightBytesAt + j * kMxWgRows + t] = static_cast<std::uint8_t>(sw);
        }
        const bool all = __all_sync(0xFFFFFFFFu, fast);
        if (t % 32 == 0) stage[kMxWgVotesAt + t / 32] = all ? 1 : 0;
        asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory");
        mbar_arrive(&full[s]);
        cur = next;
      }
    }
    return;
  }

  const int g = static_cast<int>(threadIdx.x / 128), warp = static_cast<int>(threadIdx.x / 32) % 4;
  const int lane = static_cast<int>(threadIdx.x % 32);
  const int r0 = 64 * g + 16 * warp + lane / 4;  // CTA-local weight row of d[j] for (j / 2) % 2 == 0; r0 + 8 the other
  const int c0 = 2 * (lane % 4);                 // token column of d[0]; d[4c + h] is column 8c + c0 + h
  // The descriptors of stage 0's tiles (this warpgroup's 64 weight rows, the 128 token rows); stage s
  // and its block j are s stages and 32 j bytes further, added in the address field's 16-byte units
  // (no carry: shared memory ends below 2^18 bytes). Since run 65 nothing between a stage's `full`
  // wait and its MMAs computes an address: the profile found a shared-window read (S2R) and a chain
  // of address arithmetic in front of every block's MMA.
  const std::uint64_t desc_w0 = wgmma_descriptor(smem + g * (kMxWgRows / 2) * 128);
  const std::uint64_t desc_x0 = wgmma_descriptor(smem + kMxWgTileBytes);
  constexpr std::uint64_t kStageDesc = kMxWgStageBytes >> 4, kBlockDesc = 32 >> 4;
  float acc[kWgmmaAccRegs], part[kWgmmaAccRegs];
  while (walk.next(i, tile)) {
#pragma unroll
    for (int j = 0; j < kWgmmaAccRegs; ++j) acc[j] = 0.0f;
    for (int ks = 0; ks < stages; ++ks, ++it) {
      const int s = static_cast<int>(it % kMxWgStages);
      mbar_wait(&full[s], static_cast<std::uint32_t>((it / kMxWgStages) & 1));
      const std::uint8_t* stage = smem + s * kMxWgStageBytes;
      const std::uint64_t desc_w = desc_w0 + s * kStageDesc, desc_x = desc_x0 + s * kStageDesc;
      if constexpr (kFast) {  // one 128-K partial, added; the rows' factors at the tile's last stage
        wgmma_issue_block(part, desc_w, desc_x);
        wgmma_wait_block(part);
#pragma unroll
        for (int j = 0; j < kWgmmaAccRegs; ++j) acc[j] = acc[j] + part[j];
        if (ks + 1 == stages) {
          const float* fa = reinterpret_cast<const float*>(stage + kMxWgTokenScalesAt) + c0;
          const float* fw = reinterpret_cast<const float*>(stage + kMxWgWeightScalesAt);
          const float w0 = fw[r0], w1 = fw[r0 + 8];
#pragma unroll
          for (int c = 0; c < kWgmmaAccRegs / 4; ++c) {
            const float2 av = *reinterpret_cast<const float2*>(fa + 8 * c);
            acc[4 * c + 0] = mx_fast_finish(acc[4 * c + 0], av.x, w0);
            acc[4 * c + 1] = mx_fast_finish(acc[4 * c + 1], av.y, w0);
            acc[4 * c + 2] = mx_fast_finish(acc[4 * c + 2], av.x, w1);
            acc[4 * c + 3] = mx_fast_finish(acc[4 * c + 3], av.y, w1);
          }
        }
        mbar_arrive(&empty[s]);
        continue;
      }
      const bool fast = *reinterpret_cast<const std::uint32_t*>(stage + kMxWgVotesAt) == 0x01010101u;
      if (fast) {  // the token scales are in the sums: one fma per output
        // A block's weight factors are read before its MMA (the MMA's memory clobber would hold a
        // later read behind its wait), and the four blocks are unrolled: a block is its MMA, the
        // wait and 64 fmas (run 65's profile: 99 instructions a block before, the first fma
        // waiting on the factors' reads).
        const float* sw = reinterpret_cast<const float*>(stage + kMxWgWeightScalesAt) + r0;
#pragma unroll
        for (int j = 0; j < kMxWgStageBlocks; ++j) {
          const float w0 = sw[j * kMxWgRows], w1 = sw[j * kMxWgRows + 8];
          mx_wgmma_block(part, desc_w + j * kBlockDesc, desc_x + j * kBlockDesc);
#pragma unroll
          for (int c = 0; c < kWgmmaAccRegs / 4; ++c) {
            acc[4 * c + 0] = mx_block_promote_fast(acc[4 * c + 0], part[4 * c + 0], w0);
            acc[4 * c + 1] = mx_block_promote_fast(acc[4 * c + 1], part[4 * c + 1], w0);
            acc[4 * c + 2] = mx_block_promote_fast(acc[4 * c + 2], part[4 * c + 2], w1);
            acc[4 * c + 3] = mx_block_promote_fast(acc[4 * c + 3], part[4 * c + 3], w1);
          }
        }
      } else {  // the canonical operations
#pragma unroll 1
        for (int j = 0; j < kMxWgStageBlocks; ++j) {
          mx_wgmma_block(part, desc_w + j * kBlockDesc, desc_x + j * kBlockDesc);
          const float* sa = reinterpret_cast<const float*>(stage + kMxWgTokenScalesAt) + j * kMxWgTokens + c0;
          const float* pre = reinterpret_cast<const float*>(stage + kMxWgTokenPreAt) + j * kMxWgTokens + c0;
          const std::uint8_t* sb = stage + kMxWgWeightBytesAt + j * kMxWgRows;
          const float w0 = mx_scale_float(sb[r0]), w1 = mx_scale_float(sb[r0 + 8]);
#pragma unroll
          for (int c = 0; c < kWgmmaAccRegs / 4; ++c) {
            const float2 av = *reinterpret_cast<const float2*>(sa + 8 * c);
            const float2 pv = *reinterpret_cast<const float2*>(pre + 8 * c);
            acc[4 * c + 0] = mx_block_promote_shifted(acc[4 * c + 0], part[4 * c + 0], pv.x, av.x, w0);
            acc[4 * c + 1] = mx_block_promote_shifted(acc[4 * c + 1], part[4 * c + 1], pv.y, av.y, w0);
            acc[4 * c + 2] = mx_block_promote_shifted(acc[4 * c + 2], part[4 * c + 2], pv.x, av.x, w1);
            acc[4 * c + 3] = mx_block_promote_shifted(acc[4 * c + 3], part[4 * c + 3], pv.y, av.y, w1);
          }
        }
      }
      mbar_arrive(&empty[s]);
    }
    // Epilogue: the tile's real rows (padding and rows past the tile are never written). The
    // thread's 32 token columns' rows (and stage 2's weights) are read first, all in flight
    // together, then the outputs written (a read after a write could not move above it). The
    // reads are predicated on one bound and addressed from one base (run 65's profile of stage 2:
    // 758 instructions a tile and warp here, two branches and five compares an element, about a
    // quarter of the consumers' instructions with 6 stages a tile).
    const int live = static_cast<int>(std::min<std::int64_t>(tile.rows, valid - tile.first));  // rows with entries
    const std::int32_t* ids = a.sorted_token_ids + tile.first + c0;
    std::int32_t out_row[kWgmmaAccRegs / 2];  // token * k + slot (< 2^31: moe_exact_fits), -1: none
#pragma unroll
    for (int c = 0; c < kWgmmaAccRegs / 4; ++c)
#pragma unroll
      for (int h = 0; h < 2; ++h) {
        const bool in = 8 * c + c0 + h < live;
        const std::int32_t entry = in ? ids[8 * c + h] : 0;
        if constexpr (!kStage1) {  // stage 2 writes w_p * y: the same product, formed here
          const float wp = in ? a.sorted_weights[tile.first + c0 + 8 * c + h] : 0.0f;
          acc[4 * c + h] = wp * acc[4 * c + h];
          acc[4 * c + 2 + h] = wp * acc[4 * c + 2 + h];
        }
        const std::int64_t token = moe_entry_token(entry);
        out_row[2 * c + h] = in && token < a.tokens ? static_cast<std::int32_t>(token * a.topk + moe_entry_slot(entry)) : -1;
      }
    if constexpr (kStage1) {
      std::uint16_t* out = a.a1 + moe_wgmma_stage1_output(g, warp, lane, tile.col * (kMxWgRows / 2));
#pragma unroll
      for (int c = 0; c < kWgmmaAccRegs / 4; ++c)
#pragma unroll
        for (int h = 0; h < 2; ++h)
          if (out_row[2 * c + h] >= 0)
            out[static_cast<std::int64_t>(out_row[2 * c + h]) * a.outputs] =
                bf16_from_float(moe_swiglu(kOai, acc[4 * c + h], acc[4 * c + 2 + h]));
    } else {
      float* out = a.y + tile.col * kMxWgRows + r0;
#pragma unroll
      for (int c = 0; c < kWgmmaAccRegs / 4; ++c)
#pragma unroll
        for (int h = 0; h < 2; ++h)
          if (out_row[2 * c + h] >= 0) {
            float* y = out + static_cast<std::int64_t>(out_row[2 * c + h]) * a.outputs;
            y[0] = acc[4 * c + h];
            y[8] = acc[4 * c + 2 + h];
          }
    }
  }
#else
  (void)a;
#endif
}

// FUSEBENCH_MOE_TOKEN_STAGE=0 turns the token prologue off (the producer converts the token tiles
// in the kernel, as before run 64): the same bits, for timing the two forms in one process.
bool token_stage_enabled() {
  const char* variable = "FUSEBENCH_MOE_TOKEN_STAGE";
  const std::string v = knob_choice(variable, std::getenv(variable), "0", "1");
  return v.empty() || v == "1";
}

// FUSEBENCH_MOE_WEIGHT_STAGE: 1 stages the weights wherever the tokens are staged, 0 never; unset,
// moe_weight_stage_by_default decides (moe_gemm_wgmma.hpp).
bool weight_stage_wanted(const MoeGemmParams& p) {
  const char* variable = "FUSEBENCH_MOE_WEIGHT_STAGE";
  const std::string v = knob_choice(variable, std::getenv(variable), "0", "1");
  return v.empty() ? moe_weight_stage_by_default(p) : v == "1";
}

template <bool kStage1, bool kOai, bool kFast, int kStaging>
void launch_gemm(const MxWgArgs& a, const WgmmaTensorMap& tokens, const WgmmaTensorMap& weights, unsigned grid,
                 hipStream_t stream) {
  static const bool once = [] {
    gpu_check(hipFuncSetAttribute(reinterpret_cast<const void*>(moe_wgmma_kernel<kStage1, kOai, kFast, kStaging>),
                                  hipFuncAttributeMaxDynamicSharedMemorySize, kMxWgSmemBytes),
              "hipFuncSetAttribute(moe wgmma shared memory)");
    return true;
  }();
  (void)once;
  moe_wgmma_kernel<kStage1, kOai, kFast, kStaging><<<grid, kCtaThreads, kMxWgSmemBytes, stream>>>(a, tokens, weights);
  gpu_check_launch(kStage1 ? (kFast ? "moe_wgmma_kernel (stage 1, fast)" : "moe_wgmma_kernel (stage 1)")
                           : (kFast ? "moe_wgmma_kernel (stage 2, fast)" : "moe_wgmma_kernel (stage 2)"));
}

// With a token_stage workspace (and the prologue enabled): the prologue, then the kernel reading the
// staged rows by TMA; else the kernel converting the token tiles itself. With a weight_stage
// workspace too (the caller passes it only where moe_wgmma_stages_weights says so): the weight
// prologue first, and the kernel reads both tiles by TMA.
template <bool kStage1, bool kOai, bool kFast>
void launch(const MxWgArgs& a, std::int64_t max_blocks, void* stream) {
  const auto s = static_cast<hipStream_t>(stream);
  const std::int64_t work = max_blocks * (a.outputs / (kStage1 ? kMxWgRows / 2 : kMxWgRows));
  const auto grid = static_cast<unsigned>(std::min<std::int64_t>(work, device_multiprocessors()));
  if (a.token_stage && token_stage_enabled()) {
    moe_token_stage_kernel<kStage1, kFast>
        <<<static_cast<unsigned>((a.max_entries + kStageWarps - 1) / kStageWarps), 32 * kStageWarps, 0, s>>>(a);
    gpu_check_launch(kStage1 ? "moe_token_stage_kernel (stage 1)" : "moe_token_stage_kernel (stage 2)");
    const WgmmaTensorMap tokens = wgmma_rows_map("staged token rows", a.token_stage, a.max_entries, kMxWgTokens, a.inner);
    if (a.weight_stage) {
      const std::int64_t rows = kStage1 ? 2 * a.outputs : a.outputs;
      moe_weight_stage_kernel<kStage1, kFast>
          <<<static_cast<unsigned>(a.experts * (rows / kMxWgRows)), 32 * kStageWarps, 0, s>>>(a);
      gpu_check_launch(kStage1 ? "moe_weight_stage_kernel (stage 1)" : "moe_weight_stage_kernel (stage 2)");
      const WgmmaTensorMap weights =
          wgmma_rows_map("staged weight rows", a.weight_stage, a.experts * rows, kMxWgRows, a.inner);
      launch_gemm<kStage1, kOai, kFast, kStageTokensWeights>(a, tokens, weights, grid, s);
      return;
    }
    launch_gemm<kStage1, kOai, kFast, kStageTokens>(a, tokens, WgmmaTensorMap{}, grid, s);
    return;
  }
  launch_gemm<kStage1, kOai, kFast, kStageNone>(a, WgmmaTensorMap{}, WgmmaTensorMap{}, grid, s);
}

}  // namespace

std::int64_t moe_wgmma_min_pairs() {
  const char* env = std::getenv("FUSEBENCH_MOE_WGMMA_MIN_PAIRS");
  if (!env || !*env) return kMoeWgmmaMinPairs;
  char* end = nullptr;
  const long long v = std::strtoll(env, &end, 10);
  if (*end != '\0' || v < 0)
    throw InputError(std::string("FUSEBENCH_MOE_WGMMA_MIN_PAIRS must be a count of routed pairs, not '") + env + "'");
  return v;
}

std::string moe_wgmma_unavailable() { return wgmma_device_unavailable(); }

bool moe_wgmma_stages_tokens(const MoeGemmParams& p, bool stage1) {
  return p.engine != MoeGemmEngine::plain && moe_wgmma_takes(p, stage1) && token_stage_enabled();
}

bool moe_wgmma_stages_weights(const MoeGemmParams& p, bool stage1) {
  return moe_wgmma_stages_tokens(p, stage1) && weight_stage_wanted(p);
}

bool moe_wgmma_takes(const MoeGemmParams& p, bool stage1) {
  if (p.engine == MoeGemmEngine::plain || p.pairs() < moe_wgmma_min_pairs()) return false;
  const bool fits = moe_wgmma_tiles(p, stage1);
  // The producer keeps a row's activation-scale offset in 32 bits (as the mma.sync kernels do).
  const bool offsets = moe_exact_fits(p.scale_rows(), stage1 ? p.hidden_blocks_pad() : p.inter_blocks_pad());
  return fits && offsets && moe_wgmma_unavailable().empty();
}

void moe_stage1_wgmma_launch(const MoeGemmParams& p, const MoeStage1Buffers& b, void* stream) {
  const MxWgArgs a{b.sorted_token_ids, nullptr, b.sorted_expert_ids, b.num_valid_ids, b.xq, b.x_scales, b.w13,
                   b.w13_scales,       b.a1,    nullptr,             p.tokens,        p.topk, p.block, p.hidden,
                   p.inter,            p.max_entries(), p.experts, b.token_stage,
                   b.weight_stage && moe_wgmma_stages_weights(p, true) ? b.weight_stage : nullptr};
  const bool fast = p.engine == MoeGemmEngine::fast;
  if (p.oai && fast)
    launch<true, true, true>(a, p.max_blocks(), stream);
  else if (p.oai)
    launch<true, true, false>(a, p.max_blocks(), stream);
  else if (fast)
    launch<true, false, true>(a, p.max_blocks(), stream);
  else
    launch<true, false, false>(a, p.max_blocks(), stream);
}

void moe_stage2_wgmma_gemm_launch(const MoeGemmParams& p, const MoeStage2Buffers& b, void* stream) {
  const MxWgArgs a{b.sorted_token_ids, b.sorted_weights, b.sorted_expert_ids, b.num_valid_ids, b.a2q, b.a2_scales,
                   b.w2,               b.w2_scales,      nullptr,             b.y,             p.tokens, p.topk,
                   p.block,            p.inter,          p.hidden,            p.max_entries(),  p.experts,
                   b.token_stage,      b.weight_stage && moe_wgmma_stages_weights(p, false) ? b.weight_stage : nullptr};
  if (p.engine == MoeGemmEngine::fast)
    launch<false, false, true>(a, p.max_blocks(), stream);
  else
    launch<false, false, false>(a, p.max_blocks(), stream);
}

}  // namespace fb
