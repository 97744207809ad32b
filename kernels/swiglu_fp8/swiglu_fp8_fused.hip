// SwiGLU -> fp8, fused (F2): one pass reads gate_up once and writes the down projection's fp8 bytes
// and scales of bf16(out), and optionally the bf16 out.
//
// Rounding points: the activation in fp32 (swiglu_fp8_math.hpp), bf16(out), then the fp8 quant of
// bf16(out) with fp8_quant_math.hpp, the arithmetic of the chain's quant kernel. No sums: the only
// reduction is the exact, order-free amax. Claim: bitwise equal to the chain
// (swiglu_kernel -> fp8_quant) on every output.
//
// One kernel for both scale granularities: 32 to 256 threads per row, the fewest that hold the row
// in at most 3 chunks each (exactly 3 at d = 768 and 3072: 8 rows per 256-thread block at d = 768,
// 2 at d = 3072, enough rows in flight per SM); thread t holds chunks t, t + R, t + 2R of its row
// (R threads per row), so the 16 chunks of a 128-column group sit in 16 aligned lanes. bf16(out)
// stays in registers (longer rows recompute the rest). Then
// per token:  the row's amax over its threads (grouped_max_u32), its scale, the bytes;
// per 1x128:  each group's amax is a 16-lane xor-shuffle max (the same on wave32 and wave64), the
//             wave's scales are computed one per lane and shuffled back (quantize_group_chunks).
#include <type_traits>

#include "kernels/common/block_reduce.hpp"
#include "kernels/common/bulk_copy.hpp"
#include "kernels/common/gpu_check.hpp"
#include "kernels/fp8_quant/fp8_quant_device.hpp"
#include "kernels/swiglu_fp8/swiglu_fp8_device.hpp"

namespace fb {
namespace {

constexpr int kRowBlock = 256;
constexpr int kRowCached = 3;

// One thread's place in its row: row chunks t, t + R, t + 2R (R threads per row).
struct RowSlot {
  std::int64_t row;
  int t;
  bool live;   // a spare row (past the last) takes part with no chunks: the per-token max has barriers
  int chunks;  // the row's chunks, 0 for a spare row
  int rounds;  // chunk rounds of the row (more than kRowCached past the register cache); block-uniform
  int c[kRowCached];
  bool in[kRowCached];
};

template <int kRowThreads>
__device__ inline RowSlot row_slot(std::int64_t row, std::int64_t rows, std::int64_t d) {
  RowSlot s;
  s.row = row;
  s.t = static_cast<int>(threadIdx.x % kRowThreads);
  s.live = row < rows;
  const int row_chunks = static_cast<int>(swiglu_chunks_per_row(d));
  s.chunks = s.live ? row_chunks : 0;
  s.rounds = (row_chunks + kRowThreads - 1) / kRowThreads;
#pragma unroll
  for (int k = 0; k < kRowCached; ++k) {
    s.c[k] = s.t + k * kRowThreads;
    s.in[k] = s.c[k] < s.chunks;
  }
  return s;
}

// bf16(out) of the thread's chunks held in registers, the activations of gate and up chunks
// chunk(k) (and out written).
template <bool kOai, bool kVector, class ChunkAt>
__device__ inline void swiglu_held_chunks(const RowSlot& s, ChunkAt&& chunk, std::uint16_t* out, std::int64_t d,
                                          Bf16x8 (&y)[kRowCached]) {
#pragma unroll
  for (int k = 0; k < kRowCached; ++k) {
    y[k] = zero_bf16x8();
    if (s.in[k]) {
      y[k] = swiglu_chunk<kOai, kVector>(chunk(k), s.c[k], d);
      if (out) store_chunk_bf16<kVector>(out + s.row * d, s.c[k], d, y[k]);
    }
  }
}

// The fp8 bytes and scales of one row from its held chunks y (the rest recomputed from gate_up).
// Every thread of the block calls it (per token, wide rows meet at barriers).
template <class Format, bool kOai, bool kVector, int kRowThreads, bool kPerToken>
__device__ inline void quantize_swiglu_row(const RowSlot& s, const Bf16x8 (&y)[kRowCached],
                                           const std::uint16_t* gate_up, std::uint16_t* out, const Fp8Outputs& dst,
                                           std::int64_t d, std::uint32_t* max_scratch) {
  const std::int64_t row = s.row;
  const int t = s.t;
  const int chunks = s.chunks;
  // Past the register cache (d > 8 * 3 * 256): recompute.
  auto recomputed = [&](int cc) {
    const Bf16x8 v = swiglu_chunk<kOai, kVector>(load_gate_up<kVector>(gate_up, row, cc, d), cc, d);
    if (out) store_chunk_bf16<kVector>(out + row * d, cc, d, v);
    return v;
  };

  if constexpr (kPerToken) {
    std::uint32_t amax = 0;
#pragma unroll
    for (int k = 0; k < kRowCached; ++k) amax = max_u32(amax, bf16x8_abs_max_bits(y[k]));  // chunks not held: +0
    for (int i = kRowCached; i < s.rounds; ++i)
      if (t + i * kRowThreads < chunks) amax = max_u32(amax, bf16x8_abs_max_bits(recomputed(t + i * kRowThreads)));
    amax = grouped_max_u32<kRowThreads>(amax, max_scratch);
    if (!s.live) return;
    const Fp8Scale scale = fp8_scale_from_amax_bits(amax, Format::kFlavour, dst.format);
    std::uint8_t* q_row = dst.q + row * d;
    // One branch per row on the scale, so the register-held chunks take only the no-NaN encode.
    auto store_held = [&](auto no_nan) {
#pragma unroll
      for (int k = 0; k < kRowCached; ++k)
        if (s.in[k])
          store_chunk_fp8<Format, kVector, decltype(no_nan)::value>(q_row, s.c[k], d, y[k], scale.inverse);
    };
    if (fp8_inverse_is_finite(scale.inverse))
      store_held(std::true_type{});
    else
      store_held(std::false_type{});
    for (int i = kRowCached; i < s.rounds; ++i) {
      const int cc = t + i * kRowThreads;
      if (cc < chunks) {
        const Bf16x8 v = swiglu_chunk<kOai, kVector>(load_gate_up<kVector>(gate_up, row, cc, d), cc, d);
        store_chunk_fp8<Format, kVector>(q_row, cc, d, v, scale.inverse);
      }
    }
    if (t == 0) fp8_store_scale(dst.scales, row, scale, dst.format);
  } else {  // d is a multiple of 128, so a group's 16 lanes are in or out together
    static_assert(kRowThreads >= kWidestWave, "the scale dealing needs the wave inside one row");
    quantize_group_chunks<Format>(dst, row, d, s.c, s.in, y);
    for (int i = kRowCached; i < s.rounds; ++i) {
      const int cc = t + i * kRowThreads;
      const bool here = cc < chunks;
      quantize_group_chunk<Format>(dst, row, cc, d, here, here ? recomputed(cc) : zero_bf16x8());
    }
  }
}

// The plain kernel: each block loads its rows straight into registers. AMD, rows not a multiple
// of 8 elements, and rows longer than the register cache.
template <class Format, bool kOai, bool kVector, int kRowThreads, bool kPerToken>
__global__ __launch_bounds__(kRowBlock) void swiglu_fp8_kernel(const std::uint16_t* gate_up, std::uint16_t* out,
                                                               Fp8Outputs dst, std::int64_t d) {
  __shared__ std::uint32_t max_scratch[kRowBlock / 32];
  const RowSlot s = row_slot<kRowThreads>(
      static_cast<std::int64_t>(blockIdx.x) * (kRowBlock / kRowThreads) + threadIdx.x / kRowThreads, dst.rows, d);
  GateUpChunk x[kRowCached];  // all loads first
#pragma unroll
  for (int k = 0; k < kRowCached; ++k)
    if (s.in[k]) x[k] = load_gate_up<kVector>(gate_up, s.row, s.c[k], d);
  Bf16x8 y[kRowCached];
  swiglu_held_chunks<kOai, kVector>(s, [&](int k) { return x[k]; }, out, d, y);
  quantize_swiglu_row<Format, kOai, kVector, kRowThreads, kPerToken>(s, y, gate_up, out, dst, d, max_scratch);
}

#if FB_HAS_BULK_COPY
// The staged kernel (NVIDIA sm_90+): a persistent grid where each block takes the row groups
// blockIdx.x, + gridDim.x, ... (a group: the block's kRowBlock / R consecutive rows, one contiguous
// range of gate_up). One thread bulk-copies group i + kStages into the stage group i has just
// been read from, so the loads of the next groups run under the arithmetic of this one. Rows of
// whole 16-byte chunks held in registers only (d % 8 == 0, d <= 8 * kRowCached * R).
constexpr int kStages = 2;
constexpr std::size_t kStageBytes = kRowBlock * kRowCached * 2 * sizeof(Bf16x8);  // gate and up chunks

template <class Format, bool kOai, int kRowThreads, bool kPerToken>
__global__ __launch_bounds__(kRowBlock) void swiglu_fp8_staged_kernel(const std::uint16_t* gate_up,
                                                                      std::uint16_t* out, Fp8Outputs dst,
                                                                      std::int64_t d) {
  extern __shared__ uint4 stages[];  // kStages x kStageBytes
  __shared__ std::uint32_t max_scratch[kRowBlock / 32];
  __shared__ std::uint64_t landed[kStages];
  constexpr int kRows = kRowBlock / kRowThreads;
  const std::int64_t groups = (dst.rows + kRows - 1) / kRows;
  const std::int64_t row_elements = 2 * d;
  auto stage = [&](int i) { return reinterpret_cast<std::uint16_t*>(stages) + i * (kStageBytes / 2); };
  auto fetch = [&](std::int64_t group, int i) {
    const std::int64_t first = group * kRows;
    const std::int64_t rows = dst.rows - first < kRows ? dst.rows - first : kRows;
    bulk_copy_to_shared(stage(i), gate_up + first * row_elements,
                        static_cast<std::uint32_t>(rows * row_elements * 2), &landed[i]);
  };
  if (threadIdx.x == 0) {
    for (int i = 0; i < kStages; ++i) bulk_barrier_init(&landed[i]);
    for (int i = 0; i < kStages; ++i)
      if (blockIdx.x + static_cast<std::int64_t>(i) * gridDim.x < groups) fetch(blockIdx.x + i * gridDim.x, i);
  }
  __syncthreads();  // the barriers are initialised before anyone waits on them

  const int local_row = static_cast<int>(threadIdx.x / kRowThreads);
  int use = 0;
  for (std::int64_t group = blockIdx.x; group < groups; group += gridDim.x, ++use) {
    const int i = use % kStages;
    bulk_barrier_wait(&landed[i], static_cast<std::uint32_t>(use / kStages) & 1u);
    const RowSlot s = row_slot<kRowThreads>(group * kRows + local_row, dst.rows, d);
    const std::uint16_t* gate_row = stage(i) + local_row * row_elements;
    Bf16x8 y[kRowCached];
    swiglu_held_chunks<kOai, true>(
        s, [&](int k) { return GateUpChunk{load_bf16x8(gate_row + s.c[k] * 8), load_bf16x8(gate_row + d + s.c[k] * 8)}; },
        out, d, y);
    __syncthreads();  // stage i is read: it may take the next group
    const std::int64_t next = group + static_cast<std::int64_t>(kStages) * gridDim.x;
    if (threadIdx.x == 0 && next < groups) fetch(next, i);
    quantize_swiglu_row<Format, kOai, true, kRowThreads, kPerToken>(s, y, gate_up, out, dst, d, max_scratch);
  }
}
#endif

// Whether the staged kernel takes this problem (NVIDIA sm_90+, whole chunks, rows in registers,
// gate_up 16-byte aligned for the bulk copies).
template <int kRowThreads>
bool staged_kernel_fits(const SwigluFp8Params& p, const SwigluFp8Buffers& b) {
#if FB_HAS_BULK_COPY
  return p.d % 8 == 0 && swiglu_chunks_per_row(p.d) <= static_cast<std::int64_t>(kRowCached) * kRowThreads &&
         reinterpret_cast<std::uintptr_t>(b.gate_up) % 16 == 0 && bulk_copy_supported();
#else
  (void)p;
  (void)b;
  return false;
#endif
}

template <class Format, bool kOai, bool kVector, int kRowThreads, bool kPerToken>
void launch_swiglu_fp8(const SwigluFp8Params& p, const SwigluFp8Buffers& b, std::uint16_t* out,
                       const Fp8Outputs& dst, hipStream_t s) {
  constexpr int kRows = kRowBlock / kRowThreads;
#if FB_HAS_BULK_COPY
  if constexpr (kVector) {
    // Only where there are more groups than resident blocks: with one group per block the
    // pipeline has nothing to overlap.
    if (staged_kernel_fits<kRowThreads>(p, b)) {
      constexpr auto kernel = swiglu_fp8_staged_kernel<Format, kOai, kRowThreads, kPerToken>;
      constexpr std::size_t shared = kStages * kStageBytes;
      const std::int64_t resident = resident_blocks<kernel>(kRowBlock, shared);
      if (grid_for(p.rows, kRows) > resident) {
        kernel<<<static_cast<unsigned>(resident), kRowBlock, shared, s>>>(b.gate_up, out, dst, p.d);
        return;
      }
    }
  }
#endif
  swiglu_fp8_kernel<Format, kOai, kVector, kRowThreads, kPerToken>
      <<<grid_for(p.rows, kRows), kRowBlock, 0, s>>>(b.gate_up, out, dst, p.d);
}

}  // namespace

void swiglu_fp8_fused_launch(const SwigluFp8Params& p, const SwigluFp8Buffers& b, void* stream) {
  auto* s = static_cast<hipStream_t>(stream);
  const Fp8Outputs dst{b.q, b.scales, p.rows, p.scale_format, p.layout};
  std::uint16_t* out = p.write_out ? b.out : nullptr;
  with_fp8_format(p.flavour, [&](auto format) {
    using Format = decltype(format);
    with_swiglu_variant(p, [&](auto oai, auto vector) {
      constexpr bool kOai = decltype(oai)::value;
      constexpr bool kVector = decltype(vector)::value;
      with_row_threads(swiglu_chunks_per_row(p.d), kRowCached, [&](auto row_threads) {
        constexpr int kRowThreads = decltype(row_threads)::value;
        if (p.granularity == Fp8Granularity::per_token) {
          launch_swiglu_fp8<Format, kOai, kVector, kRowThreads, true>(p, b, out, dst, s);
        } else if constexpr (kVector) {  // per 1x128: d is a multiple of 128
          // Its scales are dealt over a wave, so a row spans at least a wave (wave64: 64 threads).
          constexpr int kGroupRowThreads = kRowThreads < kWidestWave ? kWidestWave : kRowThreads;
          launch_swiglu_fp8<Format, kOai, kVector, kGroupRowThreads, false>(p, b, out, dst, s);
        }
      });
    });
  });
  gpu_check_launch("swiglu_fp8_fused_kernel");
}

}  // namespace fb
