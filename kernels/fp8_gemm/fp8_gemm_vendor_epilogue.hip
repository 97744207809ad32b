// The epilogue of the vendor variant's fallback form: cuBLASLt wrote the fp32 sums acc[M][N] (unit
// scales), this launch applies the contract's epilogue, C = bf16_rne((acc * b_scale[n]) * a_scale[m]),
// with the family's own fp8_gemm_epilogue. One thread per element, grid-strided, coalesced.
#include <algorithm>

#include "kernels/common/gpu_check.hpp"
#include "kernels/fp8_gemm/fp8_gemm_math.hpp"
#include "kernels/fp8_gemm/fp8_gemm_vendor.hpp"

namespace fb {
namespace {

constexpr int kThreads = 256;
constexpr std::int64_t kMaxBlocks = 65535;

__global__ __launch_bounds__(kThreads) void fp8_gemm_vendor_epilogue_kernel(Fp8GemmParams p, const float* acc,
                                                                            Fp8GemmBuffers b) {
  const std::int64_t total = p.rows * p.cols;
  const std::int64_t stride = static_cast<std::int64_t>(gridDim.x) * kThreads;
  for (std::int64_t i = static_cast<std::int64_t>(blockIdx.x) * kThreads + threadIdx.x; i < total; i += stride) {
    const std::int64_t m = i / p.cols, n = i - m * p.cols;
    b.c[i] = fp8_gemm_epilogue(acc[i], b.b_scale[n], b.a_scale[m]);
  }
}

}  // namespace

void fp8_gemm_vendor_epilogue_launch(const Fp8GemmParams& p, const float* acc, const Fp8GemmBuffers& b, void* stream) {
  const std::int64_t total = p.rows * p.cols;
  if (total == 0) return;
  const auto blocks = static_cast<unsigned>(std::min((total + kThreads - 1) / kThreads, kMaxBlocks));
  fp8_gemm_vendor_epilogue_kernel<<<blocks, kThreads, 0, static_cast<hipStream_t>(stream)>>>(p, acc, b);
  gpu_check_launch("fp8_gemm_vendor_epilogue_kernel");
}

}  // namespace fb
