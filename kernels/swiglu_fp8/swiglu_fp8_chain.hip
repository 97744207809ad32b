// SwiGLU -> fp8 quant, chain (what F2 replaces): the plain SwiGLU kernel writes the bf16 out; the
// existing fp8 quant kernel (kernels/fp8_quant, F9's fused single pass) reads it back and writes
// fp8 bytes and scales.
//
// swiglu_kernel: rows of chunks, laid out as in the fused producer (32 to 256 threads per row, the
// fewest that hold it in 3 chunks each; thread t takes chunks t, t + R, t + 2R, then the next
// three), every load of a round issued before any compute. Row and chunk come from the block and
// thread ids: no 64-bit divide per chunk (the flat mapping this replaced paid two, which made the
// baseline slower than it needs to be). Arithmetic: swiglu_fp8_math.hpp, shared with the fused
// producer and the CPU emulation.
#include "kernels/common/gpu_check.hpp"
#include "kernels/fp8_quant/fp8_quant_device.hpp"
#include "kernels/swiglu_fp8/swiglu_fp8_device.hpp"

namespace fb {
namespace {

constexpr int kThreads = 256;
constexpr int kUnroll = 3;

template <bool kOai, bool kVector, int kRowThreads>
__global__ __launch_bounds__(kThreads) void swiglu_kernel(const std::uint16_t* gate_up, std::uint16_t* out,
                                                          std::int64_t rows, std::int64_t d) {
  const std::int64_t row =
      static_cast<std::int64_t>(blockIdx.x) * (kThreads / kRowThreads) + threadIdx.x / kRowThreads;
  if (row >= rows) return;
  const int t = static_cast<int>(threadIdx.x % kRowThreads);
  const int chunks = static_cast<int>(swiglu_chunks_per_row(d));
  for (int base = t; base < chunks; base += kUnroll * kRowThreads) {
    // NOTE: out may alias gate_up as far as the compiler knows, so loads issued after a store could
    // not be hoisted above it: every load of the round goes first.
    GateUpChunk in[kUnroll];
#pragma unroll
    for (int u = 0; u < kUnroll; ++u) {
      const int c = base + u * kRowThreads;
      if (c < chunks) in[u] = load_gate_up<kVector>(gate_up, row, c, d);
    }
#pragma unroll
    for (int u = 0; u < kUnroll; ++u) {
      const int c = base + u * kRowThreads;
      if (c < chunks) store_chunk_bf16<kVector>(out + row * d, c, d, swiglu_chunk<kOai, kVector>(in[u], c, d));
    }
  }
}

}  // namespace

void swiglu_launch(const SwigluFp8Params& p, const SwigluFp8Buffers& b, void* stream) {
  auto* s = static_cast<hipStream_t>(stream);
  with_swiglu_variant(p, [&](auto oai, auto vector) {
    with_row_threads(swiglu_chunks_per_row(p.d), kUnroll, [&](auto row_threads) {
      constexpr int kRowThreads = decltype(row_threads)::value;
      swiglu_kernel<decltype(oai)::value, decltype(vector)::value, kRowThreads>
          <<<grid_for(p.rows, kThreads / kRowThreads), kThreads, 0, s>>>(b.gate_up, b.out, p.rows, p.d);
    });
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
