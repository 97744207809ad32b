// Device-side SwiGLU code shared by the plain kernel (chain) and the fused producers: one 8-element
// chunk of out from the matching chunks of gate (columns [0, d)) and up (columns [d, 2d)).
#pragma once

#include <type_traits>

#include "kernels/common/bf16_chunks.hpp"
#include "kernels/swiglu_fp8/swiglu_fp8.hpp"
#include "kernels/swiglu_fp8/swiglu_fp8_math.hpp"
#include "reference/math/ieee_reciprocal.hpp"

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

// swiglu_oai's clamps on packed bf16 inputs, where the hardware has a NaN-keeping bf16x2 min/max
// (NVIDIA sm_80+): one instruction per pair instead of a compare and select per element. Exact:
// +-7 are bf16 values and a clamp commutes with the widening. A NaN stays NaN (as the canonical
// NaN; NaN bytes are free where the input was NaN, semantics section 2, and NVIDIA's arithmetic
// would canonicalise it anyway).
#if defined(__CUDA_ARCH__)
#define FB_SWIGLU_PACKED_CLAMPS 1
__device__ inline std::uint32_t min_nan_bf16x2(std::uint32_t a, std::uint32_t b) {
  std::uint32_t d;
  asm("min.NaN.bf16x2 %0, %1, %2;" : "=r"(d) : "r"(a), "r"(b));
  return d;
}

__device__ inline std::uint32_t max_nan_bf16x2(std::uint32_t a, std::uint32_t b) {
  std::uint32_t d;
  asm("max.NaN.bf16x2 %0, %1, %2;" : "=r"(d) : "r"(a), "r"(b));
  return d;
}

__device__ inline GateUpChunk clamp_oai_chunk(GateUpChunk in) {
  constexpr std::uint32_t kPlus7 = 0x40E040E0u, kMinus7 = 0xC0E0C0E0u;  // bf16 +7 and -7, twice
  uint4& g = in.gate.words;
  uint4& u = in.up.words;
  g = make_uint4(min_nan_bf16x2(g.x, kPlus7), min_nan_bf16x2(g.y, kPlus7), min_nan_bf16x2(g.z, kPlus7),
                 min_nan_bf16x2(g.w, kPlus7));
  u = make_uint4(max_nan_bf16x2(min_nan_bf16x2(u.x, kPlus7), kMinus7),
                 max_nan_bf16x2(min_nan_bf16x2(u.y, kPlus7), kMinus7),
                 max_nan_bf16x2(min_nan_bf16x2(u.z, kPlus7), kMinus7),
                 max_nan_bf16x2(min_nan_bf16x2(u.w, kPlus7), kMinus7));
  return in;
}
#else
#define FB_SWIGLU_PACKED_CLAMPS 0
#endif

// bf16 out of one chunk: 8 activations, one bf16 rounding each.
template <bool kOai, bool kVector>
__device__ inline Bf16x8 swiglu_chunk(const GateUpChunk& in, std::int64_t c, std::int64_t d) {
  float gate[8], up[8], out[8];
  if constexpr (kOai && FB_SWIGLU_PACKED_CLAMPS) {
#if FB_SWIGLU_PACKED_CLAMPS
    const GateUpChunk clamped = clamp_oai_chunk(in);
    widen(clamped.gate, gate);
    widen(clamped.up, up);
    // All 8 denominators first, then their IEEE reciprocals: without the division's range guard
    // when all 8 are below 2^126 (any gate above -51.3: one test and branch per chunk), else by
    // division. The guard's per-element branch would also fence one element from the next.
    float denominator[8];
    bool in_range = true;
#pragma unroll
    for (int j = 0; j < 8; ++j) {
      denominator[j] = swiglu_oai_denominator(gate[j]);
      in_range = in_range && denominator[j] < kIeeeReciprocalRangeLimit;
    }
    float sigmoid[8];
    if (in_range) {
#pragma unroll
      for (int j = 0; j < 8; ++j) sigmoid[j] = ieee_reciprocal_in_range(denominator[j]);
    } else {
#pragma unroll
      for (int j = 0; j < 8; ++j) sigmoid[j] = 1.0f / denominator[j];
    }
#pragma unroll
    for (int j = 0; j < 8; ++j) out[j] = swiglu_oai_from_sigmoid(gate[j], up[j], sigmoid[j]);
#endif
  } else {
    widen(in.gate, gate);
    widen(in.up, up);
#pragma unroll
    for (int j = 0; j < 8; ++j) out[j] = swiglu_value<kOai>(gate[j], up[j]);
  }
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
