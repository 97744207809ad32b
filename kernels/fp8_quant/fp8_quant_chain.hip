// fp8 activation quant, chain (what F9 replaces): two plain passes, each vectorised and coalesced.
//   fp8_amax kernel         reads x, writes the amax bits of every row or 1x128 group
//   fp8_scale_quant kernel  reads x and amax, writes scales and fp8 bytes
// Same arithmetic as the fused kernel (fp8_quant_math.hpp); the difference is the second read of x
// and the amax round trip through memory.
#include "kernels/common/block_reduce.hpp"
#include "kernels/common/gpu_check.hpp"
#include "kernels/fp8_quant/fp8_quant_device.hpp"

namespace fb {
namespace {

constexpr int kThreads = 256;
constexpr int kCachedVectors = 4;  // threads per row as the fused kernel picks them
constexpr std::int64_t kUnalignedRow = 1 << 20;  // K % 8 != 0: treated as a long row, a whole block per row
constexpr int kLanesPerGroup = static_cast<int>(kFp8GroupSize / 8);

// Per token: kRowThreads threads per row (as the fused kernel), a max over them; scalar when K % 8.
template <int kRowThreads>
__global__ __launch_bounds__(kThreads) void fp8_amax_token_kernel(const std::uint16_t* x, std::uint32_t* amax_out,
                                                                  std::int64_t rows, std::int64_t cols) {
  __shared__ std::uint32_t scratch[kThreads / 32];
  const std::int64_t row = static_cast<std::int64_t>(blockIdx.x) * (kThreads / kRowThreads) + threadIdx.x / kRowThreads;
  const int t = threadIdx.x % kRowThreads;
  const std::uint16_t* xr = x + row * cols;
  std::uint32_t amax = 0;
  if (row < rows) {
    if (cols % 8 == 0) {
      for (std::int64_t v = t; v < cols / 8; v += kRowThreads)
        amax = max_u32(amax, bf16x8_abs_max_bits(load_bf16x8(xr + v * 8)));
    } else {
      for (std::int64_t c = t; c < cols; c += kRowThreads) amax = max_u32(amax, bf16_abs_bits(xr[c]));
    }
  }
  amax = grouped_max_u32<kRowThreads>(amax, scratch);
  if (row < rows && t == 0) amax_out[row] = amax;
}

__global__ __launch_bounds__(kThreads) void fp8_amax_group_kernel(const std::uint16_t* x, std::uint32_t* amax_out,
                                                                  std::int64_t vectors) {
  const std::int64_t i = static_cast<std::int64_t>(blockIdx.x) * kThreads + threadIdx.x;
  const std::uint32_t amax = group16_max_u32(i < vectors ? bf16x8_abs_max_bits(load_bf16x8(x + i * 8)) : 0u);
  if (i < vectors && threadIdx.x % kLanesPerGroup == 0) amax_out[i / kLanesPerGroup] = amax;
}

template <class Format, ScaleFormat kScale, int kRowThreads>
__global__ __launch_bounds__(kThreads) void fp8_scale_quant_token_kernel(const std::uint16_t* x,
                                                                         const std::uint32_t* amax, std::uint8_t* q,
                                                                         void* scales, std::int64_t rows,
                                                                         std::int64_t cols) {
  const std::int64_t row = static_cast<std::int64_t>(blockIdx.x) * (kThreads / kRowThreads) + threadIdx.x / kRowThreads;
  const int t = threadIdx.x % kRowThreads;
  if (row >= rows) return;
  const Fp8Scale s = fp8_scale_from_amax_bits(amax[row], Format::kFlavour, kScale);
  const std::uint16_t* xr = x + row * cols;
  std::uint8_t* qr = q + row * cols;
  if (cols % 8 == 0) {
    for (std::int64_t v = t; v < cols / 8; v += kRowThreads)
      quantize_store_bf16x8<Format>(load_bf16x8(xr + v * 8), s.inverse, qr + v * 8);
  } else {
    for (std::int64_t c = t; c < cols; c += kRowThreads) qr[c] = fp8_quantize_bf16<Format>(xr[c], s.inverse);
  }
  if (t == 0) fp8_store_scale(scales, row, s, kScale);
}

template <class Format, ScaleFormat kScale, ScaleLayout kLayout>
__global__ __launch_bounds__(kThreads) void fp8_scale_quant_group_kernel(const std::uint16_t* x,
                                                                         const std::uint32_t* amax, std::uint8_t* q,
                                                                         void* scales, std::int64_t rows,
                                                                         std::int64_t cols) {
  const std::int64_t i = static_cast<std::int64_t>(blockIdx.x) * kThreads + threadIdx.x;
  if (i >= rows * cols / 8) return;
  const std::int64_t group = i / kLanesPerGroup;
  const Fp8Scale s = fp8_scale_from_amax_bits(amax[group], Format::kFlavour, kScale);
  quantize_store_bf16x8<Format>(load_bf16x8(x + i * 8), s.inverse, q + i * 8);
  if (threadIdx.x % kLanesPerGroup == 0) {
    const std::int64_t groups_per_row = cols / kFp8GroupSize;
    fp8_store_scale(scales,
                    fp8_scale_index(group / groups_per_row, group % groups_per_row, rows, groups_per_row, kLayout), s,
                    kScale);
  }
}

}  // namespace

void fp8_amax_launch(const Fp8QuantParams& p, const Fp8QuantBuffers& b, void* stream) {
  auto* s = static_cast<hipStream_t>(stream);
  if (p.granularity == Fp8Granularity::per_token) {
    with_row_threads(p.cols % 8 == 0 ? p.cols / 8 : kUnalignedRow, kCachedVectors, [&](auto row_threads) {
      constexpr int kRowThreads = decltype(row_threads)::value;
      fp8_amax_token_kernel<kRowThreads>
          <<<grid_for(p.rows, kThreads / kRowThreads), kThreads, 0, s>>>(b.x, b.amax, p.rows, p.cols);
    });
  } else {
    const std::int64_t vectors = p.rows * p.cols / 8;
    fp8_amax_group_kernel<<<grid_for(vectors, kThreads), kThreads, 0, s>>>(b.x, b.amax, vectors);
  }
  gpu_check_launch("fp8_amax_kernel");
}

void fp8_scale_quant_launch(const Fp8QuantParams& p, const Fp8QuantBuffers& b, void* stream) {
  auto* s = static_cast<hipStream_t>(stream);
  with_fp8_format(p.flavour, [&](auto format) {
    using Format = decltype(format);
    with_scale_format(p.scale_format, [&](auto scale) {
      if (p.granularity == Fp8Granularity::per_token) {
        with_row_threads(p.cols % 8 == 0 ? p.cols / 8 : kUnalignedRow, kCachedVectors, [&](auto row_threads) {
          constexpr int kRowThreads = decltype(row_threads)::value;
          fp8_scale_quant_token_kernel<Format, decltype(scale)::value, kRowThreads>
              <<<grid_for(p.rows, kThreads / kRowThreads), kThreads, 0, s>>>(b.x, b.amax, b.q, b.scales, p.rows,
                                                                               p.cols);
        });
        return;
      }
      with_scale_layout(p.layout, [&](auto layout) {
        fp8_scale_quant_group_kernel<Format, decltype(scale)::value, decltype(layout)::value>
            <<<grid_for(p.rows * p.cols / 8, kThreads), kThreads, 0, s>>>(b.x, b.amax, b.q, b.scales, p.rows,
                                                                            p.cols);
      });
    });
  });
  gpu_check_launch("fp8_scale_quant_kernel");
}

void fp8_quant_chain_launch(const Fp8QuantParams& p, const Fp8QuantBuffers& b, void* stream) {
  fp8_amax_launch(p, b, stream);
  fp8_scale_quant_launch(p, b, stream);
}

}  // namespace fb
