// The exact MoE GEMMs at decode on the warpgroup matrix unit (wgmma, sm_90a): stage 1 (gate_up and
// SwiGLU) and stage 2's GEMM, a CTA per (64 weight rows, sort block). Design and maps:
// moe_gemm_decode_plan.hpp.
//
// A CTA is one warpgroup. Each thread reads its two weight rows' fragment words (one 32-bit word a
// row and 32-K block) from a TMA ring in shared memory (4 slots of two stages, filled by one thread,
// freed by an mbarrier each warp arrives on) and converts them with bit operations into wgmma's A
// registers; the sort block's live tokens (up to 16 a pass) are converted by all 128 threads, a chunk
// of 8 or 16 stages at a time, into a swizzled tile that is wgmma's B. Per stage: four m64nNk32 e4m3
// MMAs from a zero accumulator (N = the live rows rounded up to 8), then each block's sums promoted
// in K order on the CUDA cores: one fma an output where the chunk's token blocks carry their scales
// (a vote at the chunk's barrier) and the thread's weight scale bytes allow it, else the canonical
// four operations. The only CTA barriers are the chunks' (two a pass at stage 1's K = 6144).
//
// Exactness as the prefill engine's (moe_gemm_wgmma.hip): each MMA forms whole-block sums S_q *
// 2^(u-14), exact in the fp8 matrix unit (MoeGemmGpu.MatrixUnitBlockSumsAreExact), promoted in the
// canonical order or its one-operation equal, so the outputs are the emulation's bits; no atomics,
// no split K: deterministic.
#include <cstdlib>
#include <string>

#include "core/errors.hpp"
#include "core/knob_choice.hpp"
#include "kernels/common/gpu_check.hpp"
#include "kernels/fp8_gemm/fp8_gemm_wgmma_device.hpp"
#include "kernels/fp8_gemm/fp8_gemm_wgmma_tma.hpp"
#include "kernels/moe_gemm/moe_gemm_decode.hpp"
#include "kernels/moe_gemm/moe_gemm_decode_plan.hpp"
#include "kernels/moe_gemm/moe_gemm_exact.hpp"
#include "kernels/moe_gemm/moe_gemm_wgmma.hpp"

namespace fb {
namespace {

struct MxDecArgs {
  const std::int32_t* sorted_token_ids;
  const float* sorted_weights;  // stage 2
  const std::int32_t* sorted_expert_ids;
  const std::int32_t* num_valid_ids;
  const std::uint8_t* act;         // stage 1: xq [T][K/2]; stage 2: a2q [T*k][I/2]
  const std::uint8_t* act_scales;  // swizzled at sorted positions
  const std::uint8_t* w;           // W13 [E][2I][K/2] or W2 [E][K][I/2]
  const std::uint8_t* w_scales;    // [E][rows][inner/32]
  std::uint16_t* a1;               // stage 1
  float* y;                        // stage 2
  std::int64_t tokens, topk, block, inner, outputs, max_entries;
};

#if FB_WGMMA_AVAILABLE
// d = A B^T for the warpgroup's 64 weight rows x kN tokens and one 32-K block, from a zero
// accumulator (scale-d false); A from registers (a thread's four fragment words), B by descriptor.
template <int kN>
__device__ inline void wgmma_rs_e4m3(float* d, const std::uint32_t* a, std::uint64_t desc_b);
template <>
__device__ inline void wgmma_rs_e4m3<8>(float* d, const std::uint32_t* a, std::uint64_t desc_b) {
  asm volatile(
      "{\n.reg .pred p;\nsetp.ne.b32 p, %9, 0;\n"
      "wgmma.mma_async.sync.aligned.m64n8k32.f32.e4m3.e4m3 {%0, %1, %2, %3}, {%4, %5, %6, %7}, %8, p, 1, 1;\n}\n"
      : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(desc_b), "r"(0));
}
template <>
__device__ inline void wgmma_rs_e4m3<16>(float* d, const std::uint32_t* a, std::uint64_t desc_b) {
  asm volatile(
      "{\n.reg .pred p;\nsetp.ne.b32 p, %13, 0;\n"
      "wgmma.mma_async.sync.aligned.m64n16k32.f32.e4m3.e4m3 {%0, %1, %2, %3, %4, %5, %6, %7}, {%8, %9, %10, %11}, %12, p, 1, 1;\n}\n"
      : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7])
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(desc_b), "r"(0));
}

__device__ inline std::uint32_t load_word(const std::uint8_t* p) { return __ldg(reinterpret_cast<const unsigned int*>(p)); }

// One pass: up to 16 sorted rows (`rows` live ones, the first at sorted position `first`, their
// entries in shared memory) against the CTA's 64 weight rows, the whole K; kN = rows rounded up to 8.
// `ring_fills`: the CTA's ring fills before this pass (its pairs of stages are the next ones).
template <bool kStage1, bool kOai, int kN>
__device__ void moe_decode_pass(const MxDecArgs& a, const WgmmaTensorMap& wmap, const std::int32_t* entries, int rows,
                                std::int64_t first, std::int64_t expert, std::int64_t tile, std::uint8_t* smem,
                                int ring_fills) {
  constexpr int kAcc = kN / 2;                  // a block's sums a thread holds
  constexpr int kTokenWords = kN / 8;           // token words a thread converts a stage
  constexpr int kFly = kN == 8 ? 4 : 2;         // MMAs in flight (their sums' registers)
  constexpr int kChunk = moe_decode_chunk_stages(kN);
  static_assert(kChunk % 2 == 0, "a chunk is whole pairs of stages (the ring's slots)");
  const int t = static_cast<int>(threadIdx.x), warp = t / 32, lane = t % 32, q = lane % 4;
  const int r0 = 16 * warp + lane / 4;          // CTA-local weight row of d[4c], d[4c+1]; r0 + 8 of d[4c+2], d[4c+3]
  const std::int64_t nb = a.inner / 32, pad = (nb + 7) / 8 * 8, row_bytes = a.inner / 2;
  const int stages = static_cast<int>(a.inner / kMxDecStageK), pairs = stages / 2;
  const std::int64_t expert_rows = kStage1 ? 2 * a.outputs : a.outputs;
  const std::int64_t wr0 = expert * expert_rows + moe_decode_weight_row(r0, tile, kStage1, a.outputs);
  const std::int64_t wr1 = expert * expert_rows + moe_decode_weight_row(r0 + 8, tile, kStage1, a.outputs);
  const std::uint8_t* s0 = a.w_scales + wr0 * nb;
  const std::uint8_t* s1 = a.w_scales + wr1 * nb;

  // The token words this thread converts: word t % 16 of each stage of rows t / 16 + 8 p.
  const int tj = moe_decode_token_block(t), tq = moe_decode_token_word(t);
  const std::uint8_t* x[kTokenWords];
  std::uint32_t xs_row[kTokenWords];
#pragma unroll
  for (int p = 0; p < kTokenWords; ++p) {
    const int n = moe_decode_token_row(t, p);
    x[p] = nullptr;
    xs_row[p] = 0;
    if (n < rows) {
      const std::int32_t entry = entries[n];
      const std::int64_t token = moe_entry_token(entry);
      if (token < a.tokens) {
        x[p] = a.act + (kStage1 ? token : token * a.topk + moe_entry_slot(entry)) * row_bytes + 4 * (t % 16);
        xs_row[p] = mx_scale_row_part(first + n, pad);
      }
    }
  }
  // The chunk of stages c0 .. c0 + kChunk - 1 into the tile: every word loaded first, then converted
  // and stored with its scale byte. Returns whether this thread's token blocks all carry their
  // scales (padding rows are zeros at scale 1: shifted; their outputs are never written).
  const auto build_chunk = [&](int c0) {
    std::uint32_t xw[kChunk][kTokenWords], xb[kChunk][kTokenWords];
#pragma unroll
    for (int c = 0; c < kChunk; ++c)
#pragma unroll
      for (int p = 0; p < kTokenWords; ++p) {
        const bool live = x[p] != nullptr && c0 + c < stages;
        xw[c][p] = live ? load_word(x[p] + (c0 + c) * (kMxDecStageK / 2)) : 0u;
        xb[c][p] = live ? a.act_scales[xs_row[p] + mx_scale_block_part(kMxDecStageBlocks * (c0 + c) + tj)] : 0x7Fu;
      }
    bool fast = true;
#pragma unroll
    for (int c = 0; c < kChunk; ++c)
#pragma unroll
      for (int p = 0; p < kTokenWords; ++p) {
        const int n = moe_decode_token_row(t, p);
        const std::uint32_t u = mx_token_shift(xb[c][p]);
        moe_decode_store_token_word(smem + moe_decode_chunk_tile(c, kN), n, tj, tq, xw[c][p], e2m1_e4m3_table(u));
        if (tq == 0) smem[moe_decode_chunk_scale(c, tj, n)] = static_cast<std::uint8_t>(xb[c][p]);
        fast = fast && u != 0;
      }
    asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory");  // the tile is read by the matrix unit
    return fast;
  };

  // The ring: this pass's pairs of stages are fills ring_fills .. of the CTA's ring.
  std::uint8_t* ring = smem + kMxDecRingAt;
  auto* full = reinterpret_cast<std::uint64_t*>(smem + kMxDecBarsAt);
  auto* empty = full + kMxDecRingSlots;
  const int sr0 = moe_decode_ring_row(r0, kStage1), sr1 = moe_decode_ring_row(r0 + 8, kStage1);
  const auto fill = [&](int p) {  // thread 0: the pair of stages p into its slot
    const int s = (ring_fills + p) % kMxDecRingSlots;
    mbar_arrive_expect_bytes(&full[s], kMxDecRingSlotBytes);
#pragma unroll
    for (int box = 0; box < 2; ++box)
      tma_load_box(ring + s * kMxDecRingSlotBytes + box * (kMxDecRingSlotBytes / 2), &wmap, 128 * p,
                   expert * expert_rows + moe_decode_ring_box_row(box, tile, kStage1, a.outputs), &full[s]);
  };
  // Every slot's previous fill was read before the last pass ended (its closing barrier).
  if (t == 0)
    for (int p = 0; p < pairs && p < kMxDecRingSlots; ++p) fill(p);

  float acc[kAcc], part[kFly][kAcc];
#pragma unroll
  for (int i = 0; i < kAcc; ++i) acc[i] = 0.0f;
#pragma unroll
  for (int f = 0; f < kFly; ++f)
#pragma unroll
    for (int i = 0; i < kAcc; ++i) part[f][i] = 0.0f;

  // The weight scale words (a row's four bytes a stage), loaded two stages ahead.
  std::uint32_t ws_now0 = load_word(s0), ws_now1 = load_word(s1);
  std::uint32_t ws_next0 = load_word(s0 + kMxDecStageBlocks), ws_next1 = load_word(s1 + kMxDecStageBlocks);
  bool tokens_fast = true;
  for (int pair = 0; pair < pairs; ++pair) {
    const int c0 = 2 * pair % kChunk;  // the pair's first stage within its chunk
    if (c0 == 0) {  // a new chunk: every MMA of the last one has completed (each warp waited for its own)
      __syncthreads();
      tokens_fast = __syncthreads_and(build_chunk(2 * pair)) != 0;
    }
    const int f = ring_fills + pair, s = f % kMxDecRingSlots;
    if (t == 0 && pair >= 1 && pair - 1 + kMxDecRingSlots < pairs) {  // the last pair's slot, once the four warps read it
      const int fp = f - 1;
      mbar_wait(&empty[fp % kMxDecRingSlots], static_cast<std::uint32_t>((fp / kMxDecRingSlots) & 1));
      fill(pair - 1 + kMxDecRingSlots);
    }
    mbar_wait(&full[s], static_cast<std::uint32_t>((f / kMxDecRingSlots) & 1));
    const std::uint8_t* words = ring + s * kMxDecRingSlotBytes;
#pragma unroll
    for (int h = 0; h < 2; ++h) {
      const int ks = 2 * pair + h, c = c0 + h;
      const std::uint64_t desc = wgmma_descriptor(smem + moe_decode_chunk_tile(c, kN));
      std::uint32_t w0[kMxDecStageBlocks], w1[kMxDecStageBlocks];
#pragma unroll
      for (int j = 0; j < kMxDecStageBlocks; ++j) {
        w0[j] = *reinterpret_cast<const std::uint32_t*>(words + moe_decode_ring_word(sr0, h, j, q));
        w1[j] = *reinterpret_cast<const std::uint32_t*>(words + moe_decode_ring_word(sr1, h, j, q));
      }
      const std::uint32_t ws0 = ws_now0, ws1 = ws_now1;
      ws_now0 = ws_next0;
      ws_now1 = ws_next1;
      if (ks + 2 < stages) {
        ws_next0 = load_word(s0 + (ks + 2) * kMxDecStageBlocks);
        ws_next1 = load_word(s1 + (ks + 2) * kMxDecStageBlocks);
      }
      // One operation an output where the stage's token blocks carry their scales and this thread's
      // rows' scale bytes allow it (a thread's own choice: both forms give the same bits).
      const bool fast = tokens_fast && moe_decode_fast_scales(ws0) && moe_decode_fast_scales(ws1);
#pragma unroll
      for (int j0 = 0; j0 < kMxDecStageBlocks; j0 += kFly) {
        MxAFragment frag[kFly];
#pragma unroll
        for (int f = 0; f < kFly; ++f) frag[f] = mx_a_fragment_from_words(w0[j0 + f], w1[j0 + f]);
#pragma unroll
        for (int f = 0; f < kFly; ++f) wgmma_fence_registers<kAcc>(part[f]);
        asm volatile("wgmma.fence.sync.aligned;\n" ::: "memory");
#pragma unroll
        for (int f = 0; f < kFly; ++f) wgmma_rs_e4m3<kN>(part[f], frag[f].a, desc + ((32 * (j0 + f)) >> 4));
        asm volatile("wgmma.commit_group.sync.aligned;\n" ::: "memory");
        if (h == 1 && j0 + kFly == kMxDecStageBlocks) {  // the warp has read the pair's words: the slot is free
          __syncwarp();
          if (lane == 0) mbar_arrive(&empty[s]);
        }
        asm volatile("wgmma.wait_group.sync.aligned 0;\n" ::: "memory");
#pragma unroll
        for (int f = 0; f < kFly; ++f) wgmma_fence_registers<kAcc>(part[f]);
        if (fast) {  // the token scales are in the sums: one fma an output
#pragma unroll
          for (int f = 0; f < kFly; ++f) {
            const int j = j0 + f;
            const float f0 = mx_fast_weight_scale((ws0 >> (8 * j)) & 0xFFu), f1 = mx_fast_weight_scale((ws1 >> (8 * j)) & 0xFFu);
#pragma unroll
            for (int cc = 0; cc < kN / 8; ++cc)
#pragma unroll
              for (int hh = 0; hh < 2; ++hh) {
                acc[4 * cc + hh] = mx_block_promote_fast(acc[4 * cc + hh], part[f][4 * cc + hh], f0);
                acc[4 * cc + 2 + hh] = mx_block_promote_fast(acc[4 * cc + 2 + hh], part[f][4 * cc + 2 + hh], f1);
              }
          }
        } else {  // the canonical operations, the token scales from the chunk's scale bytes
#pragma unroll
          for (int f = 0; f < kFly; ++f) {
            const int j = j0 + f;
            const float ws_0 = mx_scale_float((ws0 >> (8 * j)) & 0xFFu), ws_1 = mx_scale_float((ws1 >> (8 * j)) & 0xFFu);
#pragma unroll
            for (int cc = 0; cc < kN / 8; ++cc)
#pragma unroll
              for (int hh = 0; hh < 2; ++hh) {
                const std::uint32_t sa = smem[moe_decode_chunk_scale(c, j, 8 * cc + 2 * q + hh)];
                const float av = mx_scale_float(sa), pv = mx_token_pre(mx_token_shift(sa));
                acc[4 * cc + hh] = mx_block_promote_shifted(acc[4 * cc + hh], part[f][4 * cc + hh], pv, av, ws_0);
                acc[4 * cc + 2 + hh] = mx_block_promote_shifted(acc[4 * cc + 2 + hh], part[f][4 * cc + 2 + hh], pv, av, ws_1);
              }
          }
        }
      }
    }
  }

  // Epilogue: the pass's live rows (padding rows are never written).
#pragma unroll
  for (int c = 0; c < kN / 8; ++c)
#pragma unroll
    for (int h = 0; h < 2; ++h) {
      const int n = 8 * c + 2 * q + h;
      if (n >= rows) continue;
      const std::int32_t entry = entries[n];
      const std::int64_t token = moe_entry_token(entry);
      if (token >= a.tokens) continue;
      const std::int64_t row = token * a.topk + moe_entry_slot(entry);
      if constexpr (kStage1) {
        a.a1[row * a.outputs + moe_decode_stage1_output(warp, lane, tile)] =
            bf16_from_float(moe_swiglu(kOai, acc[4 * c + h], acc[4 * c + 2 + h]));
      } else {
        const float wp = a.sorted_weights[first + n];
        float* y = a.y + row * a.outputs + tile * kMxDecRows + r0;
        y[0] = wp * acc[4 * c + h];
        y[8] = wp * acc[4 * c + 2 + h];
      }
    }
}
#endif

// At most 128 registers (4 CTAs, 16 warps an SM).
template <bool kStage1, bool kOai>
__global__ __launch_bounds__(kMxDecThreads, 4) void moe_decode_kernel(MxDecArgs a, const FB_GRID_CONSTANT WgmmaTensorMap wmap) {
#if FB_WGMMA_AVAILABLE
  extern __shared__ __align__(128) std::uint8_t smem_raw[];
  std::uint8_t* smem = smem_raw + (1024 - smem_address(smem_raw) % 1024) % 1024;
  __shared__ std::int32_t entries[kMxWgTokens];
  __shared__ int live_rows;
  const std::int64_t valid = moe_valid_entries(a.num_valid_ids[0], a.max_entries);
  const std::int64_t first = static_cast<std::int64_t>(blockIdx.y) * a.block;
  if (first >= valid) return;  // the whole CTA: blocks past the sorted entries
  if (threadIdx.x == 0) {
    live_rows = 0;
    auto* full = reinterpret_cast<std::uint64_t*>(smem + kMxDecBarsAt);
    for (int s = 0; s < kMxDecRingSlots; ++s) {
      mbar_init(&full[s], 1);                                // the filling thread's arrival, then the bytes
      mbar_init(&full[kMxDecRingSlots + s], kMxDecThreads / 32);  // empty: one arrival a warp
    }
    asm volatile("fence.mbarrier_init.release.cluster;\n" ::: "memory");
  }
  __syncthreads();
  int last = 0;  // one past this thread's last row with a token
  for (int r = static_cast<int>(threadIdx.x); r < a.block; r += kMxDecThreads) {
    const std::int32_t entry = first + r < valid ? a.sorted_token_ids[first + r] : kPadEntry;
    entries[r] = entry;
    if (moe_entry_token(entry) < a.tokens) last = r + 1;
  }
  last = __reduce_max_sync(0xFFFFFFFFu, last);
  if (threadIdx.x % 32 == 0 && last > 0) atomicMax(&live_rows, last);
  __syncthreads();
  const int live = live_rows;
  const std::int64_t expert = a.sorted_expert_ids[blockIdx.y], tile = blockIdx.x;
  const int pairs = static_cast<int>(a.inner / (2 * kMxDecStageK));
  for (int p0 = 0, fills = 0; p0 < live; p0 += kMxDecMaxTokens, fills += pairs) {
    const int rows = live - p0 < kMxDecMaxTokens ? live - p0 : kMxDecMaxTokens;
    if (moe_decode_tokens_n(rows) == 8)
      moe_decode_pass<kStage1, kOai, 8>(a, wmap, entries + p0, rows, first + p0, expert, tile, smem, fills);
    else
      moe_decode_pass<kStage1, kOai, 16>(a, wmap, entries + p0, rows, first + p0, expert, tile, smem, fills);
    __syncthreads();  // the next pass rewrites the chunk and refills the ring's slots
  }
#else
  (void)a;
#endif
}

// FUSEBENCH_MOE_DECODE_ENGINE: wgmma (the decode engine wherever it fits), warp (never: the mma.sync
// kernels), unset: moe_decode_by_default's rule. So one build times every form.
std::string decode_engine_choice() {
  const char* variable = "FUSEBENCH_MOE_DECODE_ENGINE";
  return knob_choice(variable, std::getenv(variable), "wgmma", "warp");
}

template <bool kStage1, bool kOai>
void launch_kernel(const MoeGemmParams& p, const MxDecArgs& a, dim3 grid, hipStream_t s) {
  const std::int64_t rows = p.experts * (kStage1 ? 2 * p.inter : p.hidden);
  const WgmmaTensorMap wmap = wgmma_rows_map("decode weight rows", a.w, rows, kMxDecRows / 2, a.inner / 2);
  static const bool once = [] {  // above the default 48 KB: opted in once a process
    gpu_check(hipFuncSetAttribute(reinterpret_cast<const void*>(moe_decode_kernel<kStage1, kOai>),
                                  hipFuncAttributeMaxDynamicSharedMemorySize, kMxDecSmemBytes),
              "hipFuncSetAttribute(moe decode shared memory)");
    return true;
  }();
  (void)once;
  moe_decode_kernel<kStage1, kOai><<<grid, kMxDecThreads, kMxDecSmemBytes, s>>>(a, wmap);
}

template <bool kStage1>
void launch(const MoeGemmParams& p, const MxDecArgs& a, void* stream) {
  const dim3 grid(static_cast<unsigned>(moe_decode_col_tiles(a.outputs, kStage1)), static_cast<unsigned>(p.max_blocks()));
  const auto s = static_cast<hipStream_t>(stream);
  if (kStage1 && p.oai)
    launch_kernel<kStage1, true>(p, a, grid, s);
  else
    launch_kernel<kStage1, false>(p, a, grid, s);
  gpu_check_launch(kStage1 ? "moe_decode_kernel (stage 1)" : "moe_decode_kernel (stage 2)");
}

}  // namespace

bool moe_decode_takes(const MoeGemmParams& p, bool stage1) {
  if (p.engine == MoeGemmEngine::plain || moe_wgmma_takes(p, stage1)) return false;
  const std::string choice = decode_engine_choice();
  if (choice == "warp" || (choice.empty() && !moe_decode_by_default(p, stage1))) return false;
  const bool fits = stage1 ? moe_decode_shape_fits(p.hidden, p.inter, true) : moe_decode_shape_fits(p.inter, p.hidden, false);
  return fits && p.max_blocks() <= 65535 && moe_wgmma_unavailable().empty();
}

void moe_stage1_decode_launch(const MoeGemmParams& p, const MoeStage1Buffers& b, void* stream) {
  const MxDecArgs a{b.sorted_token_ids, nullptr, b.sorted_expert_ids, b.num_valid_ids, b.xq, b.x_scales, b.w13,
                    b.w13_scales,       b.a1,    nullptr,             p.tokens,        p.topk, p.block, p.hidden,
                    p.inter,            p.max_entries()};
  launch<true>(p, a, stream);
}

void moe_stage2_decode_gemm_launch(const MoeGemmParams& p, const MoeStage2Buffers& b, void* stream) {
  const MxDecArgs a{b.sorted_token_ids, b.sorted_weights, b.sorted_expert_ids, b.num_valid_ids, b.a2q, b.a2_scales,
                    b.w2,               b.w2_scales,      nullptr,             b.y,             p.tokens, p.topk,
                    p.block,            p.inter,          p.hidden,            p.max_entries()};
  launch<false>(p, a, stream);
}

}  // namespace fb
