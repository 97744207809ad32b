// RMSNorm -> fp8 quant, chain (what F1 replaces): the plain norm kernel writes residual_out and
// the bf16 out; the existing fp8 quant kernel (kernels/fp8_quant, F9's fused single pass) then
// reads out back and writes fp8 bytes and scales.
//
// rmsnorm_kernel: one block of 128 threads per row, 16-byte loads and stores, the row held in
// registers between the canonical sum of squares and the output (rmsnorm_fp8_device.hpp).
// Arithmetic: rmsnorm_fp8_math.hpp, shared with the fused producer and the CPU emulation.
#include "kernels/common/gpu_check.hpp"
#include "kernels/rmsnorm_fp8/rmsnorm_fp8_device.hpp"

namespace fb {
namespace {

template <bool kVector, bool kResidual, int kCached>
__global__ __launch_bounds__(kRmsnormThreads) void rmsnorm_kernel(RmsnormArgs a) {
  __shared__ float sum_scratch[kCanonicalScratch];
  const std::int64_t row = blockIdx.x;
  const int chunks = static_cast<int>(rmsnorm_chunks(a.hidden));
  const int t = static_cast<int>(threadIdx.x);
  std::uint16_t* out_row = a.out + row * a.hidden;

  RmsnormChunk k[kCached];
  const float r = rmsnorm_pass_a<kVector, kResidual, kCached>(a, row, k, sum_scratch);
  Bf16x8 w[kCached];
#pragma unroll
  for (int i = 0; i < kCached; ++i) {
    const int c = t + i * kRmsnormThreads;
    if (c < chunks) w[i] = rmsnorm_load_weight<kVector>(a, c);
  }
#pragma unroll
  for (int i = 0; i < kCached; ++i) {
    const int c = t + i * kRmsnormThreads;
    if (c < chunks)
      store_chunk_bf16<kVector>(out_row, c, a.hidden, rmsnorm_chunk_y<kVector, kResidual>(a, c, k[i], w[i], r));
  }
  for (int c = t + kCached * kRmsnormThreads; c < chunks; c += kRmsnormThreads)
    store_chunk_bf16<kVector>(out_row, c, a.hidden, rmsnorm_reload_y<kVector, kResidual>(a, row, c, r));
}

}  // namespace

void rmsnorm_launch(const RmsnormFp8Params& p, const RmsnormFp8Buffers& b, void* stream) {
  auto* s = static_cast<hipStream_t>(stream);
  const RmsnormArgs a = rmsnorm_args(p, b, b.out);
  with_rmsnorm_variant(p, [&](auto vector, auto residual, auto cached) {
    rmsnorm_kernel<decltype(vector)::value, decltype(residual)::value, decltype(cached)::value>
        <<<static_cast<unsigned>(p.rows), kRmsnormThreads, 0, s>>>(a);
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
