// SwiGLU -> fp8, fused (F2): one pass reads gate_up once and writes the down projection's fp8 bytes
// and scales of bf16(out), and optionally the bf16 out.
//
// Rounding points: the activation in fp32 (swiglu_fp8_math.hpp), bf16(out), then the fp8 quant of
// bf16(out) with fp8_quant_math.hpp, the arithmetic of the chain's quant kernel. No sums: the only
// reduction is the exact, order-free amax. Claim: bitwise equal to the chain
// (swiglu_kernel -> fp8_quant) on every output.
//
// One kernel for both scale granularities. A row is held in registers, 3 or 6 chunks per thread,
// on the fewest threads (a power of two, 32 to 256) that hold it that way. Six chunks halve the
// per-row work each element carries (index math, the row max, the scale, the epilogue's branches):
// with the trims below, 33 instructions per element at d = 3072 instead of 39 (Nsight, runs 29-30),
// which outweighs the 80 registers (3 blocks per SM instead of 4) once the grid is large
// (with_row_shape). d = 768 keeps 3 chunks (32 threads, 8 rows per block); d = 3072 takes 64
// threads x 6 from T = 6333 on an H200 (132 SMs), 128 x 3 below. Thread t holds chunks t, t + R,
// ... of its row (R threads per row), so the 16 chunks of a 128-column group sit in 16 aligned
// lanes. Longer rows recompute the rest. Then
// per token:  the row's amax over its threads (grouped_max_u32), its scale, the bytes;
// per 1x128:  each group's amax is a 16-lane xor-shuffle max (the same on wave32 and wave64), the
//             wave's scales are computed one per lane and shuffled back (quantize_group_chunks).
#include <type_traits>

#include "kernels/common/block_reduce.hpp"
#include "kernels/common/gpu_check.hpp"
#include "kernels/common/multiprocessors.hpp"
#include "kernels/fp8_quant/fp8_quant_device.hpp"
#include "kernels/swiglu_fp8/swiglu_fp8_device.hpp"

namespace fb {
namespace {

constexpr int kRowBlock = kSwigluRowBlock;

template <class Format, bool kOai, bool kVector, int kRowThreads, int kRowCached, bool kPerToken>
__global__ __launch_bounds__(kRowBlock) void swiglu_fp8_kernel(const std::uint16_t* gate_up, std::uint16_t* out,
                                                               Fp8Outputs dst, std::int64_t d) {
  swiglu_fp8_rows<Format, kOai, kVector, kRowThreads, kRowCached, kPerToken>(gate_up, out, dst, d, blockIdx.x);
}

// The row shape: threads per row and chunks held per thread. Six chunks pay once the grid of
// 6-chunk blocks (80 registers: 3 of 256 threads per multiprocessor) covers the GPU four times or
// more. Below that the longer per-thread chain of six chunks costs more than the per-row work it
// saves: measured at d = 3072 on the H200 (132 SMs, run31), per token 3 chunks lead up to
// T = 4096 (decode sizes T = 3 to 192 by 0.4-0.6 us) and 6 from T = 8192 (T = 32768: 127 against
// 145 us). Only the grid depends on this choice, never a result. `forced` (3 or 6) overrides it.
template <class Fn>
void with_row_shape(std::int64_t chunks, std::int64_t rows, int forced, Fn&& fn) {
  constexpr unsigned kSixChunkBlocksPerMultiprocessor = 3, kWaves = 4;
  const unsigned six_chunk_blocks = grid_for(rows, kRowBlock / row_threads_for(chunks, 6));
  const bool large = six_chunk_blocks >= kWaves * kSixChunkBlocksPerMultiprocessor *
                                             static_cast<unsigned>(device_multiprocessors());
  const bool six = forced ? forced == 6 : chunks > 32 * 3 && large;
  if (six)
    with_row_threads(chunks, 6, [&](auto threads) { fn(threads, std::integral_constant<int, 6>{}); });
  else
    with_row_threads(chunks, 3, [&](auto threads) { fn(threads, std::integral_constant<int, 3>{}); });
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
      with_row_shape(swiglu_chunks_per_row(p.d), p.rows, p.chunks_per_thread, [&](auto row_threads, auto row_cached) {
        constexpr int kRowThreads = decltype(row_threads)::value;
        constexpr int kRowCached = decltype(row_cached)::value;
        if (p.granularity == Fp8Granularity::per_token) {
          swiglu_fp8_kernel<Format, kOai, kVector, kRowThreads, kRowCached, true>
              <<<grid_for(p.rows, kRowBlock / kRowThreads), kRowBlock, 0, s>>>(b.gate_up, out, dst, p.d);
        } else if constexpr (kVector) {  // per 1x128: d is a multiple of 128
          // Its scales are dealt over a wave, so a row spans at least a wave (wave64: 64 threads).
          constexpr int kGroupRowThreads = kRowThreads < kWidestWave ? kWidestWave : kRowThreads;
          swiglu_fp8_kernel<Format, kOai, kVector, kGroupRowThreads, kRowCached, false>
              <<<grid_for(p.rows, kRowBlock / kGroupRowThreads), kRowBlock, 0, s>>>(b.gate_up, out, dst, p.d);
        }
      });
    });
  });
  gpu_check_launch("swiglu_fp8_fused_kernel");
}

}  // namespace fb
