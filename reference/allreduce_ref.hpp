// fp64 reference for the TP all-reduce (docs/numeric-contract.md#tp-all-reduce) and the check of
// every rank's output against it. s_i = sum_r x_{r,i} in fp64 (exact for R <= 8 bf16 inputs unless
// their exponents span more than 45 binades; then within 7 * 2^-53 relative, far below any bound
// here). u = 2^-24, b = 2^-8 (one bf16 rounding), g_m = m u / (1 - m u). Per element:
//   one_shot, two_shot  |out - s| <= g_{R-1} sum|x| + b (|s| + g_{R-1} sum|x|) + 2^-134
//                       (R - 1 fp32 adds in rank order, one bf16 rounding; 2^-134: half the bf16
//                       subnormal spacing)
//   vendor              |out - s| <= g'_{R-1} sum|x| + R 2^-134, g' with unit b + 2^-23: any tree
//                       of R - 1 adds whose partial sums are rounded to bf16 (after an fp32 add)
//   two_shot_fp8/int4   E(v, A) bounds the quantize-dequantize error of v in a group of amax A:
//                       fp8 e4m3:  (2^-4 + 5u)|v| + 2^-10 S(A)    S(A) = max(A, 1e-10)/448 (1 + 3u)
//                                  (half an e4m3 ulp is <= 2^-4 |t| for normals, 2^-10 below 2^-6)
//                       int4:      3u|v| + (1/2 + 8u) S(A)        S(A) = max(A, 1e-10)/7 (1 + u)
//                       e1 = sum_r E(x_r, A_r) + g_{R-1} sum_r (|x_r| + E(x_r, A_r))   (phase 1)
//                       the requantized fp32 sum: E(|s| + e1, max over the group of |s| + e1)
//                       out: e1 + E2 + b (|s| + e1 + E2) + 2^-134
// Checked as the largest ratio |out - s| / bound over every rank's output (limit 1); NaN fails.
#pragma once

#include <cstdint>
#include <vector>

#include "kernels/allreduce/allreduce.hpp"
#include "reference/metrics/bound.hpp"

namespace fb {

// The derived bound of each element's error for `p.variant`, from the inputs x ([R][n] bf16).
std::vector<double> allreduce_error_bounds(const AllreduceParams& p, const std::uint16_t* x);
// The fp64 sums s ([n]).
std::vector<double> allreduce_ref_sums(const AllreduceParams& p, const std::uint16_t* x);

// "out/derived": every rank's output ([R][n] bf16) against s within the derived bound.
std::vector<Fp64Check> allreduce_check_fp64(const AllreduceParams& p, const std::uint16_t* x, const std::uint16_t* out);

}  // namespace fb
