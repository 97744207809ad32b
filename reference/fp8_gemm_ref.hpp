// fp64 reference for the fp8 GEMMs (per token x per channel, and block-scale), and the check of a
// kernel's bf16 C against it, element by element within a budget derived from the sum's magnitude.
//
// Reference: C64[m][n] = sum over K blocks kb of (sum_{k in kb} A[m][k] B[n][k]) a_s(m, kb) b_s(n, kb),
// in fp64 (a per-token x per-channel GEMM is the one-block case with a_s(m), b_s(n)). Alongside,
// T[m][n] = sum over kb of |a_s b_s| sum_{k in kb} |A[m][k] B[n][k]|, the magnitude every rounding
// error of an fp32 sum is proportional to.
//
// Bound (standard model, u = 2^-24): a kernel whose fp32 value before the bf16 rounding is within
// beta * T of C64 (beta: derived by the caller from its order of adds and multiplies, e.g.
// gamma_{K/16+4} composed with two epilogue roundings) writes a bf16 within
//     budget = beta T (1 + 2^-8) + 2^-8 |C64| + 2^-133
// of C64: RN_bf16 (8 significant bits, unit roundoff 2^-8) moves a value by at most 2^-8 of
// itself, and at most 2^-134 (half the smallest bf16 subnormal) in the subnormal range. The check reports |C - C64| / budget per element as its
// "abs" metric ("C/budget"), which must stay <= 1; NaN or inf anywhere fails.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "reference/codecs/fp8.hpp"
#include "reference/metrics/bound.hpp"

namespace fb {

struct Fp8GemmRefProblem {
  std::int64_t rows = 0, cols = 0, depth = 0;  // M, N, K
  Fp8Flavour flavour = Fp8Flavour::e4m3fn;
  const std::uint8_t* a = nullptr;  // fp8 [M][K]
  const std::uint8_t* b = nullptr;  // fp8 [N][K]
  std::int64_t block_k = 0;         // K (per token x per channel) or 128 (block-scale)
  // a_s(m, kb) = a_scale[m * a_stride_m + kb * a_stride_kb]
  const float* a_scale = nullptr;
  std::int64_t a_stride_m = 1, a_stride_kb = 0;
  // b_s(n, kb) = b_scale[(n / b_group_n) * b_stride_n + kb]
  const float* b_scale = nullptr;
  std::int64_t b_group_n = 1, b_stride_n = 1;
};

// Checks the listed rows of c (bf16 [M][N]; every row when `rows` is empty) against C64 within the
// budget above. `beta_reason` says how beta was derived (one line, it goes into the report).
std::vector<Fp64Check> fp8_gemm_check_fp64(const Fp8GemmRefProblem& p, const std::uint16_t* c,
                                           const std::vector<std::int64_t>& rows, double beta,
                                           const std::string& beta_reason);

}  // namespace fb
