// The arithmetic of F5, shared by every kernel and the CPU emulation (host and device, FB_HD), so
// that both compute each byte the same way (docs/numeric-contract.md#number-formats, #moe-sort and
// #mxfp4-activation-quant):
//   entry  = (slot << 24) | token; sentinel (k << 24) | T with weight +0.0
//   padded = ceil(count / B) * B for an expert with tokens, 0 without
//   amax   = integer max of |x| as fp32 bit patterns over 32 elements (exact, order-free, keeps NaN)
//   s      = e8m0_scale_from_amax(amax, rule)           (reference/codecs/e8m0.hpp)
//   code   = e2m1_from_float(x * 2^(127 - s), rounding) (reference/codecs/e2m1.hpp; exact multiply)
//   addr(p, y) = (p/32)*(32*Npad) + (y/8)*256 + (y%4)*64 + (p%16)*4 + ((y%8)/4)*2 + (p%32)/16
// Nothing here rounds except the codecs.
#pragma once

#include "kernels/fp8_quant/fp8_quant_math.hpp"
#include "kernels/moe_sort_mxfp4/moe_sort_mxfp4.hpp"
#include "reference/codecs/bf16.hpp"
#include "reference/codecs/e2m1.hpp"
#include "reference/codecs/e8m0.hpp"

namespace fb {

// ---- MoE sort ----

FB_HD std::int32_t moe_sort_entry(std::int64_t token, std::int64_t slot) {
  return static_cast<std::int32_t>((static_cast<std::uint32_t>(slot) << 24) | static_cast<std::uint32_t>(token));
}

FB_HD std::int32_t moe_sort_sentinel(std::int64_t tokens, std::int64_t topk) { return moe_sort_entry(tokens, topk); }

FB_HD std::int64_t moe_entry_token(std::int32_t entry) { return static_cast<std::uint32_t>(entry) & 0xFFFFFFu; }
FB_HD std::int64_t moe_entry_slot(std::int32_t entry) { return static_cast<std::uint32_t>(entry) >> 24; }

FB_HD std::int64_t moe_padded_count(std::int64_t count, std::int64_t block) {
  return (count + block - 1) / block * block;
}

// An id the sort places: inside [0, E) and not masked. (The validator rejects ids outside [0, E);
// the kernels skip them anyway rather than write out of bounds.)
FB_HD bool moe_expert_routed(std::int32_t e, std::int64_t experts, const std::int32_t* mask) {
  return e >= 0 && e < experts && (mask == nullptr || mask[e] != 0);
}

// The largest i in [0, n) with table[i] <= q, for a non-decreasing table with table[0] <= q.
// With table = expert starts (or padding starts) and q below the total, this is the expert that
// owns position q: an expert with an empty run has the same start as its successor.
FB_HD std::int64_t moe_owner(const std::int32_t* table, std::int64_t n, std::int64_t q) {
  std::int64_t lo = 0, hi = n;  // table[lo] <= q, answer in [lo, hi)
  while (hi - lo > 1) {
    const std::int64_t mid = (lo + hi) / 2;
    if (table[mid] <= q)
      lo = mid;
    else
      hi = mid;
  }
  return lo;
}

// The scan packs three per-expert quantities into one 64-bit word, so a single exclusive scan
// gives all three prefixes: padded count (bits 0-31; the total stays below 2^31 by validation),
// routed-expert flag (bits 32-42; at most 1024 experts) and padding count (bits 43-63; at most
// 1024 * 127 in total).
FB_HD std::uint64_t moe_scan_pack(std::int64_t padded, bool routed, std::int64_t padding) {
  return static_cast<std::uint64_t>(padded) | (static_cast<std::uint64_t>(routed ? 1 : 0) << 32) |
         (static_cast<std::uint64_t>(padding) << 43);
}
FB_HD std::int32_t moe_scan_padded(std::uint64_t v) { return static_cast<std::int32_t>(v & 0xFFFFFFFFu); }
FB_HD std::int32_t moe_scan_routed(std::uint64_t v) { return static_cast<std::int32_t>((v >> 32) & 0x7FFu); }
FB_HD std::int32_t moe_scan_padding(std::uint64_t v) { return static_cast<std::int32_t>(v >> 43); }

// ---- MXFP4 quant ----

FB_HD std::uint8_t mx_scale_byte(std::uint32_t amax_bits, MxScaleRule rule) {
  return e8m0_scale_from_amax(bits_float(amax_bits), rule);
}

// Two bf16 of one word -> one byte of two e2m1 codes (element 2j in the low nibble).
FB_HD std::uint32_t mx_quantize_bf16x2(std::uint32_t w, float inverse, Fp4Rounding rounding) {
  const std::uint8_t lo = e2m1_from_float(bits_float(w << 16) * inverse, rounding);
  const std::uint8_t hi = e2m1_from_float(bits_float(w & 0xFFFF0000u) * inverse, rounding);
  return e2m1_pack(lo, hi);
}

// 8 bf16 -> 4 bytes, little-endian in one word (byte j holds elements 2j and 2j+1).
FB_HD std::uint32_t mx_quantize_bf16x8(std::uint32_t w0, std::uint32_t w1, std::uint32_t w2, std::uint32_t w3,
                                      float inverse, Fp4Rounding rounding) {
  return mx_quantize_bf16x2(w0, inverse, rounding) | (mx_quantize_bf16x2(w1, inverse, rounding) << 8) |
         (mx_quantize_bf16x2(w2, inverse, rounding) << 16) | (mx_quantize_bf16x2(w3, inverse, rounding) << 24);
}

// ---- sorted, swizzled scales ----

FB_HD std::int64_t mx_scale_addr(std::int64_t p, std::int64_t y, std::int64_t cols_pad) {
  return (p / 32) * (32 * cols_pad) + (y / 8) * 256 + (y % 4) * 64 + (p % 16) * 4 + ((y % 8) / 4) * 2 + (p % 32) / 16;
}

// The inverse: which (p, y) a scale byte holds.
struct MxScaleCoord {
  std::int64_t p;
  std::int64_t y;
};

FB_HD MxScaleCoord mx_scale_coord(std::int64_t addr, std::int64_t cols_pad) {
  const std::int64_t tile = addr / (32 * cols_pad), in_tile = addr % (32 * cols_pad);
  const std::int64_t y8 = in_tile / 256, lane = (in_tile % 256) / 4, byte = in_tile % 4;
  return MxScaleCoord{tile * 32 + (byte % 2) * 16 + lane % 16, y8 * 8 + (byte / 2) * 4 + lane / 16};
}

// The word-wise gather (moe_sort_quant_large's last launch): 16-byte slot q of the written tiles is
// 32-row tile q / G, 8-column group Y = q % G (G = Npad / 8, and a tile is G slots of 256 bytes, so
// slot q starts at byte 256 q). Its lane i (0..15) owns rows p = 32 (q / G) + i and p + 16; with
// a and b columns 8Y .. 8Y+7 of those rows' scales (byte j = column 8Y + j), word c (0..3) at byte
// 256 q + 64 c + 4 i holds, by addr(): byte 0 (p, 8Y+c), 1 (p+16, 8Y+c), 2 (p, 8Y+c+4), 3 (p+16, 8Y+c+4).
FB_HD std::uint32_t mx_scale_word(std::uint64_t a, std::uint64_t b, int c) {
  const auto byte = [](std::uint64_t v, int j) { return static_cast<std::uint32_t>(v >> (8 * j)) & 0xFFu; };
  return byte(a, c) | (byte(b, c) << 8) | (byte(a, c + 4) << 16) | (byte(b, c + 4) << 24);
}

// Columns 8Y .. 8Y+7 of one row of per-row scales [rows][K/32], one byte at a time; columns past
// K/32 (the pad of the last group) read 0. (The GPU loads the 8 bytes at once when K/32 % 8 == 0.)
FB_HD std::uint64_t mx_row_scale_group(const std::uint8_t* row, std::int64_t scale_cols, std::int64_t group) {
  std::uint64_t v = 0;
  for (std::int64_t j = 0; j < 8 && 8 * group + j < scale_cols; ++j) v |= static_cast<std::uint64_t>(row[8 * group + j]) << (8 * j);
  return v;
}

// The x row a sorted entry reads: the token (stage 1) or token*k + slot (stage 2).
FB_HD std::int64_t mx_source_row(std::int32_t entry, std::int64_t topk, MoeStage stage) {
  return stage == MoeStage::stage1 ? moe_entry_token(entry) : moe_entry_token(entry) * topk + moe_entry_slot(entry);
}

}  // namespace fb
