// CPU emulation of the MoE GEMMs: the kernels' arithmetic (moe_gemm_math.hpp) in their canonical
// order; the fast variant's in its own (moe_gemm_fast.hpp). The GPU kernels tile the work differently, but every output element is one dot product per
// K block in ascending order plus a slot-ordered sum, so the bits do not depend on the tiling.
#include <fmt/format.h>

#include <algorithm>
#include <vector>

#include "core/errors.hpp"
#include "kernels/moe_gemm/moe_gemm.hpp"
#include "kernels/moe_gemm/moe_gemm_fast.hpp"
#include "kernels/moe_gemm/moe_gemm_math.hpp"
#include "kernels/moe_sort_mxfp4/moe_sort_mxfp4_math.hpp"

namespace fb {

MoeSortMxfp4Params MoeGemmParams::sort_params(MoeStage stage) const {
  MoeSortMxfp4Params s;
  s.tokens = tokens;
  s.topk = topk;
  s.experts = experts;
  s.block = block;
  s.cols = stage == MoeStage::stage1 ? hidden : inter;
  s.buf_cols = hidden;
  s.stage = stage;
  return s;
}

void moe_gemm_validate(const MoeGemmParams& p) {
  if (p.tokens < 1 || p.tokens >= (std::int64_t{1} << 24))
    throw InputError(fmt::format("T={} is outside [1, 2^24) (sorted ids keep the token in 24 bits)", p.tokens));
  if (p.topk < 1 || p.topk > 255 || p.topk > p.experts)
    throw InputError(fmt::format("k={} must be in [1, min(255, E={})]", p.topk, p.experts));
  if (p.hidden < 32 || p.hidden % 32 != 0)
    throw InputError(fmt::format("K={} is not a positive multiple of 32 (the MX block)", p.hidden));
  if (p.inter < 32 || p.inter % 32 != 0)
    throw InputError(fmt::format("I={} is not a positive multiple of 32 (the MX block)", p.inter));
  if (p.block < 16 || p.block % 16 != 0 || p.block > 128)
    throw InputError(fmt::format("B={} is not a multiple of 16 in [16, 128] (the mma row tile)", p.block));
}

namespace {

// The dot product of one activation row (its scales at sorted position p) with one weight row.
float mx_dot(const std::uint8_t* a, const std::uint8_t* a_scales, std::int64_t p, std::int64_t cols_pad,
             const std::uint8_t* w, const std::uint8_t* w_scales, std::int64_t blocks) {
  float acc = 0.0f;
  for (std::int64_t y = 0; y < blocks; ++y)
    acc = mx_block_promote(acc, mx_block_sum_quarters(a + 16 * y, w + 16 * y), a_scales[mx_scale_addr(p, y, cols_pad)],
                           w_scales[y]);
  return acc;
}

// The fast variant's dot product (moe_gemm_fast.hpp): each 128-K partial formed exactly and
// rounded once to fp32 (the matrix unit forms it within its bound), the partials added in K order,
// then the two rows' factors.
float mx_dot_fast(const std::uint8_t* a, const std::uint8_t* a_scales, std::int64_t p, std::int64_t cols_pad,
                  const std::uint8_t* w, const std::uint8_t* w_scales, std::int64_t blocks) {
  std::uint32_t ca = 0, cw = 0;
  for (std::int64_t y = 0; y < blocks; ++y) {
    ca = mx_max_scale_byte(ca, a_scales[mx_scale_addr(p, y, cols_pad)]);
    cw = mx_max_scale_byte(cw, w_scales[y]);
  }
  float acc = 0.0f;
  for (std::int64_t y0 = 0; y0 < blocks; y0 += kMxFastGroupBlocks) {
    std::int64_t units = 0;  // the partial in units of 2^-14: value * 2^(u-6) is halves * 2^(u-7)
    for (std::int64_t y = y0; y < std::min<std::int64_t>(y0 + kMxFastGroupBlocks, blocks); ++y) {
      const int ua = mx_fast_shift(a_scales[mx_scale_addr(p, y, cols_pad)], ca), uw = mx_fast_shift(w_scales[y], cw);
      if (ua < 0 || uw < 0) continue;  // a dropped block
      const std::int64_t q = mx_block_sum_quarters(a + 16 * y, w + 16 * y);
      units += q * (std::int64_t{1} << (ua + uw));
    }
    acc = acc + static_cast<float>(units) * 0x1p-14f;
  }
  return mx_fast_finish(acc, mx_fast_row_factor(ca), mx_fast_row_factor(cw));
}

using MxDot = float (*)(const std::uint8_t*, const std::uint8_t*, std::int64_t, std::int64_t, const std::uint8_t*,
                        const std::uint8_t*, std::int64_t);
MxDot dot_of(MoeGemmEngine engine) { return engine == MoeGemmEngine::fast ? &mx_dot_fast : &mx_dot; }

}  // namespace

void moe_stage1_emu(const MoeGemmParams& p, const MoeStage1Buffers& b, const std::uint8_t* token_mask) {
  const std::int64_t valid = b.num_valid_ids[0];
  const std::int64_t I = p.inter, nb = p.hidden_blocks(), row_bytes = p.hidden / 2;
  const MxDot dot = dot_of(p.engine);
#pragma omp parallel for schedule(dynamic, 4)
  for (std::int64_t pos = 0; pos < valid; ++pos) {
    const std::int32_t entry = b.sorted_token_ids[pos];
    const std::int64_t token = moe_entry_token(entry), slot = moe_entry_slot(entry);
    if (token >= p.tokens || (token_mask && !token_mask[token])) continue;  // sentinel, or not checked
    const std::int64_t e = b.sorted_expert_ids[pos / p.block];
    const std::uint8_t* a = b.xq + token * row_bytes;
    std::uint16_t* out = b.a1 + (token * p.topk + slot) * I;
    for (std::int64_t n = 0; n < I; ++n) {
      const std::int64_t gate_row = e * 2 * I + n, up_row = gate_row + I;
      const float gate = dot(a, b.x_scales, pos, p.hidden_blocks_pad(), b.w13 + gate_row * row_bytes,
                                b.w13_scales + gate_row * nb, nb);
      const float up = dot(a, b.x_scales, pos, p.hidden_blocks_pad(), b.w13 + up_row * row_bytes,
                              b.w13_scales + up_row * nb, nb);
      out[n] = bf16_from_float(moe_swiglu(p.oai, gate, up));
    }
  }
}

void moe_stage2_emu(const MoeGemmParams& p, const MoeStage2Buffers& b, const std::uint8_t* token_mask) {
  // Each routed pair's sorted position (the kernels find it the other way round: they walk the
  // sorted positions and write y at row token*k + slot).
  const std::int64_t valid = b.num_valid_ids[0], k = p.topk;
  std::vector<std::int64_t> position(static_cast<std::size_t>(p.pairs()), -1);
  for (std::int64_t pos = 0; pos < valid; ++pos) {
    const std::int32_t entry = b.sorted_token_ids[pos];
    const std::int64_t token = moe_entry_token(entry);
    if (token < p.tokens) position[static_cast<std::size_t>(token * k + moe_entry_slot(entry))] = pos;
  }
  const std::int64_t K = p.hidden, nb = p.inter_blocks(), row_bytes = p.inter / 2;
  const MxDot dot = dot_of(p.engine);
#pragma omp parallel for schedule(dynamic, 1)
  for (std::int64_t t = 0; t < p.tokens; ++t) {
    if (token_mask && !token_mask[t]) continue;
    for (std::int64_t d = 0; d < K; ++d) {
      float sum = 0.0f;
      for (std::int64_t s = 0; s < k; ++s) {
        const std::int64_t pos = position[static_cast<std::size_t>(t * k + s)];
        if (pos < 0) continue;  // not routed (cannot happen for validated routing)
        const std::int64_t e = b.sorted_expert_ids[pos / p.block];
        const std::int64_t w_row = e * K + d;
        const float y = dot(b.a2q + (t * k + s) * row_bytes, b.a2_scales, pos, p.inter_blocks_pad(),
                               b.w2 + w_row * row_bytes, b.w2_scales + w_row * nb, nb);
        sum = sum + b.sorted_weights[pos] * y;
      }
      std::uint16_t& o = b.out[t * K + d];
      switch (p.shared) {
        case MoeSharedMode::none: o = bf16_from_float(sum); break;
        case MoeSharedMode::fold: o = moe_finish_fold(sum, b.shared[t * K + d]); break;
        case MoeSharedMode::chain: o = moe_finish_chain(bf16_from_float(sum), b.shared[t * K + d]); break;
      }
    }
  }
}

}  // namespace fb
