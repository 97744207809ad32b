// The vendor variant's extras beyond fp8_gemm.hpp's two entry points (fp8_gemm_vendor.cpp): which
// cuBLASLt form runs a point, and the epilogue launch of the fallback form.
//
// Forms, tried in this order when a point is first planned (cublasLtMatmulAlgoGetHeuristic):
//   outer_vector   one cuBLASLt call, bf16 out, A/B scales OUTER_VEC_32F (per channel, per token);
//   fp32_epilogue  cuBLASLt's fp8 GEMM with unit scales and an fp32 D, then our epilogue kernel
//                  C = bf16((acc * b_scale[n]) * a_scale[m]) (the contract's order): 2 launches.
// A point neither form has an algorithm for is a skip carrying both of cuBLASLt's answers.
#pragma once

#include <string>

#include "kernels/fp8_gemm/fp8_gemm.hpp"

namespace fb {

enum class Fp8GemmVendorForm { none, outer_vector, fp32_epilogue };

// The form that runs the point (none: it cannot; fp8_gemm_vendor_unavailable says why).
Fp8GemmVendorForm fp8_gemm_vendor_form(const Fp8GemmParams& p);
const char* fp8_gemm_vendor_form_name(Fp8GemmVendorForm f);
// Kernel launches one call makes: 2 for fp32_epilogue, else 1.
int fp8_gemm_vendor_launches(const Fp8GemmParams& p);

// The fallback's epilogue (fp8_gemm_vendor_epilogue.hip): c[m][n] = fp8_gemm_epilogue(acc[m][n],
// b_scale[n], a_scale[m]) for the fp32 acc[M][N] cuBLASLt wrote.
void fp8_gemm_vendor_epilogue_launch(const Fp8GemmParams& p, const float* acc, const Fp8GemmBuffers& b, void* stream);

}  // namespace fb
