// The plain per-token x per-channel fp8 GEMM: one thread per output element, the canonical order
// of fp8_gemm_math.hpp held in 16 registers, on the CUDA cores (or AMD's vector ALUs). Slow for big
// M, exact to the emulation on every platform: the reference path every other kernel is held to.
// Also the general GEMM's fallback where no matrix-unit kernel runs the point.
#include <algorithm>

#include "kernels/common/gpu_check.hpp"
#include "kernels/fp8_gemm/fp8_gemm_small_m_device.hpp"

namespace fb {
namespace {

constexpr int kThreads = 128;
constexpr std::int64_t kMaxGridRows = 65535;

template <class Format>
__global__ __launch_bounds__(kThreads) void fp8_gemm_plain_kernel(Fp8GemmParams p, Fp8GemmBuffers b) {
  const std::int64_t n = static_cast<std::int64_t>(blockIdx.x) * kThreads + threadIdx.x;
  if (n >= p.cols) return;
  const std::int64_t chunks = p.depth / kFp8GemmChunk;
  const uint4* w = reinterpret_cast<const uint4*>(b.b + n * p.depth);
  for (std::int64_t m = blockIdx.y; m < p.rows; m += gridDim.y) {
    const uint4* x = reinterpret_cast<const uint4*>(b.a + m * p.depth);
    float partial[kFp8GemmPartials];
#pragma unroll
    for (int j = 0; j < kFp8GemmPartials; ++j) partial[j] = 0.0f;
    for (std::int64_t c0 = 0; c0 < chunks; c0 += kFp8GemmPartials) {
#pragma unroll
      for (int j = 0; j < kFp8GemmPartials; ++j) {
        if (c0 + j < chunks) {
          float xv[kFp8GemmChunk], wv[kFp8GemmChunk];
          fp8x16_to_float<Format>(x[c0 + j], xv);
          fp8x16_to_float<Format>(w[c0 + j], wv);
          partial[j] = fp8_gemm_chunk_add(partial[j], xv, wv);
        }
      }
    }
    b.c[m * p.cols + n] = fp8_gemm_epilogue(fp8_gemm_tree16(partial), b.b_scale[n], b.a_scale[m]);
  }
}

}  // namespace

void fp8_gemm_plain_launch(const Fp8GemmParams& p, const Fp8GemmBuffers& b, void* stream) {
  if (p.rows == 0 || p.cols == 0) return;
  const dim3 grid(static_cast<unsigned>((p.cols + kThreads - 1) / kThreads),
                  static_cast<unsigned>(std::min(p.rows, kMaxGridRows)));
  auto s = static_cast<hipStream_t>(stream);
  if (p.flavour == Fp8Flavour::e4m3fn)
    fp8_gemm_plain_kernel<Fp8E4m3fnFormat><<<grid, kThreads, 0, s>>>(p, b);
  else
    fp8_gemm_plain_kernel<Fp8E4m3fnuzFormat><<<grid, kThreads, 0, s>>>(p, b);
  gpu_check_launch("fp8_gemm_plain_kernel");
}

}  // namespace fb
