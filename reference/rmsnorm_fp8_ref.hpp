// fp64 reference for Gemma RMSNorm (+ residual) and its fp8 producer (F1,
// docs/numeric-contract.md#gemma-rmsnorm-fp8), and the checks of a kernel's outputs against it.
//
// Reference (fp64, exact inputs): s = x + residual (exact in fp64); y = s / sqrt(mean(s^2) + eps)
// * (offset + w), with eps the fp32 value the kernel is given. Bounds, derived (u = 2^-24):
//   residual_out  0 ulp: bf16(fl32(x + res)) is RN_bf16(x + res). Two bf16 whose exponents differ
//                 by <= 15 add exactly in fp32; otherwise the smaller is < 2^-15 of the larger and
//                 can move neither the fp32 nor the bf16 result across a bf16 midpoint.
//   out (bf16)    rmsnorm_y_rel_error() bounds fp32 y against fp64 (sum of squares: longest add
//                 path of the canonical order, then / n, + eps, sqrt, 1/x, s*r, o+w, the product);
//                 it is far below 2^-9, so bf16(y) is within 1 ulp of RN_bf16(y_ref).
//   q, scales     fp8_quant_check_fp64 with eps = compose(rel error of y, 2^-8): the kernel
//                 quantizes bf16(y), one more bf16 rounding of y.
// Not covered: rows whose fp32 sum of squares overflows (|s| beyond ~1.8e19 / sqrt(n)); the
// contract computes in fp32 there and no input distribution produces them.
#pragma once

#include <cstdint>
#include <vector>

#include "reference/fp8_quant_ref.hpp"
#include "reference/metrics/bound.hpp"

namespace fb {

struct RmsnormRefProblem {
  std::int64_t rows = 0;
  std::int64_t hidden = 0;
  bool residual = true;
  double weight_offset = 1.0;
  double eps = 1e-6;  // the fp32 eps the kernel uses, widened
  Fp8QuantRefLayout quant;
};

struct RmsnormRefTensors {
  const std::uint16_t* x = nullptr;
  const std::uint16_t* residual = nullptr;      // null without residual
  const std::uint16_t* weight = nullptr;
  const std::uint16_t* residual_out = nullptr;  // null without residual
  const std::uint16_t* out = nullptr;           // null when the producer does not write it
  const std::uint8_t* q = nullptr;
  const void* scales = nullptr;
};

// Relative error of the kernel's fp32 y against the fp64 y, derived from the canonical order.
double rmsnorm_y_rel_error(std::int64_t hidden, bool residual, double eps);

// The fp64 s and y of one row (each of `hidden` values).
void rmsnorm_ref_row(const RmsnormRefProblem& p, const RmsnormRefTensors& t, std::int64_t row, double* s, double* y);

std::vector<Fp64Check> rmsnorm_fp8_check_fp64(const RmsnormRefProblem& p, const RmsnormRefTensors& t);

}  // namespace fb
