// Device-side SwiGLU code shared by the plain kernel (chain) and the fused producers: one 8-element
// chunk of out from the matching chunks of gate (columns [0, d)) and up (columns [d, 2d)).
#pragma once

#include <type_traits>

#include "kernels/common/bf16_chunks.hpp"
#include "kernels/common/block_reduce.hpp"
#include "kernels/fp8_quant/fp8_quant_device.hpp"
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
// NaN; NaN bytes are free where the input was NaN, docs/numeric-contract.md#number-formats, and
// NVIDIA's arithmetic would canonicalise it anyway).
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

// Whether all 8 values are >= the bound (given twice, as a bf16 pair); false where any is NaN.
__device__ inline bool bf16x8_all_at_least(const Bf16x8& v, std::uint32_t bound_x2) {
  const uint4& w = v.words;
  const std::uint32_t m = min_nan_bf16x2(min_nan_bf16x2(w.x, w.y), min_nan_bf16x2(w.z, w.w));
  std::uint32_t all;
  asm("{\n .reg .pred lo, hi;\n setp.ge.bf16x2 lo|hi, %1, %2;\n and.pred lo, lo, hi;\n selp.u32 %0, 1, 0, lo;\n}"
      : "=r"(all)
      : "r"(m), "r"(bound_x2));
  return all != 0;
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
    // Where all 8 gates are at least -51 (one packed test per chunk), the denominators need no
    // clamp and their IEEE reciprocals no range guard; all 8 denominators first, then the
    // reciprocals, in one straight-line block. Otherwise (never in ordinary data) the clamped
    // denominators and IEEE divides.
    float sigmoid[8];
    if (bf16x8_all_at_least(clamped.gate, kSwigluOaiInRangeGateBf16x2)) {
      float denominator[8];
#pragma unroll
      for (int j = 0; j < 8; ++j) denominator[j] = swiglu_oai_denominator_in_range(gate[j]);
#pragma unroll
      for (int j = 0; j < 8; ++j) sigmoid[j] = ieee_reciprocal_in_range(denominator[j]);
    } else {
#pragma unroll
      for (int j = 0; j < 8; ++j) sigmoid[j] = 1.0f / swiglu_oai_denominator(gate[j]);
    }
#pragma unroll
    for (int j = 0; j < 8; ++j) out[j] = swiglu_oai_from_sigmoid(gate[j], up[j], sigmoid[j]);
    // out is NaN only where the arithmetic made one (a NaN input, or -inf * 0 for a gate of -inf).
    if constexpr (kVector) return pack_bf16x8_platform_nan(out);
#endif
  } else {
    widen(in.gate, gate);
    widen(in.up, up);
#pragma unroll
    for (int j = 0; j < 8; ++j) out[j] = swiglu_value<kOai>(gate[j], up[j]);
  }
  return pack_bf16x8<kVector>(out, c, d);
}

// The fused producer's block body (swiglu_fp8_fused.hip, and F3's launch that shares its grid
// with the router GEMV): rows [block * R, (block + 1) * R) of kSwigluRowBlock threads, R =
// kSwigluRowBlock / kRowThreads. The row shape and its reasons: swiglu_fp8_fused.hip.
inline constexpr int kSwigluRowBlock = 256;

template <class Format, bool kOai, bool kVector, int kRowThreads, int kRowCached, bool kPerToken>
__device__ inline void swiglu_fp8_rows(const std::uint16_t* gate_up, std::uint16_t* out, Fp8Outputs dst,
                                       std::int64_t d, unsigned block) {
  __shared__ std::uint32_t max_scratch[kSwigluRowBlock / 32];
  const std::int64_t row =
      static_cast<std::int64_t>(block) * (kSwigluRowBlock / kRowThreads) + threadIdx.x / kRowThreads;
  const int t = static_cast<int>(threadIdx.x % kRowThreads);
  // A spare row (past the last) takes part with no chunks: the per-token max has barriers.
  const bool live = row < dst.rows;
  const int row_chunks = static_cast<int>(swiglu_chunks_per_row(d));
  const int chunks = live ? row_chunks : 0;
  const int rounds = (row_chunks + kRowThreads - 1) / kRowThreads;  // the same in the whole block

  int c[kRowCached];
  bool in[kRowCached];
#pragma unroll
  for (int k = 0; k < kRowCached; ++k) {
    c[k] = t + k * kRowThreads;
    in[k] = c[k] < chunks;
  }
  // Loads, then activations into registers. A row that fills every slot (d = 768 and 3072) takes a
  // copy without the per-chunk bounds tests and zero fills.
  Bf16x8 y[kRowCached];
  auto activations = [&](auto full) {
    constexpr bool kFull = decltype(full)::value;
    GateUpChunk x[kRowCached];
#pragma unroll
    for (int k = 0; k < kRowCached; ++k)
      if (kFull || in[k]) x[k] = load_gate_up<kVector>(gate_up, row, c[k], d);
#pragma unroll
    for (int k = 0; k < kRowCached; ++k)
      y[k] = kFull || in[k] ? swiglu_chunk<kOai, kVector>(x[k], c[k], d) : zero_bf16x8();
  };
  if (chunks == kRowThreads * kRowCached)
    activations(std::true_type{});
  else
    activations(std::false_type{});
  if (out) {  // one test for all chunks: the activation code stays free of it
#pragma unroll
    for (int k = 0; k < kRowCached; ++k)
      if (in[k]) store_chunk_bf16<kVector>(out + row * d, c[k], d, y[k]);
  }
  // Past the register-held chunks (d > 8 * kRowCached * 256): recompute.
  auto recomputed = [&](int cc) {
    const Bf16x8 v = swiglu_chunk<kOai, kVector>(load_gate_up<kVector>(gate_up, row, cc, d), cc, d);
    if (out) store_chunk_bf16<kVector>(out + row * d, cc, d, v);
    return v;
  };

  if constexpr (kPerToken) {
    std::uint32_t amax = 0;
#pragma unroll
    for (int k = 0; k < kRowCached; ++k) amax = max_u32(amax, bf16x8_abs_max_bits(y[k]));  // chunks not held: +0
    for (int i = kRowCached; i < rounds; ++i)
      if (t + i * kRowThreads < chunks) amax = max_u32(amax, bf16x8_abs_max_bits(recomputed(t + i * kRowThreads)));
    amax = grouped_max_u32<kRowThreads>(amax, max_scratch);
    if (!live) return;
    const Fp8Scale scale = fp8_scale_from_amax_bits(amax, Format::kFlavour, dst.format);
    std::uint8_t* q_row = dst.q + row * d;
    // One branch per row on the scale, so the register-held chunks take only the no-NaN encode.
    auto store_held = [&](auto no_nan) {
#pragma unroll
      for (int k = 0; k < kRowCached; ++k)
        if (in[k]) store_chunk_fp8<Format, kVector, decltype(no_nan)::value>(q_row, c[k], d, y[k], scale.inverse);
    };
    if (fp8_inverse_is_finite(scale.inverse))
      store_held(std::true_type{});
    else
      store_held(std::false_type{});
    for (int i = kRowCached; i < rounds; ++i) {
      const int cc = t + i * kRowThreads;
      if (cc < chunks) {
        const Bf16x8 v = swiglu_chunk<kOai, kVector>(load_gate_up<kVector>(gate_up, row, cc, d), cc, d);
        store_chunk_fp8<Format, kVector>(q_row, cc, d, v, scale.inverse);
      }
    }
    if (t == 0) fp8_store_scale(dst.scales, row, scale, dst.format);
  } else {  // d is a multiple of 128, so a group's 16 lanes are in or out together
    static_assert(kRowThreads >= kWidestWave, "the scale dealing needs the wave inside one row");
    quantize_group_chunks<Format>(dst, row, d, c, in, y);
    for (int i = kRowCached; i < rounds; ++i) {
      const int cc = t + i * kRowThreads;
      const bool here = cc < chunks;
      quantize_group_chunk<Format>(dst, row, cc, d, here, here ? recomputed(cc) : zero_bf16x8());
    }
  }
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
