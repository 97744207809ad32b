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
#include "kernels/common/gpu_check.hpp"
#include "kernels/fp8_quant/fp8_quant_device.hpp"
#include "kernels/swiglu_fp8/swiglu_fp8_device.hpp"

namespace fb {
namespace {

constexpr int kRowBlock = 256;
constexpr int kRowCached = 3;

template <class Format, bool kOai, bool kVector, int kRowThreads, bool kPerToken>
__global__ __launch_bounds__(kRowBlock) void swiglu_fp8_kernel(const std::uint16_t* gate_up, std::uint16_t* out,
                                                               Fp8Outputs dst, std::int64_t d) {
  __shared__ std::uint32_t max_scratch[kRowBlock / 32];
  const std::int64_t row =
      static_cast<std::int64_t>(blockIdx.x) * (kRowBlock / kRowThreads) + threadIdx.x / kRowThreads;
  const int t = static_cast<int>(threadIdx.x % kRowThreads);
  // A spare row (past the last) takes part with no chunks: the per-token max has barriers.
  const bool live = row < dst.rows;
  const int row_chunks = static_cast<int>(swiglu_chunks_per_row(d));
  const int chunks = live ? row_chunks : 0;
  const int rounds = (row_chunks + kRowThreads - 1) / kRowThreads;  // the same in the whole block

  // Loads, then activations into registers (and out).
  int c[kRowCached];
  bool in[kRowCached];
  GateUpChunk x[kRowCached];
#pragma unroll
  for (int k = 0; k < kRowCached; ++k) {
    c[k] = t + k * kRowThreads;
    in[k] = c[k] < chunks;
    if (in[k]) x[k] = load_gate_up<kVector>(gate_up, row, c[k], d);
  }
  Bf16x8 y[kRowCached];
#pragma unroll
  for (int k = 0; k < kRowCached; ++k) {
    y[k] = zero_bf16x8();
    if (in[k]) {
      y[k] = swiglu_chunk<kOai, kVector>(x[k], c[k], d);
      if (out) store_chunk_bf16<kVector>(out + row * d, c[k], d, y[k]);
    }
  }
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
    for (int i = kRowCached; i < rounds; ++i)
      if (t + i * kRowThreads < chunks) amax = max_u32(amax, bf16x8_abs_max_bits(recomputed(t + i * kRowThreads)));
    amax = grouped_max_u32<kRowThreads>(amax, max_scratch);
    if (!live) return;
    const Fp8Scale scale = fp8_scale_from_amax_bits(amax, Format::kFlavour, dst.format);
    std::uint8_t* q_row = dst.q + row * d;
    // One branch per row on the scale, so the register-held chunks take only the no-NaN encode.
    auto store_held = [&](auto no_nan) {
#pragma unroll
      for (int k = 0; k < kRowCached; ++k)
        if (in[k]) store_chunk_fp8<Format, kVector, decltype(no_nan)::value>(q_row, c[k], d, y[k], scale.inverse);
    };
    if (fp8_inverse_is_finite(scale.inverse))
      store_held(std::true_type{});
    else
      store_held(std::false_type{});
    for (int i = kRowCached; i < rounds; ++i) {
      const int cc = t + i * kRowThreads;
      if (cc < chunks) {
        const Bf16x8 v = swiglu_chunk<kOai, kVector>(load_gate_up<kVector>(gate_up, row, cc, d), cc, d);
        store_chunk_fp8<Format, kVector>(q_row, cc, d, v, scale.inverse);
      }
    }
    if (t == 0) fp8_store_scale(dst.scales, row, scale, dst.format);
  } else {  // d is a multiple of 128, so a group's 16 lanes are in or out together
    static_assert(kRowThreads >= kWidestWave, "the scale dealing needs the wave inside one row");
    quantize_group_chunks<Format>(dst, row, d, c, in, y);
    for (int i = kRowCached; i < rounds; ++i) {
      const int cc = t + i * kRowThreads;
      const bool here = cc < chunks;
      quantize_group_chunk<Format>(dst, row, cc, d, here, here ? recomputed(cc) : zero_bf16x8());
    }
  }
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
        const unsigned blocks = grid_for(p.rows, kRowBlock / kRowThreads);
        if (p.granularity == Fp8Granularity::per_token) {
          swiglu_fp8_kernel<Format, kOai, kVector, kRowThreads, true>
              <<<blocks, kRowBlock, 0, s>>>(b.gate_up, out, dst, p.d);
        } else if constexpr (kVector) {  // per 1x128: d is a multiple of 128
          // Its scales are dealt over a wave, so a row spans at least a wave (wave64: 64 threads).
          constexpr int kGroupRowThreads = kRowThreads < kWidestWave ? kWidestWave : kRowThreads;
          swiglu_fp8_kernel<Format, kOai, kVector, kGroupRowThreads, false>
              <<<grid_for(p.rows, kRowBlock / kGroupRowThreads), kRowBlock, 0, s>>>(b.gate_up, out, dst, p.d);
        }
      });
    });
  });
  gpu_check_launch("swiglu_fp8_fused_kernel");
}

}  // namespace fb
