// Device-side SwiGLU code shared by the plain kernel (chain) and the fused producers: one 8-element
// chunk of out from the matching chunks of gate (columns [0, d)) and up (columns [d, 2d)).
#pragma once

#include <type_traits>

#include "kernels/common/bf16_chunks.hpp"
#include "kernels/common/gpu_check.hpp"
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
    // All 8 denominators first: they form one straight-line block the scheduler can interleave,
    // where each IEEE divide's slow-path branch would otherwise fence one element from the next.
    float denominator[8];
#pragma unroll
    for (int j = 0; j < 8; ++j) denominator[j] = swiglu_oai_denominator(gate[j]);
#pragma unroll
    for (int j = 0; j < 8; ++j) out[j] = swiglu_oai_from_denominator(gate[j], up[j], denominator[j]);
#endif
  } else {
    widen(in.gate, gate);
    widen(in.up, up);
#pragma unroll
    for (int j = 0; j < 8; ++j) out[j] = swiglu_value<kOai>(gate[j], up[j]);
  }
  return pack_bf16x8<kVector>(out, c, d);
}

// swiglu_oai's sigmoid by table. sigmoid(1.702 g) depends only on the bf16 gate, so a block fills a
// shared-memory table of it once, with the same function, for every gate with 2^-16 <= |g| <= 8
// (after the clamp g <= 7), and its elements look their sigmoid up: the same bits, without the exp
// and the divide per element. A chunk with any gate outside (zero, tiny, below -8, inf, NaN) takes
// the computed path. Index: |g|'s bits from 2^-16 up, plus kSigmoidTableSpan for a negative g.
inline constexpr std::uint32_t kSigmoidTableFirst = 0x3780u;                        // bf16 bits of 2^-16
inline constexpr std::uint32_t kSigmoidTableSpan = 0x4100u - kSigmoidTableFirst + 1;  // up to 8
inline constexpr int kSigmoidTableSize = 2 * static_cast<int>(kSigmoidTableSpan);

__device__ inline float sigmoid_table_gate(int i) {
  const std::uint32_t span = kSigmoidTableSpan;
  const std::uint32_t bits = (static_cast<std::uint32_t>(i) >= span ? 0x8000u : 0u) |
                             (kSigmoidTableFirst + static_cast<std::uint32_t>(i) % span);
  return bits_float(bits << 16);
}

// Every thread of the block must call it (it ends with a barrier).
__device__ inline void fill_sigmoid_table(float* table) {
  for (int i = static_cast<int>(threadIdx.x); i < kSigmoidTableSize; i += static_cast<int>(blockDim.x))
    table[i] = 1.0f / swiglu_oai_denominator(sigmoid_table_gate(i));
  __syncthreads();
}

#if FB_SWIGLU_PACKED_CLAMPS
// swiglu_oai of one chunk with the table; false (and nothing written) when a gate is outside it.
__device__ inline bool swiglu_oai_chunk_by_table(const GateUpChunk& clamped, const float* table,
                                                 float (&out)[8]) {
  std::uint32_t index[8];
  bool inside = true;
#pragma unroll
  for (int j = 0; j < 8; ++j) {
    const std::uint32_t w = word(clamped.gate, j / 2);
    const std::uint32_t h = j % 2 ? w >> 16 : w & 0xFFFFu;
    const std::uint32_t offset = (h & 0x7FFFu) - kSigmoidTableFirst;  // wraps above the span if tiny
    inside = inside && offset < kSigmoidTableSpan;
    index[j] = offset + (h >> 15) * kSigmoidTableSpan;
  }
  if (!inside) return false;
  float gate[8], up[8];
  widen(clamped.gate, gate);
  widen(clamped.up, up);
#pragma unroll
  for (int j = 0; j < 8; ++j) out[j] = (gate[j] * table[index[j]]) * (up[j] + 1.0f);
  return true;
}
#endif

// bf16 out of one chunk with swiglu_oai's sigmoid table where the platform has the packed clamps
// (elsewhere, and for chunks outside the table, the computed path: the same bits).
template <bool kVector>
__device__ inline Bf16x8 swiglu_oai_chunk_with_table(const GateUpChunk& in, std::int64_t c, std::int64_t d,
                                                     const float* table) {
#if FB_SWIGLU_PACKED_CLAMPS
  float out[8];
  if (swiglu_oai_chunk_by_table(clamp_oai_chunk(in), table, out)) return pack_bf16x8<kVector>(out, c, d);
#else
  (void)table;
#endif
  return swiglu_chunk<true, kVector>(in, c, d);
}

// Whether a launch over `row_groups` groups of rows fills the sigmoid table: only where its grid
// is persistent (`table_grid` blocks) and each block then takes many groups, so the fill (about 20
// sigmoids per thread) is paid back; decode-sized launches compute directly.
// The table kernels' persistent grid: kSwigluTableBlocksPerSm blocks of 256 threads per
// multiprocessor, all resident (their launch bounds cap the registers to fit).
inline constexpr int kSwigluTableBlocksPerSm = 3;
inline unsigned swiglu_table_grid() {
  return static_cast<unsigned>(kSwigluTableBlocksPerSm * device_multiprocessors());
}
inline bool swiglu_use_table(const SwigluFp8Params& p, std::int64_t row_groups) {
  return p.activation == SwigluActivation::swiglu_oai && row_groups >= 4 * std::int64_t{swiglu_table_grid()};
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
