// The plain block-scale fp8 GEMM with split-K: one thread per output element, the canonical order
// of fp8_blockscale_math.hpp on the CUDA cores (AMD vector ALUs); a block of 128 threads is one
// 1 x 128 tile (one ticket). Grid: (N / 128, M, S), the slice slowest. Exact to the emulation.
#include <atomic>

#include "core/errors.hpp"
#include "kernels/common/gpu_check.hpp"
#include "kernels/fp8_gemm/fp8_gemm_small_m_device.hpp"
#include "kernels/fp8_gemm_blockscale/fp8_blockscale.hpp"
#include "kernels/fp8_gemm_blockscale/fp8_blockscale_epoch.hpp"
#include "kernels/fp8_gemm_blockscale/fp8_blockscale_turnstile.hpp"

namespace fb {
namespace {

constexpr int kThreads = 128;

template <class Format>
__global__ __launch_bounds__(kThreads) void fp8_blockscale_plain_kernel(Fp8BlockscaleParams p, Fp8BlockscaleBuffers b,
                                                                        std::uint32_t epoch) {
  const std::int64_t nb = blockIdx.x, m = blockIdx.y, s = blockIdx.z;
  const std::int64_t n = nb * kThreads + threadIdx.x;
  const std::int64_t kb_count = p.k_blocks();
  const uint4* x = reinterpret_cast<const uint4*>(b.a + m * p.depth);
  const uint4* w = reinterpret_cast<const uint4*>(b.b + n * p.depth);
  float part = 0.0f;
  for (std::int64_t kb = p.slice_begin(s); kb < p.slice_begin(s + 1); ++kb) {
    float dot = 0.0f;
    for (int v = 0; v < kBlockscaleBlock / 16; ++v) {
      float xv[16], wv[16];
      fp8x16_to_float<Format>(x[kb * (kBlockscaleBlock / 16) + v], xv);
      fp8x16_to_float<Format>(w[kb * (kBlockscaleBlock / 16) + v], wv);
#pragma unroll
      for (int i = 0; i < 16; ++i) dot = dot + xv[i] * wv[i];
    }
    part = blockscale_promote(part, dot, b.a_scale[m * kb_count + kb], b.b_scale[nb * kb_count + kb]);
  }
  std::uint32_t* ticket = b.tickets + m * p.n_blocks() + nb;
  turnstile_wait(ticket, epoch, s);
  turnstile_add(b.acc, b.c, m * p.cols + n, part, s == p.slices - 1);
  turnstile_pass(ticket, epoch, s);
}

}  // namespace

void fp8_blockscale_plain_launch(const Fp8BlockscaleParams& p, const Fp8BlockscaleBuffers& b, void* stream) {
  if (p.rows == 0) return;
  if (p.rows > 65535) throw InputError("the plain block-scale kernel takes at most 65535 rows");
  const dim3 grid(static_cast<unsigned>(p.n_blocks()), static_cast<unsigned>(p.rows), static_cast<unsigned>(p.slices));
  const std::uint32_t epoch = next_blockscale_epoch();
  auto s = static_cast<hipStream_t>(stream);
  if (p.flavour == Fp8Flavour::e4m3fn)
    fp8_blockscale_plain_kernel<Fp8E4m3fnFormat><<<grid, kThreads, 0, s>>>(p, b, epoch);
  else
    fp8_blockscale_plain_kernel<Fp8E4m3fnuzFormat><<<grid, kThreads, 0, s>>>(p, b, epoch);
  gpu_check_launch("fp8_blockscale_plain_kernel");
}

void fp8_blockscale_zero_acc_launch(const Fp8BlockscaleParams& p, const Fp8BlockscaleBuffers& b, void* stream) {
  gpu_check(hipMemsetAsync(b.acc, 0, static_cast<std::size_t>(p.rows * p.cols) * sizeof(float),
                           static_cast<hipStream_t>(stream)),
            "hipMemsetAsync(acc)");
}

void fp8_blockscale_general_launch(const Fp8BlockscaleParams& p, const Fp8BlockscaleBuffers& b, void* stream) {
  if (fp8_blockscale_wgmma_unavailable(p).empty())
    fp8_blockscale_wgmma_launch(p, b, stream);
  else
    fp8_blockscale_plain_launch(p, b, stream);
}

}  // namespace fb
