// SwiGLU -> fp8, fused (F2): one pass reads gate_up once and writes the down projection's fp8 bytes
// and scales of bf16(out), and optionally the bf16 out.
//
// Rounding points: the activation in fp32 (swiglu_fp8_math.hpp), bf16(out), then the fp8 quant of
// bf16(out) with fp8_quant_math.hpp, the arithmetic of the chain's quant kernel. No sums: the only
// reduction is the exact, order-free amax. Claim: bitwise equal to the chain
// (swiglu_kernel -> fp8_quant) on every output.
//
// per token:  32 to 256 threads per row, the fewest that hold the row in at most 4 chunks each
//             (8 rows per 256-thread block at d = 768, 2 at d = 3072: enough rows in flight per SM);
//             bf16(out) stays in registers (longer rows recompute the rest) while the row's threads
//             take its amax (grouped_max_u32), then it is quantized.
// per 1x128:  a block is 16 rows x one 128-column group (d is a multiple of 128), 4 rows per thread,
//             all loads issued first; the 16 lanes of an aligned lane group own one group of one row,
//             so its amax is a 16-lane xor-shuffle max, the same on wave32 and wave64; the wave's
//             scales are computed one per lane and shuffled back (quantize_group_chunks).
#include "kernels/common/block_reduce.hpp"
#include "kernels/common/gpu_check.hpp"
#include "kernels/fp8_quant/fp8_quant_device.hpp"
#include "kernels/swiglu_fp8/swiglu_fp8_device.hpp"

namespace fb {
namespace {

constexpr int kTokenBlock = 256;
constexpr int kTokenCached = 4;
constexpr int kGroupThreads = 256;
constexpr int kGroupUnroll = 4;

template <class Format, bool kOai, bool kVector, int kRowThreads>
__global__ __launch_bounds__(kTokenBlock) void swiglu_fp8_token_kernel(const std::uint16_t* gate_up,
                                                                       std::uint16_t* out, Fp8Outputs dst,
                                                                       std::int64_t d) {
  __shared__ std::uint32_t max_scratch[kTokenBlock / 32];
  const std::int64_t row =
      static_cast<std::int64_t>(blockIdx.x) * (kTokenBlock / kRowThreads) + threadIdx.x / kRowThreads;
  const int t = threadIdx.x % kRowThreads;
  const bool live = row < dst.rows;  // a spare row group still joins the max's barriers
  const std::int64_t chunks = live ? swiglu_chunks_per_row(d) : 0;

  // Loads, then activations into registers (and out), the row's amax.
  GateUpChunk in[kTokenCached];
#pragma unroll
  for (int k = 0; k < kTokenCached; ++k) {
    const std::int64_t c = t + static_cast<std::int64_t>(k) * kRowThreads;
    if (c < chunks) in[k] = load_gate_up<kVector>(gate_up, row, c, d);
  }
  Bf16x8 y[kTokenCached];
  std::uint32_t amax = 0;
#pragma unroll
  for (int k = 0; k < kTokenCached; ++k) {
    const std::int64_t c = t + static_cast<std::int64_t>(k) * kRowThreads;
    y[k] = zero_bf16x8();
    if (c < chunks) {
      y[k] = swiglu_chunk<kOai, kVector>(in[k], c, d);
      if (out) store_chunk_bf16<kVector>(out + row * d, c, d, y[k]);
      amax = max_u32(amax, bf16x8_abs_max_bits(y[k]));
    }
  }
  for (std::int64_t c = t + kTokenCached * kRowThreads; c < chunks; c += kRowThreads) {
    const Bf16x8 v = swiglu_chunk<kOai, kVector>(load_gate_up<kVector>(gate_up, row, c, d), c, d);
    if (out) store_chunk_bf16<kVector>(out + row * d, c, d, v);
    amax = max_u32(amax, bf16x8_abs_max_bits(v));
  }
  amax = grouped_max_u32<kRowThreads>(amax, max_scratch);
  if (!live) return;
  const Fp8Scale scale = fp8_scale_from_amax_bits(amax, Format::kFlavour, dst.format);

  // Quantize from registers (recompute past the cache).
  std::uint8_t* q_row = dst.q + row * d;
#pragma unroll
  for (int k = 0; k < kTokenCached; ++k) {
    const std::int64_t c = t + static_cast<std::int64_t>(k) * kRowThreads;
    if (c < chunks) store_chunk_fp8<Format, kVector>(q_row, c, d, y[k], scale.inverse);
  }
  for (std::int64_t c = t + kTokenCached * kRowThreads; c < chunks; c += kRowThreads) {
    const Bf16x8 v = swiglu_chunk<kOai, kVector>(load_gate_up<kVector>(gate_up, row, c, d), c, d);
    store_chunk_fp8<Format, kVector>(q_row, c, d, v, scale.inverse);
  }
  if (t == 0) fp8_store_scale(dst.scales, row, scale, dst.format);
}

// Block = 16 rows x one 128-column group (16 chunks, one per lane of an aligned 16-lane group);
// each thread takes rows r, r + 16, r + 32, r + 48 of its 64-row tile. Row and chunk come from the
// block and thread ids (no 64-bit divide per chunk). blockIdx.x is the column group, so blocks in
// flight cover whole rows; tiles past gridDim.y's limit are taken by a stride loop.
template <class Format, bool kOai>
__global__ __launch_bounds__(kGroupThreads) void swiglu_fp8_group_kernel(const std::uint16_t* gate_up,
                                                                         std::uint16_t* out, Fp8Outputs dst,
                                                                         std::int64_t d) {
  constexpr int kTileRows = kGroupThreads / 16 * kGroupUnroll;
  const int c = static_cast<int>(blockIdx.x * 16 + threadIdx.x % 16);
  for (std::int64_t tile = blockIdx.y; tile * kTileRows < dst.rows; tile += gridDim.y) {
    const std::int64_t first = tile * kTileRows + threadIdx.x / 16;
    GateUpChunk in[kGroupUnroll];
    std::int64_t rows[kGroupUnroll];
    bool valid[kGroupUnroll];  // the 16 lanes of a group share the row: in or out together
#pragma unroll
    for (int u = 0; u < kGroupUnroll; ++u) {
      rows[u] = first + u * (kGroupThreads / 16);
      valid[u] = rows[u] < dst.rows;
      if (valid[u]) in[u] = load_gate_up<true>(gate_up, rows[u], c, d);
    }
    Bf16x8 y[kGroupUnroll];
    int chunk[kGroupUnroll];
#pragma unroll
    for (int u = 0; u < kGroupUnroll; ++u) {
      chunk[u] = c;
      y[u] = zero_bf16x8();
      if (valid[u]) {
        y[u] = swiglu_chunk<kOai, true>(in[u], c, d);
        if (out) store_chunk_bf16<true>(out + rows[u] * d, c, d, y[u]);
      }
    }
    quantize_group_chunks<Format, kGroupUnroll>(dst, rows, d, chunk, valid, y);
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
      if (p.granularity == Fp8Granularity::per_token) {
        with_row_threads(swiglu_chunks_per_row(p.d), kTokenCached, [&](auto row_threads) {
          constexpr int kRowThreads = decltype(row_threads)::value;
          swiglu_fp8_token_kernel<Format, kOai, decltype(vector)::value, kRowThreads>
              <<<grid_for(p.rows, kTokenBlock / kRowThreads), kTokenBlock, 0, s>>>(b.gate_up, out, dst, p.d);
        });
      } else if constexpr (decltype(vector)::value) {  // per 1x128: d is a multiple of 128
        const unsigned tiles = grid_for(p.rows, kGroupThreads / 16 * kGroupUnroll);
        const dim3 grid(static_cast<unsigned>(p.d / kFp8GroupSize), tiles < 65535u ? tiles : 65535u);
        swiglu_fp8_group_kernel<Format, kOai><<<grid, kGroupThreads, 0, s>>>(b.gate_up, out, dst, p.d);
      }
    });
  });
  gpu_check_launch("swiglu_fp8_fused_kernel");
}

}  // namespace fb
