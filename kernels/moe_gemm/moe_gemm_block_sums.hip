// The matrix units' block sums alone, for the exactness test (tests/kernels/moe_gemm_test.cpp):
// tile i of `count` is 16 rows x 8 columns of one 32-element MX block; one warp per tile runs the
// engine's block-sum routine (mx_tile_block_sums: the m16n8k32 e4m3 MMA on NVIDIA sm_89+) and
// writes the 128 sums S_q (quarter units) row-major; a sum the hardware did not form exactly (not
// an integer multiple of 2^-14) comes back as INT_MIN and fails the test. With wgmma_shift u >= 0 both
// operands are converted as the wgmma prefill engine converts them (its table, k order), the columns
// times 2^u as its token blocks.
#include "core/errors.hpp"
#include "kernels/common/gpu_check.hpp"
#include "kernels/moe_gemm/moe_gemm.hpp"
#include "kernels/moe_gemm/moe_gemm_exact.hpp"

namespace fb {
namespace {

__global__ void moe_block_sums_mma_kernel(const std::uint8_t* a, const std::uint8_t* b, std::int32_t* sums,
                                          int wgmma_shift) {
  const int lane = threadIdx.x & 31, group = lane >> 2, quad = lane & 3;
  const std::int64_t tile = blockIdx.x;
  const std::uint8_t* at = a + tile * 16 * 16;
  const std::uint8_t* bt = b + tile * 8 * 16;
  const std::uint8_t* lo = at + group * 16;
  const std::uint8_t* hi = at + (group + 8) * 16;
  int c[4];
#if FB_MOE_FP8_MMA
  if (wgmma_shift < 0) {
    mx_tile_block_sums(mx_a_fragment(lo, hi, quad), lo, hi, bt + group * 16, bt + 2 * quad * 16,
                       bt + (2 * quad + 1) * 16, quad, c);
  } else {
    // The same permutation of k on both sides, so the products pair up as before.
    const E2m1E4m3Table plain = e2m1_e4m3_table(0), shifted = e2m1_e4m3_table(static_cast<std::uint32_t>(wgmma_shift));
    MxAFragment fa;
    MxBFragment fb;
    e2m1x8_to_e4m3x8_by_table(load_u32(lo + 4 * quad), plain, fa.a[0], fa.a[2]);
    e2m1x8_to_e4m3x8_by_table(load_u32(hi + 4 * quad), plain, fa.a[1], fa.a[3]);
    e2m1x8_to_e4m3x8_by_table(load_u32(bt + group * 16 + 4 * quad), shifted, fb.b[0], fb.b[1]);
    float f[4];
    mx_mma_block_sums(fa, fb, f);
    const float unscale = 1.0f / (kMxMmaSumScale * static_cast<float>(1 << wgmma_shift));  // a power of two
    for (int i = 0; i < 4; ++i) {  // S_q, or INT_MIN where the sum is not S_q * 2^(u-14) exactly
      const float q = f[i] * unscale;
      c[i] = q == truncf(q) && fabsf(q) <= 4608.0f ? static_cast<int>(q) : -2147483647 - 1;
    }
  }
#else  // no fp8 matrix unit: the engine's integer sums (no operand to convert)
  (void)wgmma_shift;
  const MxAFragment fa{{0u, 0u, 0u, 0u}};
  mx_tile_block_sums(fa, lo, hi, bt + group * 16, bt + 2 * quad * 16, bt + (2 * quad + 1) * 16, quad, c);
#endif
  std::int32_t* out = sums + tile * 16 * 8;
  out[group * 8 + 2 * quad] = c[0];
  out[group * 8 + 2 * quad + 1] = c[1];
  out[(group + 8) * 8 + 2 * quad] = c[2];
  out[(group + 8) * 8 + 2 * quad + 1] = c[3];
}

__global__ void moe_block_sums_plain_kernel(const std::uint8_t* a, const std::uint8_t* b, std::int32_t* sums) {
  const int i = threadIdx.x;  // 128 threads: one sum each
  const std::int64_t tile = blockIdx.x;
  sums[tile * 128 + i] = mx_block_sum_quarters(a + tile * 256 + (i / 8) * 16, b + tile * 128 + (i % 8) * 16);
}

}  // namespace

void moe_block_sums_launch(MoeGemmEngine engine, const std::uint8_t* a, const std::uint8_t* b, std::int32_t* sums,
                           std::int64_t count, void* stream, int wgmma_shift) {
  const auto s = static_cast<hipStream_t>(stream);
  if (wgmma_shift < -1 || wgmma_shift > 12 || (wgmma_shift >= 0 && engine != MoeGemmEngine::exact))
    throw InputError("moe_block_sums_launch: wgmma_shift must be -1, or 0..12 with the exact engine");
  if (engine == MoeGemmEngine::exact) {
    moe_block_sums_mma_kernel<<<static_cast<unsigned>(count), 32, 0, s>>>(a, b, sums, wgmma_shift);
    gpu_check_launch("moe_block_sums_mma_kernel");
  } else {
    moe_block_sums_plain_kernel<<<static_cast<unsigned>(count), 128, 0, s>>>(a, b, sums);
    gpu_check_launch("moe_block_sums_plain_kernel");
  }
}

}  // namespace fb
