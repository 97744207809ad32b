// SwiGLU -> fp8 quant, chain (what F2 replaces): the plain SwiGLU kernel writes the bf16 out; the
// existing fp8 quant kernel (kernels/fp8_quant, F9's fused single pass) reads it back and writes
// fp8 bytes and scales.
//
// swiglu_kernel: elementwise over all T * d/8 chunks, flat, 4 chunks per thread (8 independent
// 16-byte loads issued before any compute), consecutive threads on consecutive chunks. Arithmetic:
// swiglu_fp8_math.hpp, shared with the fused producer and the CPU emulation.
#include "kernels/common/gpu_check.hpp"
#include "kernels/fp8_quant/fp8_quant_device.hpp"
#include "kernels/swiglu_fp8/swiglu_fp8_device.hpp"

namespace fb {
namespace {

constexpr int kThreads = 256;
constexpr int kUnroll = 4;

template <bool kOai, bool kVector>
__global__ __launch_bounds__(kThreads) void swiglu_kernel(const std::uint16_t* gate_up, std::uint16_t* out,
                                                          std::int64_t rows, std::int64_t d) {
  const std::int64_t per_row = swiglu_chunks_per_row(d);
  const std::int64_t total = rows * per_row;
  const std::int64_t first = static_cast<std::int64_t>(blockIdx.x) * (kThreads * kUnroll) + threadIdx.x;
  // Load every chunk first (NOTE: out may alias gate_up as far as the compiler knows, so loads
  // issued after a store could not be hoisted above it).
  GateUpChunk in[kUnroll];
#pragma unroll
  for (int u = 0; u < kUnroll; ++u) {
    const std::int64_t v = first + u * kThreads;
    if (v < total) in[u] = load_gate_up<kVector>(gate_up, v / per_row, v % per_row, d);
  }
#pragma unroll
  for (int u = 0; u < kUnroll; ++u) {
    const std::int64_t v = first + u * kThreads;
    if (v >= total) continue;
    const std::int64_t row = v / per_row, c = v % per_row;
    store_chunk_bf16<kVector>(out + row * d, c, d, swiglu_chunk<kOai, kVector>(in[u], c, d));
  }
}

}  // namespace

void swiglu_launch(const SwigluFp8Params& p, const SwigluFp8Buffers& b, void* stream) {
  auto* s = static_cast<hipStream_t>(stream);
  const unsigned blocks = grid_for(p.rows * swiglu_chunks_per_row(p.d), kThreads * kUnroll);
  with_swiglu_variant(p, [&](auto oai, auto vector) {
    swiglu_kernel<decltype(oai)::value, decltype(vector)::value>
        <<<blocks, kThreads, 0, s>>>(b.gate_up, b.out, p.rows, p.d);
  });
  gpu_check_launch("swiglu_kernel");
}

void swiglu_fp8_chain_launch(const SwigluFp8Params& p, const SwigluFp8Buffers& b, void* stream) {
  swiglu_launch(p, b, stream);
  Fp8QuantBuffers qb;
  qb.x = b.out;
  qb.q = b.q;
  qb.scales = b.scales;
  fp8_quant_fused_launch(p.quant(), qb, stream);
}

}  // namespace fb
