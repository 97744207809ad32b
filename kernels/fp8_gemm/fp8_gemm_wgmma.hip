// The general per-token x per-channel fp8 GEMM on the matrix units (wgmma, sm_90a): a block (one
// warpgroup) computes a 64 x 128 tile of C. For each 128-K block in order it stages A and B tiles
// in shared memory, lets the matrix unit form the block's partial (4 k32 steps from zero), and
// promotes it into fp32 registers on the CUDA cores: acc = acc + partial, blocks in increasing K.
// The epilogue is the canonical one. Only the partials' internal accumulation differs from the
// blocked emulation (fp8_gemm_blocked_emu); see fp8_gemm_bounds.hpp for the bound.
//
// Double-buffered (wgmma_block_loop: the next block's tiles arrive by cp.async during this
// block's product; run 40 and before: one stage, synchronous loads). Deterministic: a fixed instruction sequence
// with no atomics, so the same bytes on every run of one device.
#include <string>

#include "core/errors.hpp"
#include "kernels/common/gpu_check.hpp"
#include "kernels/common/multiprocessors.hpp"
#include "kernels/fp8_gemm/fp8_gemm.hpp"
#include "kernels/fp8_gemm/fp8_gemm_math.hpp"
#include "kernels/fp8_gemm/fp8_gemm_wgmma_device.hpp"
#include "kernels/fp8_gemm/fp8_gemm_wgmma_probe.hpp"

namespace fb {
namespace {

__global__ __launch_bounds__(kWgmmaThreads) void fp8_gemm_wgmma_kernel(Fp8GemmParams p, Fp8GemmBuffers b) {
#if FB_WGMMA_AVAILABLE
  __shared__ __align__(128) std::uint8_t stages[kWgmmaLoopBytes];
  const std::int64_t m0 = static_cast<std::int64_t>(blockIdx.y) * kWgmmaTileM;
  const std::int64_t n0 = static_cast<std::int64_t>(blockIdx.x) * kWgmmaTileN;
  float acc[kWgmmaAccRegs], block[kWgmmaAccRegs];
#pragma unroll
  for (int j = 0; j < kWgmmaAccRegs; ++j) acc[j] = 0.0f;
  wgmma_block_loop(stages, b.a, p.rows, b.b, p.cols, p.depth, m0, n0, 0, p.depth / kWgmmaTileK, block,
                   [&](std::int64_t, const float* partial) {
#pragma unroll
                     for (int j = 0; j < kWgmmaAccRegs; ++j) acc[j] = acc[j] + partial[j];
                   });
#pragma unroll
  for (int j = 0; j < kWgmmaAccRegs; ++j) {
    const std::int64_t m = m0 + wgmma_acc_row(j), n = n0 + wgmma_acc_col(j);
    if (m < p.rows && n < p.cols) b.c[m * p.cols + n] = fp8_gemm_epilogue(acc[j], b.b_scale[n], b.a_scale[m]);
  }
#else
  (void)p;
  (void)b;
#endif
}

}  // namespace

std::string fp8_gemm_wgmma_unavailable(const Fp8GemmParams& p) {
  if (p.flavour != Fp8Flavour::e4m3fn) return "wgmma takes OCP e4m3 only";
  if (p.depth % kWgmmaTileK != 0) return "the wgmma kernel needs K % 128 == 0";
  return wgmma_device_unavailable();
}

void fp8_gemm_wgmma_launch(const Fp8GemmParams& p, const Fp8GemmBuffers& b, void* stream) {
  if (const std::string why = fp8_gemm_wgmma_unavailable(p); !why.empty()) throw DeviceError("fp8_gemm_wgmma: " + why);
  if (p.rows == 0 || p.cols == 0) return;
  const dim3 grid(static_cast<unsigned>((p.cols + kWgmmaTileN - 1) / kWgmmaTileN),
                  static_cast<unsigned>((p.rows + kWgmmaTileM - 1) / kWgmmaTileM));
  fp8_gemm_wgmma_kernel<<<grid, kWgmmaThreads, 0, static_cast<hipStream_t>(stream)>>>(p, b);
  gpu_check_launch("fp8_gemm_wgmma_kernel");
}

void fp8_gemm_general_launch(const Fp8GemmParams& p, const Fp8GemmBuffers& b, void* stream) {
  // On AMD the mma variant is the MFMA kernel, which no device has run yet: the layer keeps the
  // plain kernel there until an AMD run verifies and times it (fp8_gemm/README.md).
#if defined(__HIPCC__)
  constexpr bool kMatrixUnitsHere = false;
#else
  constexpr bool kMatrixUnitsHere = true;
#endif
  if (kMatrixUnitsHere && fp8_gemm_general_takes_mma(p.rows, p.cols, device_multiprocessors()) &&
      fp8_gemm_mma_unavailable(p).empty())
    fp8_gemm_mma_launch(p, b, stream);
  else if (fp8_gemm_wgmma_unavailable(p).empty())
    fp8_gemm_wgmma_launch(p, b, stream);
  else
    fp8_gemm_plain_launch(p, b, stream);
}

}  // namespace fb
