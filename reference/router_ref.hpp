// fp64 reference for the router GEMV and gate (F3, F4; docs/numeric-contract.md#router-gemv-and-gate),
// and the checks of a kernel's outputs against it. u = 2^-24 below.
//
// logits  exact dot products in fp64 (Eigen). Derived bound, per element: the kernel's sum has at
//         most n = [1 product rounding for fp32 W] + 8 ceil(L / 256) lane adds + 5 tree levels
//         + (S - 1) slice adds roundings on any path, so |logit - exact| <= gamma_n * sum_k |x w|
//         with gamma_n = n u / (1 - n u) (the classic recursive-summation bound). Checked as the
//         largest ratio error / bound (limit 1). Also reported: the absolute error and the fp32 ulp
//         distance, and, for unit-scale data, issue 16's absolute target 2e-6.
// weights checked against fp64 weights of the ids the kernel chose, from the kernel's own fp32
//         logits (so the GEMV's error and near-tie choices do not enter). Relative bound per row:
//         sigmoid_bias: p carries exp's 1 ulp (2u) through 1 + E and the division: 4u; the sum of
//         k terms (k - 1)u more, the division u, the exact * 2: 2 * 4u + (k + 1) u.
//         softmax: t_e = exp(l_e - m) carries 2u + |l_e - m| u (the subtraction's rounding scaled by
//         the exponent), the 128-term sum its worst t plus 36u, each p one more u; then as above.
// ids     against the fp64 ranking of fp64 scores (sigmoid in fp64 of the exact logits, plus bias;
//         or the fp64 softmax): a chosen id that differs from the fp64 choice at that rank counts
//         as an error unless the two fp64 scores are within the scores' rounding of each other
//         (a near tie): tol = max slope * (logit bound) + 8u (|p| + |bias| + 1).
#pragma once

#include <cstdint>
#include <vector>

#include "kernels/router/router.hpp"
#include "reference/metrics/bound.hpp"
#include "reference/moe_sort_mxfp4_ref.hpp"

namespace fb {

struct RouterRefTensors {
  const std::uint16_t* x = nullptr;       // bf16 [M][K]
  const void* w = nullptr;                // f32 or bf16 [E][K]
  const float* bias = nullptr;            // [E]
  const float* logits = nullptr;          // the kernel's [M][E]
  const std::int32_t* topk_ids = nullptr;  // [M][k]
  const float* topk_weights = nullptr;    // [M][k]
};

// fp64 logits [M][E] and sum_k |x w| [M][E].
struct RouterRefLogits {
  std::vector<double> logits;
  std::vector<double> magnitude;
};
RouterRefLogits router_ref_logits(const RouterParams& p, const std::uint16_t* x, const void* w);

// gamma_n of the derived logit bound (times sum |x w| per element).
double router_logit_gamma(const RouterParams& p);

// Checks: "logits/derived" (error / bound, limit 1), "logits/abs" (reported; limit 2e-6 when
// `unit_scale`, else the derived bound's largest value), "weights" (error / bound, limit 1),
// "ids" (selection errors outside near ties, limit 0).
std::vector<Fp64Check> router_check_fp64(const RouterParams& p, const RouterRefTensors& t, bool unit_scale);

// F4's sort outputs against the independent sort of reference/moe_sort_mxfp4_ref.hpp (moe_sort_ref)
// of the kernel's own ids and weights: exact (bound 0); moe_buf all zero. (xq and scales unused.)
std::vector<Fp64Check> router_check_sort_fp64(const MoeSortRefProblem& p, const std::int32_t* topk_ids,
                                              const float* topk_weights, const MoeSortMxfp4Outputs& out);

}  // namespace fb
