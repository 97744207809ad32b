// The exact engine's grid on the CPU: every CTA, warp and lane of moe_stage1_exact_kernel and
// moe_stage2_exact_kernel (moe_gemm_stage*.hip) through the same FB_HD warp functions, with the
// scalar block sums in place of the MMA (the two give the same integers: tests). The tests
// compare it with the emulation bitwise, which checks every index the kernels compute.
#include <vector>

#include "kernels/moe_gemm/moe_gemm_exact.hpp"

namespace fb {
namespace {

// The CTA grid of an exact launch: (cols / (per_warp * warps)) x max_blocks, `warps` warps of 32
// lanes. Each CTA stages its sort block's entries (and stage 2's weights) as the kernels do: the
// count clamped to the shape, rows past it as padding.
template <class Warp>
void for_each_warp(const MoeGemmParams& p, const std::int32_t* sorted_token_ids, const float* sorted_weights,
                   const std::int32_t* num_valid_ids, std::int64_t cols, std::int64_t per_warp, Warp warp) {
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
        for (int lane = 0; lane < 32; ++lane)
          warp(by, first, entries.data(), weights.data(), (bx * warps + w) * per_warp, lane);
  }
}

}  // namespace

void moe_stage1_exact_simulate(const MoeGemmParams& p, const MoeStage1Buffers& b, bool narrow) {
  const Stage1Args a{b.sorted_token_ids, b.sorted_expert_ids, b.num_valid_ids, b.xq, b.x_scales, b.w13,
                     b.w13_scales,       b.a1,              p.tokens,        p.topk, p.block, p.hidden, p.inter,
                     p.max_entries()};
  for_each_warp(p, b.sorted_token_ids, nullptr, b.num_valid_ids, p.inter, narrow ? kStage1NarrowCols : kStage1Cols,
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
  for_each_warp(p, b.sorted_token_ids, b.sorted_weights, b.num_valid_ids, p.hidden, 32,
                [&](std::int64_t by, std::int64_t first, const std::int32_t* entries, const float* weights,
                    std::int64_t d0, int lane) {
                  moe_stage2_exact_warp(a, entries, weights, first, b.sorted_expert_ids[by], d0, lane);
                });
  const std::int64_t n = p.tokens * p.hidden;
  for (std::int64_t i = 0; i < n; ++i) {
    b.out[i] = p.shared == MoeSharedMode::fold
                   ? moe_reduce_element<MoeSharedMode::fold>(b.y, b.shared, p.topk, p.hidden, i)
                   : moe_reduce_element<MoeSharedMode::none>(b.y, b.shared, p.topk, p.hidden, i);
    if (p.shared == MoeSharedMode::chain) b.out[i] = moe_finish_chain(b.out[i], b.shared[i]);
  }
}

}  // namespace fb
