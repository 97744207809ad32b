// fp64 reference for fp8 activation quant (docs/numeric-contract.md#fp8-activation-quant), and the
// check of a kernel's fp8 bytes and scales against it. Used by F9 directly and by every producer
// that writes the same fp8 outputs (F1, F2), with the fp64 values that producer quantizes.
//
// Reference: amax of a group in fp64; ideal scale amax / MAX (or, for e8m0 scales, its power of two
// rounded up); ideal element x / scale clamped to +-MAX, in fp64.
//
// Bounds, derived (u = 2^-24, the fp32 unit roundoff; eps = the relative error of the values the
// kernel quantizes against their fp64 reference, 0 for F9):
//   fp32 scales   rel error <= eps + 2u: fl32(1/MAX) and the product each round once.
//   e8m0 scales   within one power of two of the ideal: the rounded product can cross 2^k.
//   fp8 bytes     <= 1 ulp from RN_fp8(clamp(x / s)) under the kernel's own scale s: x * fl32(1/s)
//                 is within eps + 2u of x / s, far less than fp8's half spacing (2^-4), so it can
//                 cross at most one rounding boundary; 0 ulp with e8m0 scales and eps = 0, where
//                 the multiply by 2^(127-s) is exact.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "reference/codecs/fp8.hpp"
#include "reference/metrics/bound.hpp"

namespace fb {

struct Fp8QuantRefLayout {
  std::int64_t rows = 0;
  std::int64_t cols = 0;
  std::int64_t group_size = 0;   // cols (per token) or 128
  Fp8Flavour flavour = Fp8Flavour::e4m3fn;
  bool k_major_scales = false;   // scales stored [G][M]
  bool e8m0_scales = false;
};

// Writes the fp64 values that row `row` quantizes into out[0..cols).
using RowReference = std::function<void(std::int64_t row, double* out)>;

// The ideal scale of a group with the given fp64 amax (floored at 1e-10, as the contract floors it).
double fp8_scale_ref(double amax, const Fp8QuantRefLayout& layout);

// Checks q (fp8 [rows][cols]) and the scales against the reference. `value_rel_error` is eps above,
// with `value_error_reason` saying where it comes from (empty when eps is 0).
std::vector<Fp64Check> fp8_quant_check_fp64(const Fp8QuantRefLayout& layout, const RowReference& row_ref,
                                            const std::uint8_t* q, const void* scales, double value_rel_error = 0.0,
                                            const std::string& value_error_reason = "");

}  // namespace fb
