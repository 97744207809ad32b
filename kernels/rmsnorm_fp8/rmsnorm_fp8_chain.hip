// RMSNorm -> fp8 quant, chain (what F1 replaces): the plain norm kernel writes residual_out and
// the bf16 out; the existing fp8 quant kernel (kernels/fp8_quant, F9's fused single pass) then
// reads out back and writes fp8 bytes and scales.
//
// rmsnorm_kernel: one block of 256 threads per row, 16-byte loads and stores, the row held in
// registers between the canonical sum of squares and the output (rmsnorm_fp8_device.hpp).
// Arithmetic: rmsnorm_fp8_math.hpp, shared with the fused producer and the CPU emulation.
#include "kernels/common/gpu_check.hpp"
#include "kernels/rmsnorm_fp8/rmsnorm_fp8_device.hpp"

namespace fb {
namespace {

template <bool kVector, int kCached>
__global__ __launch_bounds__(kRmsnormThreads) void rmsnorm_kernel(RmsnormArgs a) {
  __shared__ float sum_scratch[kCanonicalScratch];
  const std::int64_t row = blockIdx.x;
  const std::int64_t chunks = rmsnorm_chunks(a.hidden);
  std::uint16_t* out_row = a.out + row * a.hidden;

  float s[kCached][8];
  Bf16x8 w[kCached];
  const float r = rmsnorm_pass_a<kVector, kCached>(a, row, s, w, sum_scratch);

#pragma unroll
  for (int k = 0; k < kCached; ++k) {
    const std::int64_t c = threadIdx.x + static_cast<std::int64_t>(k) * kRmsnormThreads;
    if (c < chunks) store_chunk_bf16<kVector>(out_row, c, a.hidden, rmsnorm_chunk_y(a, c, s[k], w[k], r));
  }
  for (std::int64_t c = threadIdx.x + kCached * kRmsnormThreads; c < chunks; c += kRmsnormThreads)
    store_chunk_bf16<kVector>(out_row, c, a.hidden, rmsnorm_chunk_y_reread<kVector>(a, row, c, r));
}

}  // namespace

void rmsnorm_launch(const RmsnormFp8Params& p, const RmsnormFp8Buffers& b, void* stream) {
  auto* s = static_cast<hipStream_t>(stream);
  const RmsnormArgs a = rmsnorm_args(p, b, b.out);
  const auto blocks = static_cast<unsigned>(p.rows);
  with_cached_chunks(p.hidden, [&](auto cached) {
    if (p.hidden % 8 == 0)
      rmsnorm_kernel<true, decltype(cached)::value><<<blocks, kRmsnormThreads, 0, s>>>(a);
    else
      rmsnorm_kernel<false, decltype(cached)::value><<<blocks, kRmsnormThreads, 0, s>>>(a);
  });
  gpu_check_launch("rmsnorm_kernel");
}

void rmsnorm_fp8_chain_launch(const RmsnormFp8Params& p, const RmsnormFp8Buffers& b, void* stream) {
  rmsnorm_launch(p, b, stream);
  Fp8QuantBuffers qb;
  qb.x = b.out;
  qb.q = b.q;
  qb.scales = b.scales;
  fp8_quant_fused_launch(p.quant(), qb, stream);
}

}  // namespace fb
