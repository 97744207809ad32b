// F8: the small-M (1 to 16 rows) weight-streaming kernel, one launch of the block-level body in
// fp8_gemm_small_m_device.hpp: each block streams kFp8GemmSmallMColumns weight rows once for its
// row tile (grid: N / 8 column blocks x ceil(M / tile) row tiles; N = 1536: 192 column blocks of
// 128 threads, each with its 48 KB of weight in flight).
#include "core/errors.hpp"
#include "kernels/common/gpu_check.hpp"
#include "kernels/fp8_gemm/fp8_gemm_small_m_device.hpp"

namespace fb {
namespace {

template <class Format, int kRows>
__global__ __launch_bounds__(kFp8GemmSmallMThreads) void fp8_gemm_small_m_kernel(Fp8GemmParams p, Fp8GemmBuffers b) {
  __shared__ float4 smem[kFp8GemmSmallMSmemVec4];
  fp8_gemm_row_slice(p, b, static_cast<std::int64_t>(blockIdx.y) * kRows, kRows);
  fp8_gemm_small_m_block<Format, kRows>(p, b, static_cast<std::int64_t>(blockIdx.x) * kFp8GemmSmallMColumns, smem);
}

}  // namespace

void fp8_gemm_small_m_launch(const Fp8GemmParams& p, const Fp8GemmBuffers& b, void* stream) {
  if (p.rows > kFp8GemmSmallMMaxRows) throw InputError("the small-M fp8 GEMM takes at most 16 rows");
  if (p.rows == 0 || p.cols == 0) return;
  auto s = static_cast<hipStream_t>(stream);
  with_fp8_gemm_small_m_rows(p, [&](auto tile) {
    constexpr int kRows = decltype(tile)::value;
    const dim3 blocks(static_cast<unsigned>((p.cols + kFp8GemmSmallMColumns - 1) / kFp8GemmSmallMColumns),
                      static_cast<unsigned>((p.rows + kRows - 1) / kRows));
    if (p.flavour == Fp8Flavour::e4m3fn)
      fp8_gemm_small_m_kernel<Fp8E4m3fnFormat, kRows><<<blocks, kFp8GemmSmallMThreads, 0, s>>>(p, b);
    else
      fp8_gemm_small_m_kernel<Fp8E4m3fnuzFormat, kRows><<<blocks, kFp8GemmSmallMThreads, 0, s>>>(p, b);
  });
  gpu_check_launch("fp8_gemm_small_m_kernel");
}

}  // namespace fb
