// Device-side router code shared by the plain kernels (chain), the fused gate, F3's shared launch
// and F4's one-launch decode router: one GEMV work item (a block), one gate row (a 32-lane group).
// Orders: router_math.hpp. Lanes cooperate only in aligned groups of 32 (xor shuffles below 32
// stay inside them on wave32 and wave64 alike); a block is 256 threads = 8 lane groups.
#pragma once

#include <type_traits>

#include "kernels/common/hip_compat.hpp"
#include "kernels/common/vector_io.hpp"
#include "kernels/router/router.hpp"
#include "kernels/router/router_gemv_map.hpp"
#include "kernels/router/router_math.hpp"

// A timing hook inside the gate (router_gate_rows), empty here: tools/probes/router_timeline_probe.cu
// defines it to record the SM clock between the gate's phases. No effect on what the kernels compute.
#ifndef FB_ROUTER_GATE_STAMP
#define FB_ROUTER_GATE_STAMP(phase)
#endif

namespace fb {

inline constexpr int kRouterThreads = 256;
inline constexpr int kRouterGroups = kRouterThreads / 32;  // lane groups per block: experts per item, rows per gate block
static_assert(kRouterGroups == kRouterGemvGroups, "router_gemv_map.hpp's block is this block");

// The GEMV's work items: router_gemv_map.hpp (shared with the host test of the mapping).
inline RouterGemvShape router_gemv_shape(const RouterParams& p, int row_tile,
                                         int item_experts = kRouterGemvGroups) {
  RouterGemvShape sh{static_cast<int>(p.rows), static_cast<int>(p.hidden), static_cast<int>(p.experts),
                     static_cast<int>(p.split_k), row_tile};
  sh.item_experts = item_experts;
  return sh;
}

__device__ inline float router_lane_tree(float v) {
#pragma unroll
  for (int h = 16; h > 0; h >>= 1) v = v + __uint_as_float(shfl_xor_u32(__float_as_uint(v), h));
  return v;
}

// 8 consecutive weights of row e from k, widened to fp32.
template <RouterWeight kW>
__device__ inline void router_load_weights(const void* w, std::int64_t at, float (&out)[8]) {
  if constexpr (kW == RouterWeight::f32) {
    const float4* p = reinterpret_cast<const float4*>(static_cast<const float*>(w) + at);
    const float4 a = p[0], b = p[1];
    out[0] = a.x, out[1] = a.y, out[2] = a.z, out[3] = a.w, out[4] = b.x, out[5] = b.y, out[6] = b.z, out[7] = b.w;
  } else {
    const Bf16x8 v = load_bf16x8(static_cast<const std::uint16_t*>(w) + at);
#pragma unroll
    for (int j = 0; j < 8; ++j) out[j] = bf16x8_element(v, j);
  }
}

// One work item by a whole block: lane group g takes expert 8 eg + g, lane l virtual lane l of
// every row of the tile; partials [S][M][E] of the tile's rows for slice s.
// Mapping (not order), kBatched: the slice is walked in steps of kRouterGemvBatch chunks per lane
// (a step is 32 x 6 chunks = 1536 k: all of a slice at S = 4 and 8, K = 6144). In each step a lane
// first issues the weight loads of its 6 chunks, then the block copies the tile's x for the step
// into shared memory (`xs`, router_gemv_stage_bytes: every thread a few 16-byte pieces), and the
// lanes read x from there. run36's loop read x from global memory per row and chunk, and ptxas
// kept those loads next to their use: Nsight Compute showed the GEMV stalled on them (long
// scoreboard, 12.8 of 17.4 cycles per instruction at M = 16), one memory round trip after another.
// Not kBatched: one chunk at a time with x loaded per row inside the row test (about 60 registers,
// no shared memory): F3, whose other blocks run F2's producer and want its occupancy (4 blocks of
// 256 per SM). The adds stay in chunk order either way.
inline constexpr int kRouterGemvBatch = 6;
inline constexpr int kRouterGemvStep = 32 * kRouterGemvBatch;  // chunks per step

// Shared memory the batched GEMV item needs for a row tile (bf16 x of one step).
constexpr int router_gemv_stage_bytes(int row_tile) { return row_tile * kRouterGemvStep * 8 * 2; }

template <RouterWeight kW, int kRowTile, bool kBatched = true>
__device__ inline void router_gemv_item(const std::uint16_t* x, const void* w, float* partials,
                                        const RouterGemvShape& sh, int item, std::uint16_t* xs = nullptr) {
  static_assert(kRowTile <= 8, "the tile of 16 is router_gemv_wide_item's");
  // sh.row_tile == kRowTile and sh.item_experts == 8 (router_gemv_shape's default)
  const RouterGemvItem it = router_gemv_item_at(sh, item);
  const int s = it.s, m0 = it.m0, rows = it.rows;
  const int lane = static_cast<int>(threadIdx.x % 32), e = router_gemv_expert(sh, it, static_cast<int>(threadIdx.x / 32), 0);
  const int L = sh.slice(), chunks = L / 8;
  const std::int64_t k0 = static_cast<std::int64_t>(s) * L;
  float acc[kRowTile];
#pragma unroll
  for (int r = 0; r < kRowTile; ++r) acc[r] = 0.0f;
  if constexpr (!kBatched) {
#pragma unroll 4  // several chunks' loads in flight per lane
    for (int c = lane; c < chunks; c += 32) {
      const std::int64_t k = k0 + static_cast<std::int64_t>(c) * 8;
      float wv[8];
      router_load_weights<kW>(w, static_cast<std::int64_t>(e) * sh.hidden + k, wv);
#pragma unroll
      for (int r = 0; r < kRowTile; ++r) {
        if (r < rows) {
          const Bf16x8 xv = load_bf16x8(x + static_cast<std::int64_t>(m0 + r) * sh.hidden + k);
#pragma unroll
          for (int j = 0; j < 8; ++j) acc[r] = acc[r] + bf16x8_element(xv, j) * wv[j];
        }
      }
    }
  } else {
    // The tile's x pieces of one step: row r, chunk q (16 bytes) at xs[(r * kRouterGemvStep + q) * 8].
    constexpr int kPieces = kRowTile * kRouterGemvStep;
    constexpr int kPiecesPerThread = (kPieces + kRouterThreads - 1) / kRouterThreads;
    for (int step = 0; step * kRouterGemvStep < chunks; ++step) {
      const int c0 = step * kRouterGemvStep + lane;
      float wv[kRouterGemvBatch][8];
#pragma unroll
      for (int i = 0; i < kRouterGemvBatch; ++i) {
        const int c = c0 + 32 * i;
        if (c < chunks) {
          router_load_weights<kW>(w, static_cast<std::int64_t>(e) * sh.hidden + k0 + static_cast<std::int64_t>(c) * 8, wv[i]);
        } else {
#pragma unroll
          for (int j = 0; j < 8; ++j) wv[i][j] = 0.0f;
        }
      }
      Bf16x8 piece[kPiecesPerThread];
#pragma unroll
      for (int u = 0; u < kPiecesPerThread; ++u) {
        const int v = static_cast<int>(threadIdx.x) + u * kRouterThreads, r = v / kRouterGemvStep;
        const int c = step * kRouterGemvStep + v % kRouterGemvStep;
        piece[u] = Bf16x8{make_uint4(0, 0, 0, 0)};
        if (v < kPieces && r < rows && c < chunks)
          piece[u] = load_bf16x8(x + static_cast<std::int64_t>(m0 + r) * sh.hidden + k0 + static_cast<std::int64_t>(c) * 8);
      }
      __syncthreads();  // the previous step's (or item's) readers are done with xs
#pragma unroll
      for (int u = 0; u < kPiecesPerThread; ++u) {
        const int v = static_cast<int>(threadIdx.x) + u * kRouterThreads;
        if (v < kPieces) store_bf16x8(xs + static_cast<std::int64_t>(v) * 8, piece[u]);
      }
      __syncthreads();
#pragma unroll
      for (int r = 0; r < kRowTile; ++r) {
#pragma unroll
        for (int i = 0; i < kRouterGemvBatch; ++i) {
          if (c0 + 32 * i >= chunks) continue;
          const Bf16x8 xv = load_bf16x8(xs + (r * kRouterGemvStep + lane + 32 * i) * 8);
#pragma unroll
          for (int j = 0; j < 8; ++j) acc[r] = acc[r] + bf16x8_element(xv, j) * wv[i][j];
        }
      }
    }
  }
#pragma unroll
  for (int r = 0; r < kRowTile; ++r) {
    const float v = router_lane_tree(acc[r]);  // every lane takes part
    if (lane == 0 && r < rows) partials[(static_cast<std::int64_t>(s) * sh.rows + m0 + r) * sh.experts + e] = v;
  }
}

// The GEMV item past 16 rows (router/gate at M = 24..512; row tile 16, or 8 while 16-row items
// would be fewer than the SMs: router_gemv_plan). router_gemv_item's loop at the tile of 16 held
// 176 registers with fp32 W (153 with bf16: one block of 256 per SM, 8 warps, latency-bound at about
// one instruction per cycle per SM; run38 M = 512: 160 us) and fed each 16-byte x read from shared
// memory to 8 products after 8 bf16 widenings. This item differs in mapping only:
//  - a lane group takes kRouterWideExperts = 2 experts (item_experts 16: router_gemv_map.hpp), so
//    each x value read feeds 2 products, and a block reads x for 16 experts, not 8;
//  - the block widens each step's x tile into fp32 in shared memory once (the staging threads, 8
//    widenings per 16-byte piece), so the lanes read fp32 x and do no widening; the fp32 tile is two
//    planes (elements 0-3 and 4-7 of every chunk), so a lane's float4 reads are consecutive across
//    the lanes (no bank conflicts);
//  - a step is 32 x kRouterWideBatch chunks (512 k: 32 KB of fp32 x at 16 rows), so fewer weights
//    are in flight per lane (2 experts x 2 chunks x 8 floats) and the item fits in fewer registers
//    (-Xptxas -v: see kernels/router/README.md), two blocks per SM.
// Order per partial unchanged: lane l adds chunks l, l + 32, ... of the slice in increasing order
// (step by step, and i = 0, 1 within a step), elements j = 0..7 in order, the product
// f32(x) * f32(w) rounded alone (widening is exact, so widening early is the same value); then
// the same xor tree. So router_gemv_emu still gives the GPU's bits.
inline constexpr int kRouterWideExperts = 2;
inline constexpr int kRouterWideBatch = 2;
inline constexpr int kRouterWideStep = 32 * kRouterWideBatch;  // chunks per step
static_assert(kRouterWideExperts * kRouterGemvGroups == 2 * kRouterGemvGroups,
              "router_gemv_plan's wide item_experts is this item's");

// Shared memory the wide item needs for a row tile (fp32 x of one step).
constexpr int router_gemv_wide_stage_bytes(int row_tile) { return row_tile * kRouterWideStep * 8 * 4; }

template <RouterWeight kW, int kRowTile>
__device__ inline void router_gemv_wide_item(const std::uint16_t* x, const void* w, float* partials,
                                             const RouterGemvShape& sh, int item, float* xs) {
  // sh.row_tile == kRowTile and sh.item_experts == 16 (router_gemv_plan past 16 rows)
  constexpr int kE = kRouterWideExperts;
  constexpr int kPieces = kRowTile * kRouterWideStep;  // 16-byte bf16 pieces of x per step
  static_assert(kPieces % kRouterThreads == 0, "every thread stages the same number of pieces");
  constexpr int kPiecesPerThread = kPieces / kRouterThreads;
  const RouterGemvItem it = router_gemv_item_at(sh, item);
  const int lane = static_cast<int>(threadIdx.x % 32), g = static_cast<int>(threadIdx.x / 32);
  const int e = router_gemv_expert(sh, it, g, 0);  // this group's experts: e .. e + kE - 1
  const int L = sh.slice(), chunks = L / 8;
  const std::int64_t k0 = static_cast<std::int64_t>(it.s) * L;
  float4* xs4 = reinterpret_cast<float4*>(xs);  // plane h (elements 4h..4h+3), row r, chunk q: xs4[h kPieces + r step + q]
  float acc[kE][kRowTile];
#pragma unroll
  for (int q = 0; q < kE; ++q)
#pragma unroll
    for (int r = 0; r < kRowTile; ++r) acc[q][r] = 0.0f;
  for (int cb = 0; cb < chunks; cb += kRouterWideStep) {
    float wv[kE][kRouterWideBatch][8];
#pragma unroll
    for (int q = 0; q < kE; ++q)
#pragma unroll
      for (int i = 0; i < kRouterWideBatch; ++i) {
        const int c = cb + lane + 32 * i;
        if (c < chunks) {
          router_load_weights<kW>(w, static_cast<std::int64_t>(e + q) * sh.hidden + k0 + static_cast<std::int64_t>(c) * 8,
                                  wv[q][i]);
        } else {
#pragma unroll
          for (int j = 0; j < 8; ++j) wv[q][i][j] = 0.0f;
        }
      }
    Bf16x8 piece[kPiecesPerThread];
#pragma unroll
    for (int u = 0; u < kPiecesPerThread; ++u) {
      const int v = static_cast<int>(threadIdx.x) + u * kRouterThreads, r = v / kRouterWideStep;
      const int c = cb + v % kRouterWideStep;
      piece[u] = Bf16x8{make_uint4(0, 0, 0, 0)};
      if (r < it.rows && c < chunks)
        piece[u] = load_bf16x8(x + static_cast<std::int64_t>(it.m0 + r) * sh.hidden + k0 + static_cast<std::int64_t>(c) * 8);
    }
    __syncthreads();  // the previous step's (or item's) readers are done with xs
#pragma unroll
    for (int u = 0; u < kPiecesPerThread; ++u) {
      const int v = static_cast<int>(threadIdx.x) + u * kRouterThreads;
      xs4[v] = make_float4(bf16x8_element(piece[u], 0), bf16x8_element(piece[u], 1), bf16x8_element(piece[u], 2),
                           bf16x8_element(piece[u], 3));
      xs4[kPieces + v] = make_float4(bf16x8_element(piece[u], 4), bf16x8_element(piece[u], 5),
                                     bf16x8_element(piece[u], 6), bf16x8_element(piece[u], 7));
    }
    __syncthreads();
#pragma unroll
    for (int r = 0; r < kRowTile; ++r) {
#pragma unroll
      for (int i = 0; i < kRouterWideBatch; ++i) {
        if (cb + lane + 32 * i >= chunks) continue;
        const int at = r * kRouterWideStep + lane + 32 * i;
        const float4 a = xs4[at], b = xs4[kPieces + at];
        const float xv[8] = {a.x, a.y, a.z, a.w, b.x, b.y, b.z, b.w};
#pragma unroll
        for (int q = 0; q < kE; ++q)
#pragma unroll
          for (int j = 0; j < 8; ++j) acc[q][r] = acc[q][r] + xv[j] * wv[q][i][j];
      }
    }
  }
#pragma unroll
  for (int q = 0; q < kE; ++q)
#pragma unroll
    for (int r = 0; r < kRowTile; ++r) {
      const float v = router_lane_tree(acc[q][r]);  // every lane takes part
      if (lane == 0 && r < it.rows)
        partials[(static_cast<std::int64_t>(it.s) * sh.rows + it.m0 + r) * sh.experts + e + q] = v;
    }
}

// The grid handoff that never waits (F4's one launch, and the GEMV's own split-K fixup at M <= 16):
// after its writes every block fences (release: below) and thread 0 draws a ticket; the block that draws
// `blocks - 1` is the last to finish, sees every block's writes after an acquire fence, and resets
// the counter for the next launch. Returns true in that block only (every thread of it). No block
// waits for another, so any number of co-resident blocks and any grid size is correct. Reads of
// other blocks' data after it must bypass the non-coherent L1 (router_load_coherent: relaxed
// device-scope loads, through router_sum_partials<..., true> and router_block_logits).
//
// NVIDIA (was: every thread's __threadfence() before the barrier and after the ticket): thread 0
// alone fences, between two barriers, with a release/acquire fence (fence.acq_rel.gpu) instead of
// __threadfence()'s sequentially consistent fence.sc.gpu: barrier; thread 0: fence, ticket (and,
// in the last block, fence again); barrier. The shape of cooperative groups' grid sync. Why it
// suffices (PTX memory model): bar.sync synchronizes the block's threads, so every write of this
// block (partials by lane 0 of each lane group; F4's moe_buf zeroing by every thread, which the last
// block never reads) precedes thread 0's fence in causality order, which is transitive; a
// fence.acq_rel.gpu then a relaxed gpu-scope atomic (the ticket) is a release pattern for all that
// precedes the fence (cumulativity); the last block's thread 0 reads the ticket then fences (the
// acquire pattern, one thread, in program order), and its second barrier orders that before every
// thread's reads of the partials (which go past the L1: router_load_coherent). Nothing here needs
// the total order of fence.sc.
// AMD (HIP): unchanged, every thread fences before the barrier and, in the last block, after it.
// The scoped model is transitive too, but LLVM's AMDGPU code sequences for "stores, workgroup
// barrier, another thread's agent-scope release" needed fixes in 2025 (llvm-project PRs 160501 and
// 161638, GFX10+ CU mode: the other waves' stores were not waited for), so the AMD path does not
// lean on that pattern.
__device__ inline bool router_last_block(unsigned* tickets, unsigned blocks) {
  __shared__ bool last;
#if defined(__HIPCC__)
  __threadfence();
  __syncthreads();
  if (threadIdx.x == 0) {
    last = atomicAdd(tickets, 1u) == blocks - 1;
    if (last) atomicExch(tickets, 0u);  // every ticket of this launch is drawn
  }
  __syncthreads();
  if (last) __threadfence();
#else
  __syncthreads();  // every thread of this block is past its writes
  if (threadIdx.x == 0) {
    asm volatile("fence.acq_rel.gpu;" ::: "memory");  // release of the whole block's writes (above)
    last = atomicAdd(tickets, 1u) == blocks - 1;
    if (last) {
      atomicExch(tickets, 0u);                          // every ticket of this launch is drawn
      asm volatile("fence.acq_rel.gpu;" ::: "memory");  // acquire: every block's writes
    }
  }
  __syncthreads();  // the acquire before any thread's read
#endif
  return last;
}

// Row tile by M, as a template argument: 1, 2, 4, 8, or 16 (F3's launch).
template <class Fn>
void with_router_row_tile(std::int64_t rows, Fn&& fn) {
  if (rows <= 1)
    fn(std::integral_constant<int, 1>{});
  else if (rows <= 2)
    fn(std::integral_constant<int, 2>{});
  else if (rows <= 4)
    fn(std::integral_constant<int, 4>{});
  else if (rows <= 8)
    fn(std::integral_constant<int, 8>{});
  else
    fn(std::integral_constant<int, 16>{});
}

// The GEMV's row tile in the router/gate kernels and F4: 1, 2, 4, then 8 up to 16 rows (9..16 rows
// are two tiles: twice the blocks streaming W; the order does not depend on the tile), 16 beyond.
template <class Fn>
void with_router_decode_row_tile(std::int64_t rows, Fn&& fn) {
  if (rows > 16)
    fn(std::integral_constant<int, 16>{});
  else if (rows <= 1)
    fn(std::integral_constant<int, 1>{});
  else if (rows <= 2)
    fn(std::integral_constant<int, 2>{});
  else if (rows <= 4)
    fn(std::integral_constant<int, 4>{});
  else
    fn(std::integral_constant<int, 8>{});
}

template <class Fn>
void with_router_weight(RouterWeight w, Fn&& fn) {
  if (w == RouterWeight::f32)
    fn(std::integral_constant<RouterWeight, RouterWeight::f32>{});
  else
    fn(std::integral_constant<RouterWeight, RouterWeight::bf16>{});
}

// ---- the gate ----

struct RouterGateArgs {
  int rows, experts, split_k, topk;
  RouterGate gate;
  float routed_scaling;
  const float* bias;
};

// A partial written by another block of this launch, read after the handoff's acquire fence
// (router_last_block): a strong relaxed load at device scope, served by the coherence point (L2),
// never by a stale line of this multiprocessor's L1. In program order (asm volatile, memory
// clobber: not moved above the fence), but not waited for: the hardware keeps many in flight.
__device__ inline float router_load_coherent(const float* p) {
#if defined(__HIPCC__)
  return __hip_atomic_load(p, __ATOMIC_RELAXED, __HIP_MEMORY_SCOPE_AGENT);
#else
  float v;
  asm volatile("ld.relaxed.gpu.global.f32 %0, [%1];" : "=f"(v) : "l"(p) : "memory");
  return v;
#endif
}

// How many slices' partials one thread loads before adding any: the reduce's order is a chain of
// adds, but its loads are independent, so a group of 8 slices costs one memory round trip (a loop
// that loads and adds one slice at a time costs one round trip per load: 16 of them per gate row
// at S = 4, the whole tail of run36's fused router).
inline constexpr int kRouterSliceBatch = 8;

// v[i] = ((P_0 + P_1) + P_2) + ... + P_{S-1} at element at[i] of a [S][slice] partials array, for
// the kN elements with live[i] (the others are left alone). kCoherent: written by other blocks of
// this launch (router_load_coherent), else ordinary loads.
template <int kN, bool kCoherent>
__device__ inline void router_sum_partials(const float* partials, std::int64_t slice, int split_k,
                                           const std::int64_t (&at)[kN], const bool (&live)[kN], float (&v)[kN]) {
  for (int s0 = 0; s0 < split_k; s0 += kRouterSliceBatch) {
    float q[kN][kRouterSliceBatch];
#pragma unroll
    for (int i = 0; i < kN; ++i)
#pragma unroll
      for (int j = 0; j < kRouterSliceBatch; ++j) {
        const float* a = partials + static_cast<std::int64_t>(s0 + j) * slice + at[i];
        q[i][j] = 0.0f;
        if (live[i] && s0 + j < split_k) q[i][j] = kCoherent ? router_load_coherent(a) : *a;
      }
#pragma unroll
    for (int i = 0; i < kN; ++i)
#pragma unroll
      for (int j = 0; j < kRouterSliceBatch; ++j)
        if (live[i] && s0 + j < split_k) v[i] = s0 + j == 0 ? q[i][0] : v[i] + q[i][j];  // from P_0 itself
  }
}

// The logits lane l of a row holds (experts l V .. l V + V - 1): read from logits, or summed from
// the partials in slice order (and then written as logits) when `from_partials`, all of the
// lane's loads issued together.
__device__ inline void router_row_logits(const RouterGateArgs& a, const float* partials, float* logits, int row,
                                         bool from_partials, float (&l)[8]) {
  const int V = a.experts / 32, lane = static_cast<int>(threadIdx.x % 32);
  std::int64_t at[8];
  bool live[8];
#pragma unroll
  for (int i = 0; i < 8; ++i) {
    at[i] = static_cast<std::int64_t>(row) * a.experts + lane * V + i;
    live[i] = i < V;
    l[i] = 0.0f;
  }
  if (from_partials) {
    router_sum_partials<8, false>(partials, static_cast<std::int64_t>(a.rows) * a.experts, a.split_k, at, live, l);
#pragma unroll
    for (int i = 0; i < 8; ++i)
      if (live[i]) logits[at[i]] = l[i];
  } else {
#pragma unroll
    for (int i = 0; i < 8; ++i)
      if (live[i]) l[i] = logits[at[i]];
  }
}

// The handoff's last block (M <= kRouterTailRows): every logit from the partials that the other
// blocks wrote, by the whole block: thread t sums elements t, t + 256, ... (several at a time, their
// loads issued together: router_block_logits below), writes them to logits and, if `stage` is given (shared memory,
// rows x experts floats), there too for the gate.
inline constexpr int kRouterTailRows = 16;
template <int kPer>
__device__ inline void router_block_logits_n(const float* partials, float* logits, std::int64_t n, int split_k,
                                             float* stage) {
  for (std::int64_t base = threadIdx.x; base < n; base += kPer * kRouterThreads) {
    std::int64_t at[kPer];
    bool live[kPer];
    float v[kPer];
#pragma unroll
    for (int j = 0; j < kPer; ++j) {
      at[j] = base + j * kRouterThreads;
      live[j] = at[j] < n;
      v[j] = 0.0f;
    }
    router_sum_partials<kPer, true>(partials, n, split_k, at, live, v);
#pragma unroll
    for (int j = 0; j < kPer; ++j) {
      if (!live[j]) continue;
      logits[at[j]] = v[j];
      if (stage) stage[at[j]] = v[j];
    }
  }
}

// Thread t sums logits t, t + 256, ...: kPer of them at a time, kPer the fewest of 1, 2, 4, 8 that
// covers rows x experts in one pass (run 54's probe: at M = 1 the fixed 8 per thread issued about
// 670 instructions a thread, most of them predicated off, for one logit).
__device__ inline void router_block_logits(const float* partials, float* logits, int rows, int experts, int split_k,
                                           float* stage) {
  const std::int64_t n = static_cast<std::int64_t>(rows) * experts;
  if (n <= kRouterThreads)
    router_block_logits_n<1>(partials, logits, n, split_k, stage);
  else if (n <= 2 * kRouterThreads)
    router_block_logits_n<2>(partials, logits, n, split_k, stage);
  else if (n <= 4 * kRouterThreads)
    router_block_logits_n<4>(partials, logits, n, split_k, stage);
  else
    router_block_logits_n<8>(partials, logits, n, split_k, stage);
}

// The gate of kN rows by one 32-lane group, the rows side by side (every lane calls it; live[n]
// false for a spare row: it takes part in the shuffles and writes nothing). Each row's arithmetic is
// its own, in router_math.hpp's order; kN > 1 only interleaves independent rows' instructions, so
// their dependent chains (sigmoid, the selection's warp reductions, the divisions) overlap.
// kV: the experts per lane (E / 32) when known at compile time (4: E = 128, the model's), else 0 (read
// from a.experts): a known V drops the unused slots of the 8-slot arrays and turns the owner's
// division into a shift (run 54's probe: the gate of one row was about 1,800 instructions at
// runtime V, every slot's sigmoid issued, at 1.5-3.5 cycles each on the one warp that runs it).
template <int kN, int kV = 0>
__device__ inline void router_gate_rows(const RouterGateArgs& a, const float (&l)[kN][8], const bool (&live)[kN],
                                        std::int32_t* const (&ids)[kN], float* const (&weights)[kN]) {
  static_assert(kV >= 0 && kV <= 8, "at most 8 experts per lane");
  const int V = kV > 0 ? kV : a.experts / 32, lane = static_cast<int>(threadIdx.x % 32);
  const int group_base = static_cast<int>(threadIdx.x % warpSize) - lane;  // lane 0 of this group in its wave
  FB_ROUTER_GATE_STAMP(0);
  float prob[kN][8] = {}, score[kN][8] = {};
  if (a.gate == RouterGate::sigmoid_bias) {
#pragma unroll
    for (int n = 0; n < kN; ++n)
#pragma unroll
      for (int i = 0; i < 8; ++i) {
        if (i >= V) continue;
        prob[n][i] = router_sigmoid(l[n][i]);
        score[n][i] = prob[n][i] + a.bias[lane * V + i];
      }
  } else {
#pragma unroll
    for (int n = 0; n < kN; ++n) {
      float m = -__int_as_float(0x7F800000);
#pragma unroll
      for (int i = 0; i < 8; ++i)
        if (i < V) m = router_max(m, l[n][i]);
#pragma unroll
      for (int h = 16; h > 0; h >>= 1) m = router_max(m, __uint_as_float(shfl_xor_u32(__float_as_uint(m), h)));
      float s = 0.0f;
#pragma unroll
      for (int i = 0; i < 8; ++i) {
        if (i >= V) continue;
        prob[n][i] = exact_exp(l[n][i] - m);
        s = i == 0 ? prob[n][0] : s + prob[n][i];
      }
      const float sum = router_lane_tree(s);
#pragma unroll
      for (int i = 0; i < 8; ++i)
        if (i < V) score[n][i] = prob[n][i] = prob[n][i] / sum;
    }
  }
  FB_ROUTER_GATE_STAMP(1);  // probabilities and scores
  // Selection (router_math.hpp: k rounds, each the largest candidate not yet taken). Each lane sorts
  // its candidates once (router_sort_desc8; empty slots are 0, below every real candidate), so round
  // r is the max over the lanes' first candidates and the winning lane drops its first: the same
  // expert as a search of every untaken slot (keys are distinct), and the round's dependent chain
  // is two warp reductions and a compare. (run 54's probe: the whole gate of one row took about
  // 6,600 cycles in the earlier form, which searched every untaken slot in each round.)
  std::uint64_t list[kN][8];
#pragma unroll
  for (int n = 0; n < kN; ++n) {
#pragma unroll
    for (int i = 0; i < 8; ++i) list[n][i] = i < V ? router_candidate(score[n][i], lane * V + i) : 0;
    router_sort_desc8(list[n]);
  }
  FB_ROUTER_GATE_STAMP(2);  // candidates sorted
  float w[kN][kRouterMaxTopk] = {};
  std::int32_t chosen[kN][kRouterMaxTopk] = {};
  // Rounds to the fixed bound kRouterMaxTopk (topk is uniform over the group), so w and chosen are
  // indexed by constants and stay in registers (the runtime bound put them in local memory).
#pragma unroll
  for (int r = 0; r < kRouterMaxTopk; ++r) {
    if (r < a.topk) {
      std::uint64_t best[kN];
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
      // A lane group is a whole warp on NVIDIA: the 64-bit max as two warp reductions (the largest
      // key, then the largest low word among the lanes holding it) instead of ten shuffles.
      unsigned hi[kN];
#pragma unroll
      for (int n = 0; n < kN; ++n) hi[n] = __reduce_max_sync(0xFFFFFFFFu, static_cast<unsigned>(list[n][0] >> 32));
#pragma unroll
      for (int n = 0; n < kN; ++n) {
        const unsigned lo = __reduce_max_sync(
            0xFFFFFFFFu, static_cast<unsigned>(list[n][0] >> 32) == hi[n] ? static_cast<unsigned>(list[n][0]) : 0u);
        best[n] = (static_cast<std::uint64_t>(hi[n]) << 32) | lo;
      }
#else
#pragma unroll
      for (int n = 0; n < kN; ++n) best[n] = list[n][0];
#pragma unroll
      for (int h = 16; h > 0; h >>= 1) {
#pragma unroll
        for (int n = 0; n < kN; ++n) {
          const std::uint64_t other =
              (static_cast<std::uint64_t>(shfl_xor_u32(static_cast<unsigned>(best[n] >> 32), h)) << 32) |
              shfl_xor_u32(static_cast<unsigned>(best[n]), h);
          best[n] = other > best[n] ? other : best[n];
        }
      }
#endif
#pragma unroll
      for (int n = 0; n < kN; ++n) {
        chosen[n][r] = router_candidate_id(best[n]);
        const bool won = list[n][0] == best[n];  // one lane: the keys are distinct
#pragma unroll
        for (int i = 0; i < 7; ++i) list[n][i] = won ? list[n][i + 1] : list[n][i];
        list[n][7] = won ? 0 : list[n][7];
      }
    }
  }
  FB_ROUTER_GATE_STAMP(3);  // the rounds
  // The chosen experts' probabilities from their lanes: independent of each other, after the rounds.
#pragma unroll
  for (int r = 0; r < kRouterMaxTopk; ++r) {
    if (r < a.topk) {
#pragma unroll
      for (int n = 0; n < kN; ++n) {
        const int owner = chosen[n][r] / V, index = chosen[n][r] - owner * V;
        float mine = 0.0f;
#pragma unroll
        for (int i = 0; i < 8; ++i) mine = i == index ? prob[n][i] : mine;
        w[n][r] = __uint_as_float(shfl_u32(__float_as_uint(mine), group_base + owner));
      }
    }
  }
  FB_ROUTER_GATE_STAMP(4);  // the chosen probabilities fetched
  if (lane != 0) return;
#pragma unroll
  for (int n = 0; n < kN; ++n) {
    if (!live[n]) continue;
    router_finish_weights(w[n], a.topk, a.routed_scaling);
#pragma unroll
    for (int r = 0; r < kRouterMaxTopk; ++r) {
      if (r < a.topk) {
        ids[n][r] = chosen[n][r];
        weights[n][r] = w[n][r];
      }
    }
  }
}

// The gate of one row by a 32-lane group (router_gate_rows of one row).
template <int kV = 0>
__device__ inline void router_gate_row(const RouterGateArgs& a, const float (&l)[8], bool live, std::int32_t* ids,
                                       float* weights) {
  float l1[1][8];
#pragma unroll
  for (int i = 0; i < 8; ++i) l1[0][i] = l[i];
  const bool live1[1] = {live};
  std::int32_t* const ids1[1] = {ids};
  float* const weights1[1] = {weights};
  router_gate_rows<1, kV>(a, l1, live1, ids1, weights1);
}

// The handoff's last block's bias, loaded early: every router block loads it at its start (one
// float per thread, an L2 hit after the first launch; the value is needed only by the last block,
// which nobody knows before the ticket), so the last block's gate does not wait for a load round
// trip after the ticket: router_stage_bias puts it in shared memory with the staged logits, and the
// gate reads it there (the same values, so the same bits). 0 for softmax (no bias).
__device__ inline float router_bias_preload(const RouterGateArgs& a) {
  static_assert(kRouterThreads >= kRouterMaxExperts, "one bias per thread");
  const int t = static_cast<int>(threadIdx.x);
  return a.gate == RouterGate::sigmoid_bias && t < a.experts ? a.bias[t] : 0.0f;
}

// The preloaded bias into `bias_s` (shared, kRouterMaxExperts floats); visible to the gate after the
// next barrier. Returns the gate's arguments reading it there.
__device__ inline RouterGateArgs router_stage_bias(const RouterGateArgs& a, float preloaded, float* bias_s) {
  if (static_cast<int>(threadIdx.x) < a.experts) bias_s[threadIdx.x] = preloaded;
  RouterGateArgs staged = a;
  staged.bias = bias_s;
  return staged;
}

// The gate of every row (at most kRouterTailRows) by the handoff's last block, from the logits
// router_block_logits staged in shared memory: lane group g takes row g, and with kPairs and more
// than 8 rows rows g and g + 8 side by side (router_gate_rows<2>: one pass instead of two); a lane
// group with no row in a pass skips it, a spare second row takes part and writes nothing. Out: ids
// and weights [rows][k]. kPairs: the fused router's tail
// (router_kernels.hip); F4 keeps one row at a time (its kernel is at 253 registers already).
template <bool kPairs, int kV>
__device__ inline void router_block_gate_v(const RouterGateArgs& a, const float* stage, std::int32_t* ids,
                                           float* weights) {
  const int V = kV > 0 ? kV : a.experts / 32, lane = static_cast<int>(threadIdx.x % 32);
  const int g = static_cast<int>(threadIdx.x / 32);
  constexpr int kN = kPairs ? 2 : 1;
  for (int row0 = 0; row0 < a.rows; row0 += kN * kRouterGroups) {
    // A lane group with no row in this pass (its first row is past the last) has nothing to do: its
    // shuffles are its own (32-lane groups), so it leaves the others alone. run 54's probe: the
    // spare groups used to run the whole gate beside the live ones (M = 1: 7 of 8).
    if (row0 + g >= a.rows) break;
    float l[kN][8] = {};
    bool live[kN];
    std::int32_t* row_ids[kN];
    float* row_weights[kN];
#pragma unroll
    for (int n = 0; n < kN; ++n) {
      const int row = row0 + g + n * kRouterGroups;
      live[n] = row < a.rows;
#pragma unroll
      for (int i = 0; i < 8; ++i)
        if (live[n] && i < V) l[n][i] = stage[row * a.experts + lane * V + i];
      row_ids[n] = ids + static_cast<std::int64_t>(live[n] ? row : 0) * a.topk;
      row_weights[n] = weights + static_cast<std::int64_t>(live[n] ? row : 0) * a.topk;
    }
    if (kN == 2 && a.rows - row0 <= kRouterGroups) {  // no second row in this pass: one row's work
      float l1[1][8];
#pragma unroll
      for (int i = 0; i < 8; ++i) l1[0][i] = l[0][i];
      const bool live1[1] = {live[0]};
      std::int32_t* const ids1[1] = {row_ids[0]};
      float* const weights1[1] = {row_weights[0]};
      router_gate_rows<1, kV>(a, l1, live1, ids1, weights1);
    } else {
      router_gate_rows<kN, kV>(a, l, live, row_ids, row_weights);
    }
  }
}

// router_block_gate_v with V known at compile time for the model's E = 128 (router_gate_rows' kV).
template <bool kPairs = false>
__device__ inline void router_block_gate(const RouterGateArgs& a, const float* stage, std::int32_t* ids, float* weights) {
  if (a.experts == 4 * 32)
    router_block_gate_v<kPairs, 4>(a, stage, ids, weights);
  else
    router_block_gate_v<kPairs, 0>(a, stage, ids, weights);
}

}  // namespace fb
