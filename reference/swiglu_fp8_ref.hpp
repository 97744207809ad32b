// fp64 reference for SwiGLU and its fp8 producer (F2, docs/numeric-contract.md#swiglu-fp8), and the
// checks of a kernel's outputs against it.
//
// Reference (fp64, exact inputs): swiglu_oai: g = min(gate, 7), u = clamp(up, -7, 7),
// out = g * sigmoid(alpha g) * (u + 1) with alpha the fp32 1.702 the kernel uses; silu:
// out = gate * sigmoid(gate) * up. sigmoid(z) = 1 / (1 + exp(-z)) in fp64, except where the
// contract's fp32 exp(-z) overflows (exp(-z) >= 2^128 (1 - 2^-25), i.e. z < -88.72): there
// 1 + exp(-z) is +inf in fp32 and the contract's sigmoid is exactly 0, and so is the reference's
// (counted and reported; bf16 inputs never sit near that threshold). Bounds, derived (u = 2^-24):
//   out (bf16)    swiglu_out_rel_error(): the project exp (faithful, <= 1 ulp = 2u) of an argument
//                 that carries the rounding of alpha * g (|z| <= 88.73 amplifies it), 1 + E, the
//                 IEEE division (plus 2^-22 where sigmoid is an fp32 subnormal), and the two or
//                 three products; far below 2^-9, so bf16(out) is within 1 ulp of RN_bf16(out_ref).
//                 Subnormal results: fp32 absolute error of a few 2^-150, far below bf16's 2^-133.
//   q, scales     fp8_quant_check_fp64 with eps = compose(rel error of out, 2^-8): the kernel
//                 quantizes bf16(out).
#pragma once

#include <cstdint>
#include <vector>

#include "reference/fp8_quant_ref.hpp"
#include "reference/metrics/bound.hpp"

namespace fb {

struct SwigluRefProblem {
  std::int64_t rows = 0;
  std::int64_t d = 0;
  bool oai = true;  // swiglu_oai, or silu
  Fp8QuantRefLayout quant;
};

struct SwigluRefTensors {
  const std::uint16_t* gate_up = nullptr;  // bf16 [T][2d]
  const std::uint16_t* out = nullptr;      // null when the producer does not write it
  const std::uint8_t* q = nullptr;
  const void* scales = nullptr;
};

// Relative error of the kernel's fp32 activation against fp64, derived from its rounding steps.
double swiglu_out_rel_error(bool oai);

// The fp64 out of one row (d values). Returns how many of them fall where the contract's fp32
// sigmoid is exactly 0 (exp(-z) overflows fp32).
std::int64_t swiglu_ref_row(const SwigluRefProblem& p, const std::uint16_t* gate_up, std::int64_t row, double* out);

std::vector<Fp64Check> swiglu_fp8_check_fp64(const SwigluRefProblem& p, const SwigluRefTensors& t);

}  // namespace fb
