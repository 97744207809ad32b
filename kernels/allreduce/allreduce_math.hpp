// The arithmetic of the all-reduce, shared by the kernels and the CPU emulation so both compute
// every value the same way (docs/numeric-contract.md#tp-all-reduce):
//   exact     s = (((x_0 + x_1) + x_2) + ... + x_{R-1}) in fp32, rank order; out = bf16(s), RNE
//   quantized per group of 32 (the last group of a rank may be shorter):
//             A = max(1e-10, max |v|)   (integer max on |v| bit patterns: exact, keeps NaN)
//             fp8  e4m3fn:  S = fl(A * fl(1/448)), q = e4m3(fl(v * fl(1 / S))) saturating RNE
//             int4:         S = fl(A / 7),         q = clamp(rne(fl(v * fl(1 / S))), -7, 7), nibble q + 8
//             dequant d = fl(decode(q) * S)
//             phase 1 dequantizes every rank's group and sums in rank order (as exact), phase 2
//             requantizes that fp32 sum, and every rank outputs bf16(dequant) of it.
// No order depends on the launch shape: each element's value is fixed by these lines alone.
#pragma once

#include <cstdint>

#include "kernels/allreduce/allreduce.hpp"
#include "kernels/fp8_quant/fp8_quant_math.hpp"
#include "reference/codecs/bf16.hpp"
#include "reference/codecs/fp8.hpp"

namespace fb {

// One element's sum over ranks, in rank order, in fp32.
FB_HD float allreduce_rank_sum(const AllreduceRankView& v, int ranks, std::int64_t i) {
  float acc = bf16_to_float(v.x[0][i]);
  for (int r = 1; r < ranks; ++r) acc = acc + bf16_to_float(v.x[r][i]);
  return acc;
}

// Round to nearest, ties to even, for |t| < 2^22: adding 1.5 * 2^23 leaves no fraction bits, and
// the fp32 addition itself rounds to nearest even (contraction is off by the build's contract).
FB_HD float allreduce_rint_small(float t) {
  const float magic = 12582912.0f;  // 1.5 * 2^23
  return (t + magic) - magic;
}

// fp8 e4m3fn wire format: one byte per element.
struct AllreduceFp8Wire {
  static constexpr AllreduceVariant kVariant = AllreduceVariant::two_shot_fp8;
  FB_HD static float scale(std::uint32_t amax_bits) {
    return fp8_scale_from_amax_bits(amax_bits, Fp8Flavour::e4m3fn, ScaleFormat::f32).value;
  }
  FB_HD static std::uint32_t encode(float t) { return fp8_encode<Fp8E4m3fnFormat>(t); }
  FB_HD static float decode(std::uint32_t code) { return fp8_decode<Fp8E4m3fnFormat>(static_cast<std::uint8_t>(code)); }
  static constexpr int kBits = 8;
  static constexpr std::uint32_t kZeroCode = 0;
};

// int4 wire format: two elements per byte (element 2k in the low nibble), q + 8 in [1, 15].
struct AllreduceInt4Wire {
  static constexpr AllreduceVariant kVariant = AllreduceVariant::two_shot_int4;
  FB_HD static float scale(std::uint32_t amax_bits) { return bits_float(amax_floor_bits(amax_bits)) / 7.0f; }
  FB_HD static std::uint32_t encode(float t) {
    float q = allreduce_rint_small(t);
    q = q > 7.0f ? 7.0f : q;
    q = q < -7.0f ? -7.0f : q;
    // NaN fails both comparisons and stays NaN: code 0 (value -8), which no finite input makes.
    if (!(q == q)) return 0u;
    return static_cast<std::uint32_t>(static_cast<int>(q) + 8);
  }
  FB_HD static float decode(std::uint32_t code) { return static_cast<float>(static_cast<int>(code & 0xFu) - 8); }
  static constexpr int kBits = 4;
  static constexpr std::uint32_t kZeroCode = 8;
};

// |v| bit patterns' max over the group (NaN sits above every finite pattern and inf).
FB_HD std::uint32_t allreduce_abs_max_bits(const float* v, int n) {
  std::uint32_t m = 0;
  for (int j = 0; j < n; ++j) {
    const std::uint32_t b = float_bits(v[j]) & 0x7FFFFFFFu;
    m = b > m ? b : m;
  }
  return m;
}

// Quantize n <= 32 values into one group (8 words of fp8, 4 of int4; missing elements get the
// code of zero) and return its scale. A NaN in the group makes the scale NaN: every element of the
// group then dequantizes to NaN, so the NaN is reported, never hidden.
template <class Wire>
FB_HD float allreduce_quantize_group(const float* v, int n, std::uint32_t* words) {
  const float s = Wire::scale(allreduce_abs_max_bits(v, n));
  const float inv = 1.0f / s;
  constexpr int kPerWord = 32 / Wire::kBits;
  for (int w = 0; w < static_cast<int>(kAllreduceGroup) / kPerWord; ++w) {
    std::uint32_t word = 0;
    for (int k = 0; k < kPerWord; ++k) {
      const int j = w * kPerWord + k;
      const std::uint32_t code = j < n ? Wire::encode(v[j] * inv) : Wire::kZeroCode;
      word |= code << (k * Wire::kBits);
    }
    words[w] = word;
  }
  return s;
}

// Element j of a quantized group, dequantized.
template <class Wire>
FB_HD float allreduce_dequant(const std::uint32_t* words, float scale, int j) {
  constexpr int kPerWord = 32 / Wire::kBits;
  const std::uint32_t code = (words[j / kPerWord] >> ((j % kPerWord) * Wire::kBits)) & ((1u << Wire::kBits) - 1u);
  return Wire::decode(code) * scale;
}

// Elements in group g of a rank's buffer (the last group may be short).
FB_HD int allreduce_group_size(const AllreduceParams& p, std::int64_t g) {
  const std::int64_t rest = p.elements() - g * kAllreduceGroup;
  return static_cast<int>(rest < kAllreduceGroup ? rest : kAllreduceGroup);
}

FB_HD const std::uint32_t* allreduce_group_words(const std::uint8_t* wire, std::int64_t g, AllreduceVariant v) {
  return reinterpret_cast<const std::uint32_t*>(wire + g * allreduce_group_bytes(v));
}
FB_HD std::uint32_t* allreduce_group_words(std::uint8_t* wire, std::int64_t g, AllreduceVariant v) {
  return reinterpret_cast<std::uint32_t*>(wire + g * allreduce_group_bytes(v));
}

// Phase 0: quantize group g of this rank's input into its wire buffer.
template <class Wire>
FB_HD void allreduce_quantize_input(const AllreduceParams& p, const AllreduceRankView& v, std::int64_t g) {
  const int n = allreduce_group_size(p, g);
  float vals[kAllreduceGroup];
  for (int j = 0; j < n; ++j) vals[j] = bf16_to_float(v.x[v.rank][g * kAllreduceGroup + j]);
  v.wire_scales[v.rank][g] =
      allreduce_quantize_group<Wire>(vals, n, allreduce_group_words(v.wire[v.rank], g, Wire::kVariant));
}

// Phase 1: dequantize group g of every rank, sum in rank order, requantize into this rank's gather buffer.
template <class Wire>
FB_HD void allreduce_reduce_group(const AllreduceParams& p, const AllreduceRankView& v, std::int64_t g) {
  const int n = allreduce_group_size(p, g);
  float acc[kAllreduceGroup];
  for (int r = 0; r < p.ranks; ++r) {
    const std::uint32_t* words = allreduce_group_words(v.wire[r], g, Wire::kVariant);
    const float s = v.wire_scales[r][g];
    for (int j = 0; j < n; ++j) {
      const float d = allreduce_dequant<Wire>(words, s, j);
      acc[j] = r == 0 ? d : acc[j] + d;
    }
  }
  v.gather_scales[v.rank][g] =
      allreduce_quantize_group<Wire>(acc, n, allreduce_group_words(v.gather[v.rank], g, Wire::kVariant));
}

// Phase 2: group g of the slice `owner` reduced, dequantized and rounded to bf16 into this rank's output.
template <class Wire>
FB_HD void allreduce_gather_group(const AllreduceParams& p, const AllreduceRankView& v, int owner, std::int64_t g) {
  const int n = allreduce_group_size(p, g);
  const std::uint32_t* words = allreduce_group_words(v.gather[owner], g, Wire::kVariant);
  const float s = v.gather_scales[owner][g];
  for (int j = 0; j < n; ++j)
    v.out[v.rank][g * kAllreduceGroup + j] = bf16_from_float(allreduce_dequant<Wire>(words, s, j));
}

}  // namespace fb
