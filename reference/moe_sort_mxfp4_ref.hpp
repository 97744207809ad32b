// fp64 reference for F5 (docs/numeric-contract.md#moe-sort and #mxfp4-activation-quant), and the
// check of a kernel's outputs against it.
//
// Sort: an independent, straightforward implementation (experts ascending; inside an expert the
// tokens ascending, found by scanning every row); its outputs are exact, so the bound is 0.
// Quant: the exact MX definition in fp64. Each block's ideal scale is a power of two from the
// block's amax (no fp32 rounding); each element is dequantized as e2m1(code) * s with the kernel's
// own scale s and compared with the fp64 input in units of half an e2m1 step at |x / s| (0.25
// below 2, 0.5 below 4, 1 above: the spacing of the e2m1 grid there, halved). Bounds:
//   scales     0 powers of two, every rule:
//              roundup  fl32(amax * fl32(1/6)) lands on the power of two of amax/6 or stays on its
//                       side: fl32(1/6) is 3e-8 high and the product rounds by at most 6e-8, while
//                       an fp32 amax is 8e-8 from 6 * 2^j unless it equals it (then both are exact)
//              even     the bit recipe is the exponent of amax rounded to a power of two at
//                       mantissa 1.75, minus 2, clamped to [0, 254] (254 also where the rounding
//                       reaches 2^128): integer exact
//              floor    amax / 4 is exact in fp32 for a bf16 amax (8 significant bits, even as an
//                       fp32 subnormal): floor(log2 amax) - 2, byte 0 below 2^-124
//   elements   roundup  <= 1 half step: s >= amax / 6 so |x/s| <= 6 and the code is a nearest value
//              even     <= 1 half step: |x/s| < 7; past 6 it saturates, |x/s| - 6 < 1 (the top half step)
//              floor    <= 2 half steps: |x/s| < 8; saturation error < 2 (twice the top half step)
// Rows that no sorted position reads have no stored scale: their bytes are checked against the
// chain only (bitwise), not here.
#pragma once

#include <cstdint>
#include <vector>

#include "reference/codecs/e8m0.hpp"
#include "reference/metrics/bound.hpp"

namespace fb {

struct MoeSortRefProblem {
  std::int64_t tokens = 0;
  std::int64_t topk = 0;
  std::int64_t experts = 0;
  std::int64_t block = 32;
  std::int64_t cols = 0;      // K
  std::int64_t buf_cols = 0;  // D
  bool stage2 = false;        // rows are token*k + slot
  MxScaleRule rule = MxScaleRule::roundup;
  const std::int32_t* expert_mask = nullptr;
};

struct MoeSortRef {
  std::vector<std::int32_t> sorted_token_ids;   // num_valid[0] entries
  std::vector<float> sorted_weights;
  std::vector<std::int32_t> sorted_expert_ids;  // num_valid[0] / B entries
  std::int32_t num_valid[2] = {0, 0};
};

MoeSortRef moe_sort_ref(const MoeSortRefProblem& p, const std::int32_t* topk_ids, const float* topk_weights);

// The scale layout of docs/numeric-contract.md#mxfp4-activation-quant, written out again from the
// formula.
std::int64_t mx_scale_addr_ref(std::int64_t p, std::int64_t y, std::int64_t cols_pad);

// The exact MX scale of a block with fp64 amax under each rule: a power of two (NaN where the
// rule gives the NaN byte 0xFF).
double mx_scale_ref(double amax, MxScaleRule rule);

struct MoeSortMxfp4Outputs {
  const std::int32_t* sorted_token_ids = nullptr;
  const float* sorted_weights = nullptr;
  const std::int32_t* sorted_expert_ids = nullptr;
  const std::int32_t* num_valid_ids = nullptr;
  const std::uint16_t* moe_buf = nullptr;
  const std::uint8_t* xq = nullptr;
  const std::uint8_t* scales = nullptr;
  std::int64_t entries = 0;      // length of sorted_token_ids / sorted_weights
  std::int64_t blocks = 0;       // length of sorted_expert_ids
  std::int64_t scale_bytes = 0;  // length of scales
};

std::vector<Fp64Check> moe_sort_mxfp4_check_fp64(const MoeSortRefProblem& p, const std::int32_t* topk_ids,
                                                 const float* topk_weights, const std::uint16_t* x,
                                                 const MoeSortMxfp4Outputs& out);

}  // namespace fb
