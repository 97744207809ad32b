// fp8 activation quant, fused (F9): one vectorised pass reads each bf16 once and writes fp8 bytes
// and scales. Arithmetic: fp8_quant_math.hpp (shared with the CPU emulation).
//
// per token:  32 to 256 threads per row (the fewest that hold the row in at most 4 16-byte vectors
//             each; 8 rows per block at K = 768, one at K = 6144), a max over the row's threads;
//             rows past 8192 columns re-read their tail from cache. K not a multiple of 8: a scalar
//             kernel, one block per row.
// per 1x128:  16 lanes own one 128-element group (one vector each); every thread handles 4 vectors
//             of 4 different groups to keep loads in flight; max over the 16 lanes by xor shuffles,
//             which stay inside an aligned 16-lane group on wave32 and wave64 alike.
// NOTE: max is exact and order-free, so neither mapping changes a single bit of the result.
#include "kernels/common/block_reduce.hpp"
#include "kernels/common/gpu_check.hpp"
#include "kernels/fp8_quant/fp8_quant_device.hpp"

namespace fb {
namespace {

constexpr int kTokenThreads = 256;
constexpr int kTokenCachedVectors = 4;
constexpr int kGroupThreads = 256;
constexpr int kGroupUnroll = 4;
constexpr int kLanesPerGroup = static_cast<int>(kFp8GroupSize / 8);  // 16

template <class Format, ScaleFormat kScale, int kRowThreads>
__global__ __launch_bounds__(kTokenThreads) void fp8_quant_token_fused_kernel(const std::uint16_t* x, std::uint8_t* q,
                                                                              void* scales, std::int64_t rows,
                                                                              std::int64_t cols) {
  __shared__ std::uint32_t scratch[kTokenThreads / 32];
  // NOTE: with one row per block the row index is uniform; said so, the compiler keeps it scalar.
  const std::int64_t row = kRowThreads == kTokenThreads
                               ? static_cast<std::int64_t>(blockIdx.x)
                               : static_cast<std::int64_t>(blockIdx.x) * (kTokenThreads / kRowThreads) +
                                     threadIdx.x / kRowThreads;
  const int t = kRowThreads == kTokenThreads ? static_cast<int>(threadIdx.x) : static_cast<int>(threadIdx.x % kRowThreads);
  const bool live = row < rows;  // a spare row group still joins the reduction's barriers
  const std::uint16_t* xr = x + row * cols;
  std::uint8_t* qr = q + row * cols;
  const std::int64_t vectors = live ? cols / 8 : 0;

  // Load: up to kTokenCachedVectors vectors per thread stay in registers.
  std::uint32_t amax = 0;
  Bf16x8 cache[kTokenCachedVectors];
#pragma unroll
  for (int i = 0; i < kTokenCachedVectors; ++i) {
    const std::int64_t v = t + i * kRowThreads;
    if (v < vectors) {
      cache[i] = load_bf16x8(xr + v * 8);
      amax = max_u32(amax, bf16x8_abs_max_bits(cache[i]));
    }
  }
  for (std::int64_t v = t + kTokenCachedVectors * kRowThreads; v < vectors; v += kRowThreads)
    amax = max_u32(amax, bf16x8_abs_max_bits(load_bf16x8(xr + v * 8)));
  // Reduce over the row's threads, scale, quantize from registers.
  amax = grouped_max_u32<kRowThreads>(amax, scratch);
  if (!live) return;
  const Fp8Scale s = fp8_scale_from_amax_bits(amax, Format::kFlavour, kScale);
#pragma unroll
  for (int i = 0; i < kTokenCachedVectors; ++i) {
    const std::int64_t v = t + i * kRowThreads;
    if (v < vectors) quantize_store_bf16x8<Format>(cache[i], s.inverse, qr + v * 8);
  }
  for (std::int64_t v = t + kTokenCachedVectors * kRowThreads; v < vectors; v += kRowThreads)
    quantize_store_bf16x8<Format>(load_bf16x8(xr + v * 8), s.inverse, qr + v * 8);
  if (t == 0) fp8_store_scale(scales, row, s, kScale);
}

// Rows that are not 16-byte aligned (K not a multiple of 8): one block per row, element by element
// (the second read hits the cache).
template <class Format, ScaleFormat kScale>
__global__ __launch_bounds__(kTokenThreads) void fp8_quant_token_scalar_kernel(const std::uint16_t* x,
                                                                               std::uint8_t* q, void* scales,
                                                                               std::int64_t cols) {
  __shared__ std::uint32_t scratch[kTokenThreads / 32];
  const std::int64_t row = blockIdx.x;
  const std::uint16_t* xr = x + row * cols;
  std::uint8_t* qr = q + row * cols;
  std::uint32_t amax = 0;
  for (std::int64_t c = threadIdx.x; c < cols; c += kTokenThreads) amax = max_u32(amax, bf16_abs_bits(xr[c]));
  amax = grouped_max_u32<kTokenThreads>(amax, scratch);
  const Fp8Scale s = fp8_scale_from_amax_bits(amax, Format::kFlavour, kScale);
  for (std::int64_t c = threadIdx.x; c < cols; c += kTokenThreads) qr[c] = fp8_quantize_bf16<Format>(xr[c], s.inverse);
  if (threadIdx.x == 0) fp8_store_scale(scales, row, s, kScale);
}

template <class Format, ScaleFormat kScale, ScaleLayout kLayout>
__global__ __launch_bounds__(kGroupThreads) void fp8_quant_group_fused_kernel(const std::uint16_t* x, std::uint8_t* q,
                                                                              void* scales, std::int64_t rows,
                                                                              std::int64_t cols) {
  const std::int64_t vectors = rows * cols / 8;
  const std::int64_t groups_per_row = cols / kFp8GroupSize;
  const std::int64_t first = static_cast<std::int64_t>(blockIdx.x) * (kGroupThreads * kGroupUnroll) + threadIdx.x;
  // Load all vectors first: kGroupUnroll independent 16-byte loads in flight per thread.
  Bf16x8 v[kGroupUnroll];
#pragma unroll
  for (int u = 0; u < kGroupUnroll; ++u) {
    const std::int64_t i = first + u * kGroupThreads;
    v[u] = i < vectors ? load_bf16x8(x + i * 8) : Bf16x8{make_uint4(0, 0, 0, 0)};
  }
#pragma unroll
  for (int u = 0; u < kGroupUnroll; ++u) {
    const std::int64_t i = first + u * kGroupThreads;
    // All 16 lanes of a group are in or out together (vectors is a multiple of 16), and all take
    // part in the shuffle.
    const std::uint32_t amax = group16_max_u32(bf16x8_abs_max_bits(v[u]));
    if (i >= vectors) continue;
    const Fp8Scale s = fp8_scale_from_amax_bits(amax, Format::kFlavour, kScale);
    quantize_store_bf16x8<Format>(v[u], s.inverse, q + i * 8);
    if (threadIdx.x % kLanesPerGroup == 0) {
      const std::int64_t group = i / kLanesPerGroup;
      fp8_store_scale(scales,
                      fp8_scale_index(group / groups_per_row, group % groups_per_row, rows, groups_per_row, kLayout), s,
                      kScale);
    }
  }
}

}  // namespace

void fp8_quant_fused_launch(const Fp8QuantParams& p, const Fp8QuantBuffers& b, void* stream) {
  auto* s = static_cast<hipStream_t>(stream);
  with_fp8_format(p.flavour, [&](auto format) {
    using Format = decltype(format);
    with_scale_format(p.scale_format, [&](auto scale) {
      if (p.granularity == Fp8Granularity::per_token) {
        if (p.cols % 8 != 0) {
          fp8_quant_token_scalar_kernel<Format, decltype(scale)::value>
              <<<static_cast<unsigned>(p.rows), kTokenThreads, 0, s>>>(b.x, b.q, b.scales, p.cols);
          return;
        }
        with_row_threads(p.cols / 8, kTokenCachedVectors, [&](auto row_threads) {
          constexpr int kRowThreads = decltype(row_threads)::value;
          fp8_quant_token_fused_kernel<Format, decltype(scale)::value, kRowThreads>
              <<<grid_for(p.rows, kTokenThreads / kRowThreads), kTokenThreads, 0, s>>>(b.x, b.q, b.scales, p.rows,
                                                                                       p.cols);
        });
        return;
      }
      with_scale_layout(p.layout, [&](auto layout) {
        fp8_quant_group_fused_kernel<Format, decltype(scale)::value, decltype(layout)::value>
            <<<grid_for(p.rows * p.cols / 8, kGroupThreads * kGroupUnroll), kGroupThreads, 0, s>>>(
                b.x, b.q, b.scales, p.rows, p.cols);
      });
    });
  });
  gpu_check_launch("fp8_quant_fused_kernel");
}

}  // namespace fb
