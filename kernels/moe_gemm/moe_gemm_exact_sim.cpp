// The exact engine's grids on the CPU: every CTA, warp and lane of moe_stage1_exact_kernel and
// moe_stage2_exact_kernel (moe_gemm_stage*.hip) through the same FB_HD warp functions, with the
// scalar block sums in place of the MMA (the two give the same integers: tests), and every CTA and
// wave of the AMD engine's kernels (moe_gemm_mfma.hip) through its FB_HD wave functions, with the
// integer MFMA simulated from its layout. The tests compare them with the emulation bitwise, which
// checks every index the kernels compute.
#include <array>
#include <vector>

#include "kernels/moe_gemm/moe_gemm_exact.hpp"
#include "kernels/moe_gemm/moe_gemm_mfma_wave.hpp"

namespace fb {
namespace {

// The CTA grid of an exact launch: (cols / (per_warp * warps)) x max_blocks, `warps` warps, each
// called for lanes 0 .. lanes - 1 (the warp kernels: 32, a lane a call; the MFMA waves: 1 call for
// all 64 lanes). Each CTA stages its sort block's entries (and stage 2's weights) as the kernels
// do: the count clamped to the shape, rows past it as padding.
template <class Warp>
void for_each_warp(const MoeGemmParams& p, const std::int32_t* sorted_token_ids, const float* sorted_weights,
                   const std::int32_t* num_valid_ids, std::int64_t cols, std::int64_t per_warp, int lanes, Warp warp) {
  const int warps = moe_exact_warps(cols, per_warp);
  const std::int64_t valid = moe_valid_entries(num_valid_ids[0], p.max_entries());
#pragma omp parallel for schedule(dynamic, 1)
  for (std::int64_t by = 0; by < p.max_blocks(); ++by) {
    const std::int64_t first = by * p.block;
    if (first >= valid) continue;
    std::vector<std::int32_t> entries(static_cast<std::size_t>(p.block));
    std::vector<float> weights(static_cast<std::size_t>(p.block));
    for (std::int64_t r = 0; r < p.block; ++r) {
      const bool live = first + r < valid;
      entries[static_cast<std::size_t>(r)] = live ? sorted_token_ids[first + r] : kPadEntry;
      weights[static_cast<std::size_t>(r)] = live && sorted_weights ? sorted_weights[first + r] : 0.0f;
    }
    for (std::int64_t bx = 0; bx < cols / (per_warp * warps); ++bx)
      for (int w = 0; w < warps; ++w)
        for (int lane = 0; lane < lanes; ++lane)
          warp(by, first, entries.data(), weights.data(), (bx * warps + w) * per_warp, lane);
  }
}

// Stage 2's reduction launch (and the chain's add), as every engine ends.
void reduce(const MoeGemmParams& p, const MoeStage2Buffers& b) {
  const std::int64_t n = p.tokens * p.hidden;
  for (std::int64_t i = 0; i < n; ++i) {
    b.out[i] = p.shared == MoeSharedMode::fold
                   ? moe_reduce_element<MoeSharedMode::fold>(b.y, b.shared, p.topk, p.hidden, i)
                   : moe_reduce_element<MoeSharedMode::none>(b.y, b.shared, p.topk, p.hidden, i);
    if (p.shared == MoeSharedMode::chain) b.out[i] = moe_finish_chain(b.out[i], b.shared[i]);
  }
}

}  // namespace

void moe_stage1_exact_simulate(const MoeGemmParams& p, const MoeStage1Buffers& b, bool narrow) {
  const Stage1Args a{b.sorted_token_ids, b.sorted_expert_ids, b.num_valid_ids, b.xq, b.x_scales, b.w13,
                     b.w13_scales,       b.a1,              p.tokens,        p.topk, p.block, p.hidden, p.inter,
                     p.max_entries()};
  for_each_warp(p, b.sorted_token_ids, nullptr, b.num_valid_ids, p.inter, narrow ? kStage1NarrowCols : kStage1Cols, 32,
                [&](std::int64_t by, std::int64_t first, const std::int32_t* entries, const float*, std::int64_t n0,
                    int lane) {
                  const std::int64_t e = b.sorted_expert_ids[by];
                  if (narrow && p.oai)
                    moe_stage1_exact_warp<true, true>(a, entries, first, e, n0, lane);
                  else if (narrow)
                    moe_stage1_exact_warp<false, true>(a, entries, first, e, n0, lane);
                  else if (p.oai)
                    moe_stage1_exact_warp<true>(a, entries, first, e, n0, lane);
                  else
                    moe_stage1_exact_warp<false>(a, entries, first, e, n0, lane);
                });
}

void moe_stage2_exact_simulate(const MoeGemmParams& p, const MoeStage2Buffers& b) {
  const Stage2Args a{b.sorted_token_ids, b.sorted_weights, b.sorted_expert_ids, b.num_valid_ids, b.a2q,
                     b.a2_scales,        b.w2,             b.w2_scales,         b.y,             p.tokens,
                     p.topk,             p.block,          p.hidden,            p.inter,
                     p.max_entries()};
  for_each_warp(p, b.sorted_token_ids, b.sorted_weights, b.num_valid_ids, p.hidden, 32, 32,
                [&](std::int64_t by, std::int64_t first, const std::int32_t* entries, const float* weights,
                    std::int64_t d0, int lane) {
                  moe_stage2_exact_warp(a, entries, weights, first, b.sorted_expert_ids[by], d0, lane);
                });
  reduce(p, b);
}

// D = A B over the instruction's (or the two instructions') k, with A[i][k] and B[k][j] gathered
// from the lanes where the layout puts them: lane l gives row / column mfma_operand_row(l) and
// k = per * mfma_operand_group(l) + e from its operand byte e (per = 8 for the K=32 form; for the
// K=16 form, 4 from the low half of its 64 bits in the first instruction, the high half in the
// second); lane l receives D[mfma_result_row(l, r)][mfma_result_col(l)].
template <bool kK32>
void MoeMfmaSimulated<kK32>::block_sums(const std::uint64_t (&a)[kMfmaWaveLanes], const std::uint64_t (&b)[kMfmaWaveLanes],
                                        std::int32_t (&d)[kMfmaWaveLanes][4]) {
  constexpr int kPer = kK32 ? 8 : 4, kK = 4 * kPer, kInstructions = kK32 ? 1 : 2;
  std::array<std::array<std::int32_t, kMfmaTile>, kMfmaTile> D{};
  for (int inst = 0; inst < kInstructions; ++inst) {
    std::array<std::array<std::int32_t, kK>, kMfmaTile> A{}, B{};  // A[row][k], B[column][k]
    for (int l = 0; l < kMfmaWaveLanes; ++l)
      for (int e = 0; e < kPer; ++e) {
        const int k = kPer * mfma_operand_group(l) + e, byte = kPer * inst + e;
        const auto rc = static_cast<std::size_t>(mfma_operand_row(l));
        A[rc][static_cast<std::size_t>(k)] = static_cast<std::int8_t>(a[l] >> (8 * byte));
        B[rc][static_cast<std::size_t>(k)] = static_cast<std::int8_t>(b[l] >> (8 * byte));
      }
    for (std::size_t i = 0; i < kMfmaTile; ++i)
      for (std::size_t j = 0; j < kMfmaTile; ++j)
        for (std::size_t k = 0; k < kK; ++k) D[i][j] += A[i][k] * B[j][k];
  }
  for (int l = 0; l < kMfmaWaveLanes; ++l)
    for (int r = 0; r < 4; ++r)
      d[l][r] = D[static_cast<std::size_t>(mfma_result_row(l, r))][static_cast<std::size_t>(mfma_result_col(l))];
}
template struct MoeMfmaSimulated<true>;
template struct MoeMfmaSimulated<false>;

void moe_stage1_mfma_simulate(const MoeGemmParams& p, const MoeStage1Buffers& b, bool k32) {
  const Stage1Args a{b.sorted_token_ids, b.sorted_expert_ids, b.num_valid_ids, b.xq, b.x_scales, b.w13,
                     b.w13_scales,       b.a1,              p.tokens,        p.topk, p.block, p.hidden, p.inter,
                     p.max_entries()};
  for_each_warp(p, b.sorted_token_ids, nullptr, b.num_valid_ids, p.inter, kMfmaStage1Cols, 1,
                [&](std::int64_t by, std::int64_t first, const std::int32_t* entries, const float*, std::int64_t n0, int) {
                  const std::int64_t e = b.sorted_expert_ids[by];
                  if (k32 && p.oai)
                    moe_stage1_mfma_wave<kMfmaWaveLanes, true, MoeMfmaSimulated<true>>(a, entries, first, e, n0, 0);
                  else if (k32)
                    moe_stage1_mfma_wave<kMfmaWaveLanes, false, MoeMfmaSimulated<true>>(a, entries, first, e, n0, 0);
                  else if (p.oai)
                    moe_stage1_mfma_wave<kMfmaWaveLanes, true, MoeMfmaSimulated<false>>(a, entries, first, e, n0, 0);
                  else
                    moe_stage1_mfma_wave<kMfmaWaveLanes, false, MoeMfmaSimulated<false>>(a, entries, first, e, n0, 0);
                });
}

void moe_stage2_mfma_simulate(const MoeGemmParams& p, const MoeStage2Buffers& b, bool k32) {
  const Stage2Args a{b.sorted_token_ids, b.sorted_weights, b.sorted_expert_ids, b.num_valid_ids, b.a2q,
                     b.a2_scales,        b.w2,             b.w2_scales,         b.y,             p.tokens,
                     p.topk,             p.block,          p.hidden,            p.inter,
                     p.max_entries()};
  for_each_warp(p, b.sorted_token_ids, b.sorted_weights, b.num_valid_ids, p.hidden, kMfmaStage2Cols, 1,
                [&](std::int64_t by, std::int64_t first, const std::int32_t* entries, const float* weights,
                    std::int64_t d0, int) {
                  const std::int64_t e = b.sorted_expert_ids[by];
                  if (k32)
                    moe_stage2_mfma_wave<kMfmaWaveLanes, MoeMfmaSimulated<true>>(a, entries, weights, first, e, d0, 0);
                  else
                    moe_stage2_mfma_wave<kMfmaWaveLanes, MoeMfmaSimulated<false>>(a, entries, weights, first, e, d0, 0);
                });
  reduce(p, b);
}

}  // namespace fb
