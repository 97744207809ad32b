// CPU emulation of F4: the router pieces (router_emu.cpp), then the landed sort emulation. The
// fused launch's sort (one-launch table: bitmap ranks) and the chain's (multi-phase: chunk offsets
// plus ranks) place every pair at the contract's position, so one emulation serves both; its
// integer arithmetic has no order to follow.
#include <fmt/format.h>

#include <vector>

#include "core/errors.hpp"
#include "kernels/router/decode_router.hpp"

namespace fb {

MoeSortMxfp4Params DecodeRouterParams::sort() const {
  MoeSortMxfp4Params s;
  s.tokens = router.rows;
  s.topk = router.topk;
  s.experts = router.experts;
  s.block = block;
  s.cols = kMxBlock;  // no quant here; the sort ignores it
  s.buf_cols = buf_cols;
  return s;
}

MoeSortMxfp4Buffers DecodeRouterBuffers::sort() const {
  MoeSortMxfp4Buffers s;
  s.topk_ids = router.topk_ids;
  s.topk_weights = router.topk_weights;
  s.sorted_token_ids = sorted_token_ids;
  s.sorted_weights = sorted_weights;
  s.sorted_expert_ids = sorted_expert_ids;
  s.num_valid_ids = num_valid_ids;
  s.moe_buf = moe_buf;
  s.chunk_counts = chunk_counts;
  s.expert_info = expert_info;
  return s;
}

void decode_router_validate(const DecodeRouterParams& p) {
  router_validate(p.router);
  if (p.router.rows > kDecodeRouterMaxRows)
    throw InputError(fmt::format("T={}: the one-launch decode router takes 1 to 16 tokens", p.router.rows));
  moe_sort_validate_shape(p.sort());
  if (p.shared.cols > 0) {
    if (p.shared.rows != p.router.rows)
      throw InputError(fmt::format("the shared GEMM has {} rows, the router {}", p.shared.rows, p.router.rows));
    if (p.shared.depth <= 0 || p.shared.depth % 16 != 0)
      throw InputError(fmt::format("the shared GEMM's K={} is not a positive multiple of 16", p.shared.depth));
    if (p.shared.flavour != Fp8Flavour::e4m3fn)
      throw InputError("the one-launch decode router runs the shared GEMM in e4m3fn only");
  }
}

namespace {

void sort_emu(const DecodeRouterParams& p, const DecodeRouterBuffers& b) {
  const MoeSortMxfp4Params sp = p.sort();
  std::vector<std::int32_t> counts(static_cast<std::size_t>(sp.chunks() * sp.experts));
  std::vector<std::int32_t> info(static_cast<std::size_t>(MoeExpertInfoLayout{sp.experts}.words()));
  MoeSortMxfp4Buffers sb = b.sort();
  sb.chunk_counts = counts.data();
  sb.expert_info = info.data();
  moe_sort_count_emu(sp, sb);
  moe_sort_scan_emu(sp, sb);
  moe_sort_scatter_emu(sp, sb, true);
}

// F8's part, fused or not: the canonical order (fp8_gemm_small_m's emulation).
void shared_emu(const DecodeRouterParams& p, const DecodeRouterBuffers& b) {
  if (p.shared.cols > 0) fp8_gemm_canonical_emu(p.shared, b.shared);
}

}  // namespace

void decode_router_fused_emu(const DecodeRouterParams& p, const DecodeRouterBuffers& b) {
  router_fused_emu(p.router, b.router);
  sort_emu(p, b);
  shared_emu(p, b);
}

void decode_router_chain_emu(const DecodeRouterParams& p, const DecodeRouterBuffers& b) {
  router_chain_emu(p.router, b.router);
  sort_emu(p, b);
  shared_emu(p, b);
}

}  // namespace fb
