// The block-scale fp8 GEMM on the matrix units (wgmma, sm_90a), split-K: a CTA computes a 128 x 128
// tile's slice, two consumer warpgroups of 64 rows fed by a TMA producer (wgmma_pipeline).
// For each 128-K block of its slice in order the matrix unit forms a warpgroup's partial (4 k32
// steps from zero), promoted on the CUDA cores: part = fma(partial, fl(a_s * b_s), part), a_s the 1x128
// scale of the register's row and b_s the tile's one 128x128 scale. Then the tile's turnstile adds the slice
// into acc in slice order. Deterministic (fixed instruction sequence, ordered slices); against the
// blocked emulation within the bound of kernels/fp8_gemm/fp8_gemm_bounds.hpp.
#include <string>

#include "core/errors.hpp"
#include "kernels/common/gpu_check.hpp"
#include "kernels/fp8_gemm/fp8_gemm_wgmma_device.hpp"
#include "kernels/fp8_gemm/fp8_gemm_wgmma_probe.hpp"
#include "kernels/fp8_gemm_blockscale/fp8_blockscale.hpp"
#include "kernels/fp8_gemm_blockscale/fp8_blockscale_epoch.hpp"
#include "kernels/fp8_gemm_blockscale/fp8_blockscale_turnstile.hpp"

namespace fb {
namespace {

__global__ __launch_bounds__(kWgmmaCtaThreads, 1) void fp8_blockscale_wgmma_kernel(Fp8BlockscaleParams p,
                                                                             Fp8BlockscaleBuffers b,
                                                                             std::uint32_t epoch,
                                                                             const FB_GRID_CONSTANT WgmmaOperands maps) {
#if FB_WGMMA_AVAILABLE
  extern __shared__ __align__(128) std::uint8_t smem[];
  const std::int64_t nb = blockIdx.x, s = blockIdx.z;
  const std::int64_t n0 = nb * kWgmmaTileN;
  // This consumer warpgroup's rows start at m0 (the producer's m0 is unused).
  const std::int64_t cta_m0 = static_cast<std::int64_t>(blockIdx.y) * kWgmmaCtaM;
  const std::int64_t m0 = cta_m0 + static_cast<std::int64_t>(wgmma_consumer_group() % kWgmmaConsumerGroups) * kWgmmaTileM;
  const std::int64_t kb_count = p.k_blocks();
  // This thread's two rows (fragment rows r and r + 8); rows past M read scale 0.
  const std::int64_t row_lo = m0 + wgmma_acc_row(0), row_hi = m0 + wgmma_acc_row(2);
  float part[kWgmmaAccRegs];
#pragma unroll
  for (int j = 0; j < kWgmmaAccRegs; ++j) part[j] = 0.0f;
  // Block kb's three scales are loaded during block kb's product (after block kb - 1's promotion).
  const std::int64_t kb_begin = p.slice_begin(s), kb_end = p.slice_begin(s + 1);
  float as_lo = 0.0f, as_hi = 0.0f, bs = 0.0f;
  auto load_scales = [&](std::int64_t kb) {
    as_lo = row_lo < p.rows ? b.a_scale[row_lo * kb_count + kb] : 0.0f;
    as_hi = row_hi < p.rows ? b.a_scale[row_hi * kb_count + kb] : 0.0f;
    bs = b.b_scale[nb * kb_count + kb];
  };
  if (kb_begin < kb_end && !wgmma_is_producer()) load_scales(kb_begin);
  // One unit: this CTA's tile and slice (the turnstile below needs every thread, producer included).
  const auto unit = [&](int i, WgmmaUnit& w) {
    w = WgmmaUnit{cta_m0, n0, kb_begin, kb_end};
    return i == 0;
  };
  const auto promote = [&](std::int64_t kb, const float* partial) {
    // The scales' product once per row and block, then one fma per element (fp8_blockscale_math.hpp).
    const float scale_lo = blockscale_scale(as_lo, bs), scale_hi = blockscale_scale(as_hi, bs);
#pragma unroll
    for (int j = 0; j < kWgmmaAccRegs; ++j)
      part[j] = blockscale_promote_scaled(part[j], partial[j], (j / 2) % 2 ? scale_hi : scale_lo);
    if (kb + 1 < kb_end) load_scales(kb + 1);
  };
  wgmma_pipeline(smem, maps, p.rows, unit, [](const WgmmaUnit&) {}, promote, [](const WgmmaUnit&) {});
  std::uint32_t* ticket = b.tickets + static_cast<std::int64_t>(blockIdx.y) * p.n_blocks() + nb;
  // Every thread of the CTA takes part in the turnstile's barriers; the producer adds nothing.
  turnstile_wait(ticket, epoch, s);
  const bool last = s == p.slices - 1;
  if (!wgmma_is_producer()) {
    // Registers j and j + 1 are adjacent columns of one row (N is a multiple of 128): one 8-byte
    // access to acc and one 4-byte store to C per pair. In each half of the registers every prior
    // sum is read before any is written, so the reads overlap (half at a time: all 64 at once
    // spilled registers).
    const float* row_acc[2] = {b.acc + row_lo * p.cols + n0, b.acc + row_hi * p.cols + n0};
    constexpr int kHalf = kWgmmaAccRegs / 2;
#pragma unroll
    for (int h = 0; h < 2; ++h) {
      float2 prior[kHalf / 2];
#pragma unroll
      for (int j = h * kHalf; j < (h + 1) * kHalf; j += 2) {
        const int r = (j / 2) % 2;
        prior[(j - h * kHalf) / 2] = (r ? row_hi : row_lo) < p.rows
                                         ? turnstile_read_pair(row_acc[r], wgmma_acc_col(j))
                                         : make_float2(0.0f, 0.0f);
      }
#pragma unroll
      for (int j = h * kHalf; j < (h + 1) * kHalf; j += 2) {
        const std::int64_t m = (j / 2) % 2 ? row_hi : row_lo, n = n0 + wgmma_acc_col(j);
        if (m < p.rows)
          turnstile_write_pair(b.acc, b.c, m * p.cols + n, prior[(j - h * kHalf) / 2], part[j], part[j + 1], last);
      }
    }
  }
  turnstile_pass(ticket, epoch, s);
#else
  (void)p;
  (void)b;
  (void)epoch;
  (void)maps;
#endif
}

}  // namespace

std::string fp8_blockscale_wgmma_unavailable(const Fp8BlockscaleParams& p) {
  if (p.flavour != Fp8Flavour::e4m3fn) return "wgmma takes OCP e4m3 only";
  return wgmma_device_unavailable();
}

void fp8_blockscale_wgmma_launch(const Fp8BlockscaleParams& p, const Fp8BlockscaleBuffers& b, void* stream) {
  if (const std::string why = fp8_blockscale_wgmma_unavailable(p); !why.empty())
    throw DeviceError("fp8_blockscale_wgmma: " + why);
  if (p.rows == 0) return;
  wgmma_pipeline_allow_smem<fp8_blockscale_wgmma_kernel>();
  const dim3 grid(static_cast<unsigned>(p.n_blocks()), static_cast<unsigned>((p.rows + kWgmmaCtaM - 1) / kWgmmaCtaM),
                  static_cast<unsigned>(p.slices));
  fp8_blockscale_wgmma_kernel<<<grid, kWgmmaCtaThreads, kWgmmaPipelineBytes, static_cast<hipStream_t>(stream)>>>(
      p, b, next_blockscale_epoch(), wgmma_operands(b.a, p.rows, b.b, p.cols, p.depth));
  gpu_check_launch("fp8_blockscale_wgmma_kernel");
}

}  // namespace fb
