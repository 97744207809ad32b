// RMSNorm -> fp8, fused (F1): one pass reads x (+ residual) and the weight once, writes
// residual_out, the fp8 bytes and scales of bf16(y), and optionally the bf16 out.
//
// Rounding points, in order: s = x + residual (fp32); the canonical sum of s*s; r; y = (s*r)*(o+w);
// bf16(y); then the fp8 quant of bf16(y) with fp8_quant_math.hpp, the arithmetic of the chain's
// quant kernel. Claim: bitwise equal to the chain (rmsnorm_kernel -> fp8_quant) on every output.
//
// per token:  after pass A (rmsnorm_fp8_device.hpp) each thread forms bf16(y) of its chunks in
//             registers, the block takes the row's amax (exact, order-free max), then quantizes.
// per 1x128:  a 128-element group is 16 chunks owned by 16 consecutive, 16-aligned threads
//             (chunk c = t + 128i, group c / 16), so the group's amax is a 16-lane xor-shuffle max,
//             the same on wave32 and wave64; the register-held chunks' scales are computed once
//             per group in one epilogue (quantize_group_chunks), the rest group by group.
#include <type_traits>

#include "core/errors.hpp"
#include "kernels/common/block_reduce.hpp"
#include "kernels/common/gpu_check.hpp"
#include "kernels/fp8_quant/fp8_quant_device.hpp"
#include "kernels/rmsnorm_fp8/rmsnorm_fp8_device.hpp"

namespace fb {
namespace {

// The optional side job (RmsnormFp8Params::zero_bytes): every block zeroes a grid-strided share of
// 16-byte vectors after its own row. No vectors (the default): the loop never runs.
struct ZeroJob {
  uint4* dst = nullptr;
  std::int64_t vectors = 0;
};

__device__ inline void run_zero_job(const ZeroJob& z) {
  const std::int64_t stride = static_cast<std::int64_t>(gridDim.x) * kRmsnormThreads;
  for (std::int64_t i = static_cast<std::int64_t>(blockIdx.x) * kRmsnormThreads + threadIdx.x; i < z.vectors; i += stride)
    z.dst[i] = make_uint4(0, 0, 0, 0);
}

template <class Format, bool kVector, bool kResidual, int kCached>
__global__ __launch_bounds__(kRmsnormThreads, kRmsnormMinBlocks<kResidual>) void rmsnorm_fp8_token_kernel(RmsnormArgs a,
                                                                                               Fp8Outputs d, ZeroJob z) {
  __shared__ float sum_scratch[kCanonicalScratch];
  __shared__ std::uint32_t max_scratch[kRmsnormThreads / 32];
  const std::int64_t row = blockIdx.x;
  const std::int64_t n = a.hidden;
  const int chunks = static_cast<int>(rmsnorm_chunks(n));
  const int t = static_cast<int>(threadIdx.x);
  std::uint8_t* q_row = d.q + row * n;

  RmsnormChunk k[kCached];
  const float r = rmsnorm_pass_a<kVector, kResidual, kCached>(a, row, k, sum_scratch);

  // Pass B: bf16(y) into registers (and out), the row's amax. The weight loads go out together.
  Bf16x8 w[kCached];
#pragma unroll
  for (int i = 0; i < kCached; ++i) {
    const int c = t + i * kRmsnormThreads;
    if (c < chunks) w[i] = rmsnorm_load_weight<kVector>(a, c);
  }
  Bf16x8 y[kCached];
  std::uint32_t amax = 0;
#pragma unroll
  for (int i = 0; i < kCached; ++i) {
    const int c = t + i * kRmsnormThreads;
    y[i] = zero_bf16x8();
    if (c < chunks) {
      y[i] = rmsnorm_chunk_y<kVector, kResidual>(a, c, k[i], w[i], r);
      if (a.out) store_chunk_bf16<kVector>(a.out + row * n, c, n, y[i]);
      amax = max_u32(amax, bf16x8_abs_max_bits(y[i]));
    }
  }
  for (int c = t + kCached * kRmsnormThreads; c < chunks; c += kRmsnormThreads) {
    const Bf16x8 v = rmsnorm_reload_y<kVector, kResidual>(a, row, c, r);
    if (a.out) store_chunk_bf16<kVector>(a.out + row * n, c, n, v);
    amax = max_u32(amax, bf16x8_abs_max_bits(v));
  }
  amax = grouped_max_u32<kRmsnormThreads>(amax, max_scratch);
  const Fp8Scale scale = fp8_scale_from_amax_bits(amax, Format::kFlavour, d.format);

  // Pass C: quantize from registers (recompute past the cache). One branch per row on the scale,
  // so the hot loop holds only the no-NaN encode.
  auto pass_c = [&](auto no_nan) {
    constexpr bool kNoNan = decltype(no_nan)::value;
#pragma unroll
    for (int i = 0; i < kCached; ++i) {
      const int c = t + i * kRmsnormThreads;
      if (c < chunks) store_chunk_fp8<Format, kVector, kNoNan>(q_row, c, n, y[i], scale.inverse);
    }
    for (int c = t + kCached * kRmsnormThreads; c < chunks; c += kRmsnormThreads)
      store_chunk_fp8<Format, kVector, kNoNan>(q_row, c, n, rmsnorm_reload_y<kVector, kResidual>(a, row, c, r),
                                               scale.inverse);
  };
  if (fp8_inverse_is_finite(scale.inverse))
    pass_c(std::true_type{});
  else
    pass_c(std::false_type{});
  if (t == 0) fp8_store_scale(d.scales, row, scale, d.format);
  run_zero_job(z);
}

// hidden is a multiple of 128: every chunk is a full vector (kVector is always true here).
template <class Format, bool kVector, bool kResidual, int kCached>
__global__ __launch_bounds__(kRmsnormThreads, kRmsnormMinBlocks<kResidual>) void rmsnorm_fp8_group_kernel(RmsnormArgs a,
                                                                                               Fp8Outputs d, ZeroJob z) {
  __shared__ float sum_scratch[kCanonicalScratch];
  const std::int64_t row = blockIdx.x;
  const std::int64_t n = a.hidden;
  const int chunks = static_cast<int>(n / 8);
  const int t = static_cast<int>(threadIdx.x);

  RmsnormChunk k[kCached];
  const float r = rmsnorm_pass_a<true, kResidual, kCached>(a, row, k, sum_scratch);

  // NOTE: chunks is a multiple of 16, so the 16 lanes of a group are in or out together.
  // bf16(y) of the register-held chunks, then one epilogue for all of them (one scale per lane and
  // two chunks per 16-lane max). The weight loads go out half the chunks at a time, so the row
  // fits 64 registers without spilling (nvcc -Xptxas -v).
  constexpr int kBatch = (kCached + 1) / 2;
  int c[kCached];
  bool in[kCached];
  Bf16x8 w[kCached], y[kCached];
#pragma unroll
  for (int first = 0; first < kCached; first += kBatch) {
#pragma unroll
    for (int j = first; j < first + kBatch && j < kCached; ++j) {
      c[j] = t + j * kRmsnormThreads;
      in[j] = c[j] < chunks;
      if (in[j]) w[j] = rmsnorm_load_weight<true>(a, c[j]);
    }
#pragma unroll
    for (int j = first; j < first + kBatch && j < kCached; ++j) {
      y[j] = zero_bf16x8();
      if (in[j]) {
        y[j] = rmsnorm_chunk_y<true, kResidual>(a, c[j], k[j], w[j], r);
        if (a.out) store_chunk_bf16<true>(a.out + row * n, c[j], n, y[j]);
      }
    }
  }
  quantize_group_chunks<Format>(d, row, n, c, in, y);
  // Past the register cache: the same with re-read chunks; the trip count is uniform in the block.
  const int rounds = (chunks + kRmsnormThreads - 1) / kRmsnormThreads;
  for (int i = kCached; i < rounds; ++i) {
    const int c = t + i * kRmsnormThreads;
    const bool in = c < chunks;
    Bf16x8 y = zero_bf16x8();
    if (in) {
      y = rmsnorm_reload_y<true, kResidual>(a, row, c, r);
      if (a.out) store_chunk_bf16<true>(a.out + row * n, c, n, y);
    }
    quantize_group_chunk<Format>(d, row, c, n, in, y);
  }
  run_zero_job(z);
}

}  // namespace

void rmsnorm_fp8_fused_launch(const RmsnormFp8Params& p, const RmsnormFp8Buffers& b, void* stream) {
  auto* s = static_cast<hipStream_t>(stream);
  const RmsnormArgs a = rmsnorm_args(p, b, p.write_out ? b.out : nullptr);
  const Fp8Outputs d{b.q, b.scales, p.rows, p.scale_format, p.layout};
  const auto blocks = static_cast<unsigned>(p.rows);
  if (p.zero_bytes % 16 != 0) throw InputError("rmsnorm_fp8: zero_bytes must be a multiple of 16");
  const ZeroJob z{static_cast<uint4*>(b.zero), p.zero_bytes / 16};
  with_fp8_format(p.flavour, [&](auto format) {
    using Format = decltype(format);
    with_rmsnorm_variant(p, [&](auto vector, auto residual, auto cached) {
      constexpr bool kVector = decltype(vector)::value;
      constexpr bool kResidual = decltype(residual)::value;
      constexpr int kCached = decltype(cached)::value;
      if (p.granularity == Fp8Granularity::per_token) {
        rmsnorm_fp8_token_kernel<Format, kVector, kResidual, kCached><<<blocks, kRmsnormThreads, 0, s>>>(a, d, z);
      } else if constexpr (kVector) {  // per 1x128: hidden is a multiple of 128
        rmsnorm_fp8_group_kernel<Format, kVector, kResidual, kCached><<<blocks, kRmsnormThreads, 0, s>>>(a, d, z);
      }
    });
  });
  gpu_check_launch("rmsnorm_fp8_fused_kernel");
}

}  // namespace fb
