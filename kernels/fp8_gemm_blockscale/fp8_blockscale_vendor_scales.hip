// The vendor variant's one small launch: our row-major 1x128 activation scales a_scale[M][K/128]
// into the token-contiguous layout cuBLASLt's VEC128_32F mode reads, [K/128][M]. One thread per
// output element (writes coalesced; the reads stride K/128 floats, a few KB to a few MB in all).
#include <algorithm>

#include "kernels/common/gpu_check.hpp"
#include "kernels/fp8_gemm_blockscale/fp8_blockscale_vendor.hpp"

namespace fb {
namespace {

constexpr int kThreads = 256;
constexpr std::int64_t kMaxBlocks = 65535;

__global__ __launch_bounds__(kThreads) void fp8_blockscale_vendor_transpose_kernel(std::int64_t rows, std::int64_t k_blocks,
                                                                                   const float* in, float* out) {
  const std::int64_t total = rows * k_blocks;
  const std::int64_t stride = static_cast<std::int64_t>(gridDim.x) * kThreads;
  for (std::int64_t i = static_cast<std::int64_t>(blockIdx.x) * kThreads + threadIdx.x; i < total; i += stride) {
    const std::int64_t kb = i / rows, m = i - kb * rows;
    out[i] = in[m * k_blocks + kb];
  }
}

}  // namespace

void fp8_blockscale_vendor_transpose_scales_launch(const Fp8BlockscaleParams& p, const float* a_scale,
                                                   float* a_scale_k_major, void* stream) {
  const std::int64_t total = p.rows * p.k_blocks();
  if (total == 0) return;
  const auto blocks = static_cast<unsigned>(std::min((total + kThreads - 1) / kThreads, kMaxBlocks));
  fp8_blockscale_vendor_transpose_kernel<<<blocks, kThreads, 0, static_cast<hipStream_t>(stream)>>>(
      p.rows, p.k_blocks(), a_scale, a_scale_k_major);
  gpu_check_launch("fp8_blockscale_vendor_transpose_kernel");
}

}  // namespace fb
