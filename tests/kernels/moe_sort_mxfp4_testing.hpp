// Test helpers for the F5 family (moe_sort_mxfp4): a problem (routing, mask, x), an emulation run on
// poisoned outputs, and comparisons over the compared region. Header-only: shared by the sort and
// the quant test files.
#pragma once

#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <cstring>
#include <functional>
#include <string>
#include <vector>

#include "core/device.hpp"
#include "core/errors.hpp"
#include "core/inputs.hpp"
#include "core/registry.hpp"
#include "core/session.hpp"
#include "core/verify_runner.hpp"
#include "kernels/moe_sort_mxfp4/moe_sort_mxfp4.hpp"
#include "kernels/moe_sort_mxfp4/moe_sort_mxfp4_inputs.hpp"
#include "kernels/moe_sort_mxfp4/moe_sort_mxfp4_math.hpp"
#include "reference/moe_sort_mxfp4_ref.hpp"

namespace fb::moe_testing {

using EmuFn = void (*)(const MoeSortMxfp4Params&, const MoeSortMxfp4Buffers&);

struct Problem {
  MoeSortMxfp4Params p;
  std::vector<std::int32_t> ids, mask;
  std::vector<float> weights;
  std::vector<std::uint16_t> x;
};

struct Outputs {
  std::vector<std::int32_t> sorted_ids, expert_ids, num_valid;
  std::vector<float> sorted_weights;
  std::vector<std::uint16_t> moe_buf;
  std::vector<std::uint8_t> xq, scales;
};

inline MoeSortMxfp4Params params(std::int64_t T, std::int64_t E, std::int64_t k, std::int64_t K, std::int64_t B,
                          MoeStage stage = MoeStage::stage1) {
  MoeSortMxfp4Params p;
  p.tokens = T;
  p.experts = E;
  p.topk = k;
  p.cols = K;
  p.buf_cols = 64;
  p.block = B;
  p.stage = stage;
  return p;
}

inline Problem make_problem(const MoeSortMxfp4Params& p, MoeRouting routing, MoeMask mask, Distribution dist,
                     std::uint64_t seed) {
  Problem pr{p, std::vector<std::int32_t>(p.pairs()), {}, std::vector<float>(p.pairs()), {}};
  make_moe_routing(p, routing, seed, pr.ids.data(), pr.weights.data());
  HostTensor x({"x", DType::bf16, {{"rows", p.rows()}, {"K", p.cols}}});
  fill_tensor(x, dist, seed, 7);
  pr.x.assign(x.data<std::uint16_t>(), x.data<std::uint16_t>() + p.rows() * p.cols);
  if (dist == Distribution::edge) apply_mx_edge_rows(pr.x.data(), p.rows(), p.cols);
  if (mask != MoeMask::none) {
    pr.p.masked = true;
    pr.mask.resize(static_cast<std::size_t>(p.experts));
    make_moe_mask(p.experts, mask, pr.mask.data());
  }
  return pr;
}

// Runs one emulation on poisoned outputs and a garbage workspace (a GPU workspace is never cleared).
inline Outputs run(const Problem& pr, EmuFn fn, std::uint8_t poison = 0xFF) {
  const MoeSortMxfp4Params& p = pr.p;
  Outputs o;
  const auto fill = [poison](auto& v, std::int64_t n) {
    v.resize(static_cast<std::size_t>(n));
    std::memset(v.data(), poison, v.size() * sizeof(v[0]));
  };
  fill(o.sorted_ids, p.max_entries());
  fill(o.sorted_weights, p.max_entries());
  fill(o.expert_ids, p.max_blocks());
  fill(o.num_valid, 2);
  fill(o.moe_buf, p.tokens * p.buf_cols);
  fill(o.xq, p.rows() * p.cols / 2);
  fill(o.scales, p.scale_rows() * p.scale_cols_pad());
  std::vector<std::int32_t> counts(p.chunks() * p.experts, 0x5A5A5A5A), info(MoeExpertInfoLayout{p.experts}.words(), -7);
  std::vector<std::uint8_t> row_scales(p.rows() * p.scale_cols(), 0xA5);
  const MoeSortMxfp4Buffers b{pr.ids.data(), pr.weights.data(), pr.x.data(), pr.p.masked ? pr.mask.data() : nullptr,
                              o.sorted_ids.data(), o.sorted_weights.data(), o.expert_ids.data(), o.num_valid.data(),
                              o.moe_buf.data(), o.xq.data(), o.scales.data(), counts.data(), info.data(),
                              row_scales.data()};
  fn(p, b);
  return o;
}

template <class T>
inline bool same_bytes(const std::vector<T>& a, const std::vector<T>& b, std::int64_t n) {
  return a.size() >= static_cast<std::size_t>(n) && b.size() >= static_cast<std::size_t>(n) &&
         std::memcmp(a.data(), b.data(), static_cast<std::size_t>(n) * sizeof(T)) == 0;
}

// Raw bytes of every output over the compared region (the region of `want`).
inline void expect_equal_in_region(const MoeSortMxfp4Params& p, const Outputs& got, const Outputs& want, const std::string& what) {
  const std::int64_t valid = want.num_valid[0];
  EXPECT_TRUE(same_bytes(got.num_valid, want.num_valid, 2)) << what;
  EXPECT_TRUE(same_bytes(got.sorted_ids, want.sorted_ids, valid)) << what;
  EXPECT_TRUE(same_bytes(got.sorted_weights, want.sorted_weights, valid)) << what;
  EXPECT_TRUE(same_bytes(got.expert_ids, want.expert_ids, valid / p.block)) << what;
  EXPECT_TRUE(same_bytes(got.moe_buf, want.moe_buf, p.tokens * p.buf_cols)) << what;
  EXPECT_TRUE(same_bytes(got.xq, want.xq, p.rows() * p.cols / 2)) << what;
  EXPECT_TRUE(same_bytes(got.scales, want.scales, (valid + 31) / 32 * 32 * p.scale_cols_pad())) << what;
}

// The sort outputs against the straightforward fp64-side reference, exactly.
inline void expect_sort_matches_reference(const Problem& pr, const Outputs& o, const std::string& what) {
  const MoeSortMxfp4Params& p = pr.p;
  const MoeSortRefProblem rp{p.tokens, p.topk, p.experts, p.block, p.cols, p.buf_cols, p.stage == MoeStage::stage2,
                             p.rule, p.masked ? pr.mask.data() : nullptr};
  const MoeSortRef ref = moe_sort_ref(rp, pr.ids.data(), pr.weights.data());
  ASSERT_EQ(o.num_valid[0], ref.num_valid[0]) << what;
  EXPECT_EQ(o.num_valid[1], ref.num_valid[1]) << what;
  EXPECT_TRUE(same_bytes(o.sorted_ids, ref.sorted_token_ids, ref.num_valid[0])) << what;
  EXPECT_TRUE(same_bytes(o.sorted_weights, ref.sorted_weights, ref.num_valid[0])) << what;
  EXPECT_TRUE(same_bytes(o.expert_ids, ref.sorted_expert_ids, ref.num_valid[0] / p.block)) << what;
}

inline const EmuFn kAllPaths[] = {&moe_sort_mxfp4_chain_emu, &moe_sort_quant_emu, &moe_sort_quant_large_emu};
inline const char* const kPathNames[] = {"chain", "one launch", "four launches"};

// The call throws an InputError whose message contains `needle`.
inline void expect_input_error(const std::function<void()>& f, const std::string& needle) {
  try {
    f();
    ADD_FAILURE() << "accepted; wanted an InputError containing '" << needle << "'";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find(needle), std::string::npos) << e.what();
  }
}

}  // namespace fb::moe_testing
