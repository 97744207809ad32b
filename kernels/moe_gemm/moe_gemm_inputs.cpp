#include "kernels/moe_gemm/moe_gemm_inputs.hpp"

#include <vector>

#include "kernels/moe_sort_mxfp4/moe_sort_mxfp4_math.hpp"
#include "reference/codecs/bf16.hpp"

namespace fb {

void make_mx_weights(std::uint64_t seed, std::uint64_t stream, std::int64_t rows, std::int64_t cols, double sigma,
                     std::uint8_t* codes, std::uint8_t* scales) {
  const std::int64_t blocks = cols / kMxBlock;
  // Block by block, so the bf16 weights never exist whole (an m31 W13 is 1.2 G elements).
#pragma omp parallel for schedule(static) if (rows * cols >= (1 << 16))
  for (std::int64_t r = 0; r < rows; ++r) {
    for (std::int64_t y = 0; y < blocks; ++y) {
      float v[kMxBlock];
      std::uint32_t amax = 0;
      for (std::int64_t i = 0; i < kMxBlock; ++i) {
        const std::int64_t c = y * kMxBlock + i;
        const auto index = static_cast<std::uint64_t>(r * cols + c);
        v[i] = bf16_to_float(bf16_from_float(static_cast<float>(sigma * draw(Distribution::normal, seed, stream, index, c))));
        const std::uint32_t m = float_bits(v[i]) & 0x7FFFFFFFu;
        amax = m > amax ? m : amax;
      }
      const std::uint8_t s = mx_scale_byte(amax, MxScaleRule::roundup);
      const float inverse = e8m0_inverse(s);
      for (std::int64_t j = 0; j < kMxBlock / 2; ++j)
        codes[r * cols / 2 + y * 16 + j] = e2m1_pack(e2m1_from_float(v[2 * j] * inverse, Fp4Rounding::rne),
                                                     e2m1_from_float(v[2 * j + 1] * inverse, Fp4Rounding::rne));
      scales[r * blocks + y] = s;
    }
  }
}

namespace {

// The edge bytes of one token's rows (its e2m1 row at stage 1; its k rows at stage 2) and of the
// scales at its sorted positions.
void apply_edge_token(const MoeGemmParams& p, MoeStage stage, std::int64_t token, const std::vector<std::int64_t>& pos,
                      const MoeSortedActivations& out) {
  const std::int64_t cols = stage == MoeStage::stage1 ? p.hidden : p.inter;
  const std::int64_t blocks = cols / kMxBlock, pad = (blocks + 7) / 8 * 8;
  const std::int64_t first_row = stage == MoeStage::stage1 ? token : token * p.topk;
  const std::int64_t rows = stage == MoeStage::stage1 ? 1 : p.topk;
  const int kind = static_cast<int>(token % 8);
  for (std::int64_t r = first_row; r < first_row + rows; ++r) {
    std::uint8_t* row = out.xq + r * cols / 2;
    for (std::int64_t y = 0; y < blocks; ++y) {
      std::uint8_t* block = row + 16 * y;
      for (int j = 0; j < 16; ++j) {
        if (kind == 1 && y % 2 == 0) block[j] = 0x00;                                      // zero blocks
        if (kind == 2) block[j] = static_cast<std::uint8_t>((y + j) % 3 == 0 ? 0x77 : 0xF7);  // all +-6
        if (kind == 5) block[j] = 0x08;                                                    // -0, +0
      }
    }
  }
  if (kind != 3 && kind != 4) return;
  for (std::int64_t s = 0; s < p.topk; ++s) {
    const std::int64_t q = pos[static_cast<std::size_t>(token * p.topk + s)];
    if (q < 0) continue;
    for (std::int64_t y = 0; y < blocks; ++y)
      out.scales[mx_scale_addr(q, y, pad)] = static_cast<std::uint8_t>(kind == 3 ? y % 4 : 167 + (y + s) % 8);
  }
}

}  // namespace

void make_moe_sorted_activations(const MoeGemmParams& p, MoeStage stage, MoeRouting routing, Distribution dist,
                                 double sigma, std::uint64_t seed, std::int32_t* topk_ids,
                                 const MoeSortedActivations& out) {
  MoeSortMxfp4Params sp = p.sort_params(stage);
  sp.buf_cols = 0;  // the GEMM does not use moe_buf
  std::vector<float> weights(static_cast<std::size_t>(p.pairs()));
  make_moe_routing(sp, routing, seed, topk_ids, weights.data());
  moe_sort_validate_ids(sp, topk_ids);

  TensorSpec x_spec{"x", DType::bf16, {{"rows", sp.rows()}, {"cols", sp.cols}}};
  HostTensor x(x_spec);
  fill_tensor(x, dist == Distribution::outliers ? dist : Distribution::normal, seed, stage == MoeStage::stage1 ? 21 : 22,
              sigma);
  std::vector<float> sorted_weights(out.sorted_weights ? 0 : static_cast<std::size_t>(sp.max_entries()));
  std::vector<std::int32_t> chunk_counts(static_cast<std::size_t>(sp.chunks() * sp.experts));
  std::vector<std::int32_t> expert_info(static_cast<std::size_t>(MoeExpertInfoLayout{sp.experts}.words()));
  std::vector<std::uint8_t> row_scales(static_cast<std::size_t>(sp.rows() * sp.scale_cols()));
  std::uint16_t moe_buf_dummy = 0;
  MoeSortMxfp4Buffers b;
  b.topk_ids = topk_ids;
  b.topk_weights = weights.data();
  b.x = x.data<std::uint16_t>();
  b.sorted_token_ids = out.sorted_token_ids;
  b.sorted_weights = out.sorted_weights ? out.sorted_weights : sorted_weights.data();
  b.sorted_expert_ids = out.sorted_expert_ids;
  b.num_valid_ids = out.num_valid_ids;
  b.moe_buf = &moe_buf_dummy;
  b.xq = out.xq;
  b.scales = out.scales;
  b.chunk_counts = chunk_counts.data();
  b.expert_info = expert_info.data();
  b.row_scales = row_scales.data();
  moe_sort_mxfp4_chain_emu(sp, b);
  if (dist != Distribution::edge && dist != Distribution::nan) return;

  std::vector<std::int64_t> pos(static_cast<std::size_t>(p.pairs()), -1);
  for (std::int64_t q = 0; q < out.num_valid_ids[0]; ++q) {
    const std::int32_t entry = out.sorted_token_ids[q];
    if (moe_entry_token(entry) < p.tokens)
      pos[static_cast<std::size_t>(moe_entry_token(entry) * p.topk + moe_entry_slot(entry))] = q;
  }
  if (dist == Distribution::nan) {
    const std::int64_t q = pos[static_cast<std::size_t>((p.tokens / 2) * p.topk)];
    out.scales[mx_scale_addr(q, 0, sp.scale_cols_pad())] = 0xFF;
    return;
  }
  for (std::int64_t t = 0; t < p.tokens; ++t) apply_edge_token(p, stage, t, pos, out);
}

}  // namespace fb
