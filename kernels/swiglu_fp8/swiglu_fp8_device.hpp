// Device-side SwiGLU code shared by the plain kernel (chain) and the fused producers: one 8-element
// chunk of out from the matching chunks of gate (columns [0, d)) and up (columns [d, 2d)).
#pragma once

#include <type_traits>

#include "kernels/common/bf16_chunks.hpp"
#include "kernels/swiglu_fp8/swiglu_fp8.hpp"
#include "kernels/swiglu_fp8/swiglu_fp8_math.hpp"

namespace fb {

FB_HD std::int64_t swiglu_chunks_per_row(std::int64_t d) { return (d + 7) / 8; }

// The gate and up chunks c of a row: two 16-byte loads (vector path).
struct GateUpChunk {
  Bf16x8 gate;
  Bf16x8 up;
};

template <bool kVector>
__device__ inline GateUpChunk load_gate_up(const std::uint16_t* gate_up, std::int64_t row, std::int64_t c,
                                           std::int64_t d) {
  const std::uint16_t* gate_row = gate_up + row * 2 * d;
  return GateUpChunk{load_chunk<kVector>(gate_row, c, d), load_chunk<kVector>(gate_row + d, c, d)};
}

// bf16 out of one chunk: 8 activations, one bf16 rounding each.
template <bool kOai, bool kVector>
__device__ inline Bf16x8 swiglu_chunk(const GateUpChunk& in, std::int64_t c, std::int64_t d) {
  float gate[8], up[8], out[8];
  widen(in.gate, gate);
  widen(in.up, up);
#pragma unroll
  for (int j = 0; j < 8; ++j) out[j] = swiglu_value<kOai>(gate[j], up[j]);
  return pack_bf16x8<kVector>(out, c, d);
}

// Activation and access path as template arguments.
template <class Fn>
void with_swiglu_variant(const SwigluFp8Params& p, Fn&& fn) {
  const bool oai = p.activation == SwigluActivation::swiglu_oai;
  const bool vector = p.d % 8 == 0;
  if (oai && vector)
    fn(std::true_type{}, std::true_type{});
  else if (oai)
    fn(std::true_type{}, std::false_type{});
  else if (vector)
    fn(std::false_type{}, std::true_type{});
  else
    fn(std::false_type{}, std::false_type{});
}

}  // namespace fb
