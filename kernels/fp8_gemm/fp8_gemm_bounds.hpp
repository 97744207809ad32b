// The derived error coefficients (beta of reference/fp8_gemm_ref.hpp: a kernel's fp32 result before
// the bf16 rounding is within beta * T of the fp64 value, T = sum |a_s b_s A B|) of each summation
// order of the fp8 GEMMs, with the reasons the reports print. Host only.
#pragma once

#include <cmath>
#include <cstdint>
#include <string>

#include <fmt/format.h>

#include "reference/error_budget.hpp"

namespace fb {

// A matrix unit's fp8 accumulation is not IEEE fp32 and NVIDIA does not document it. Model: one
// k32 step (32 exact products added to the fp32 accumulator) errs by at most 2^-13 of
// (|accumulator in| + sum |products|): 14 retained bits, the lowest figure published for Hopper
// (DeepSeek-V3 report; others measure about 22), so the model is conservative. A 128-K block takes
// 4 steps from zero, so its partial is within 4 * 2^-13 = 2^-11 of its exact value, relative to the
// block's T. The kernels promote each block into an fp32 register (CUDA cores), so no more than
// one block ever sits in the matrix unit's accumulator.
inline constexpr double kMatrixUnitStepRel = 0x1.0p-13;
inline constexpr int kMatrixUnitStepsPerBlock = 4;

// Two epilogue roundings (acc * scale, then * scale): (1 + u)^2 - 1.
inline double epilogue_rel() { return compose_rel(kF32UnitRoundoff, kF32UnitRoundoff); }

// Canonical order (fp8_gemm_math.hpp): at most K/16 + 4 fp32 adds on any product's path.
inline double canonical_beta(std::int64_t k) { return compose_rel(gamma_rel(k / 16 + 4), epilogue_rel()); }
inline std::string canonical_beta_reason(std::int64_t k) {
  return fmt::format("canonical order, gamma_{} (K/16 + 4 fp32 adds per path) and 2 epilogue roundings", k / 16 + 4);
}

// Blocked order: each 128-K block partial (matrix unit, or exact then rounded once to fp32 in the
// emulation) promoted into an fp32 sum over K/128 blocks in order.
inline double matrix_unit_block_rel() { return kMatrixUnitStepsPerBlock * kMatrixUnitStepRel; }
inline double blocked_beta(std::int64_t k) {
  const std::int64_t blocks = (k + 127) / 128;
  return compose_rel(compose_rel(matrix_unit_block_rel(), gamma_rel(blocks)), epilogue_rel());
}
inline std::string blocked_beta_reason(std::int64_t k) {
  return fmt::format("matrix unit, 2^-11 per 128-K block partial (4 k32 steps at 2^-13 each, a conservative model "
                     "of Hopper's fp8 accumulation), gamma_{} over the blocks, 2 epilogue roundings",
                     (k + 127) / 128);
}

// Block-scale GEMM with S split-K slices (fp8_blockscale_math.hpp): a block's dot (128 fp32 adds
// in the canonical order; the matrix unit's 2^-11 in the blocked order), its two scale roundings,
// then at most KB + S fp32 adds (the slice's blocks, then the slices into acc).
inline double blockscale_beta(std::int64_t k, std::int64_t slices, bool matrix_unit) {
  const double dot = matrix_unit ? matrix_unit_block_rel() : gamma_rel(128);
  return compose_rel(compose_rel(dot, epilogue_rel()), gamma_rel(k / 128 + slices));
}
inline std::string blockscale_beta_reason(std::int64_t k, std::int64_t slices, bool matrix_unit) {
  // The promotion rounds the scales' product and then the fma once; the bound keeps two scale
  // roundings (the form before run 58 had three roundings per promotion), which covers it.
  return fmt::format("{} per 128-K block dot, 2 scale roundings, gamma_{} (K/128 block adds + {} slice adds)",
                     matrix_unit ? "matrix unit 2^-11 (4 k32 steps at 2^-13, a conservative model)" : "gamma_128",
                     k / 128 + slices, slices);
}

// Two results, each within beta_i T (1 + 2^-8) + 2^-8 |C| of fp64 (one bf16 rounding each, unit
// roundoff 2^-8), against each other, as a relative L2 norm:
// ||x - y|| <= (beta_x + beta_y)(1 + 2^-8) ||T|| + 2^-7 ||C||, and ||C|| <= ||y|| (1 + 2^-7). ||T|| / ||C|| is not bounded for
// every input (cancellation); for inputs with independent signs, as every generated distribution
// has (normal, uniform, outliers, edge rows), it is about 0.64 sqrt(K), and sqrt(K) is assumed.
inline double pair_rel_l2(double beta_x, double beta_y, std::int64_t k) {
  return ((beta_x + beta_y) * std::sqrt(static_cast<double>(k)) * (1.0 + 0x1.0p-8) + 0x1.0p-7) * (1.0 + 0x1.0p-6);
}

}  // namespace fb
