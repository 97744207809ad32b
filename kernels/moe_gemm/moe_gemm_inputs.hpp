// Inputs of the MoE GEMM cases, all seeded through core/inputs.hpp's counter hash:
//   weights      random bf16 (normal, sigma 1/sqrt(fan-in)) quantized on the host to MXFP4 with
//                the landed codecs (roundup scale rule, rne elements): codes [rows][cols/2] and one
//                e8m0 per 32 along a row [rows][cols/32]. Prepared once per point.
//   activations  routing (moe_sort_mxfp4's generator), bf16 rows of the distribution, then the
//                landed moe_sort_mxfp4 chain emulation: sorted ids and weights, expert ids,
//                num_valid_ids, e2m1 rows and swizzled sorted scales, exactly what the GEMMs consume
//                on the device.
//   edge         tokens cycling (token % 8) through: zero blocks; saturated blocks (every code
//                +-6); scales near the bottom of e8m0 (bytes 0..3: subnormal products); scales
//                2^40 up; alternating -0 / +0 codes; the rest unchanged.
//   nan          one scale byte of one routed pair set to 0xFF (NaN): reported, never a pass.
#pragma once

#include <cstdint>
#include <vector>

#include "core/inputs.hpp"
#include "kernels/moe_gemm/moe_gemm.hpp"
#include "kernels/moe_sort_mxfp4/moe_sort_mxfp4_inputs.hpp"

namespace fb {

// rows x cols bf16 weights quantized to MXFP4: codes [rows][cols/2], scales [rows][cols/32].
void make_mx_weights(std::uint64_t seed, std::uint64_t stream, std::int64_t rows, std::int64_t cols, double sigma,
                     std::uint8_t* codes, std::uint8_t* scales);

// What the sort hands the GEMM: the moe_sort_mxfp4 outputs for activation rows of one stage.
struct MoeSortedActivations {
  std::int32_t* sorted_token_ids;   // [max_entries]
  float* sorted_weights;            // [max_entries]; null when the case does not take them
  std::int32_t* sorted_expert_ids;  // [max_blocks]
  std::int32_t* num_valid_ids;      // [2]
  std::uint8_t* xq;                 // e2m1x2 [rows][cols/2]
  std::uint8_t* scales;             // e8m0 swizzled [scale_rows][cols_pad]
};

// Routing (topk_ids [T][k], kept for the fp64 reference), bf16 rows of `dist` scaled by `sigma`,
// and the sort + quant of the stage's rows, then the distribution's edge or NaN bytes.
void make_moe_sorted_activations(const MoeGemmParams& p, MoeStage stage, MoeRouting routing, Distribution dist,
                                 double sigma, std::uint64_t seed, std::int32_t* topk_ids,
                                 const MoeSortedActivations& out);

inline constexpr const char* kMoeEdgeText =
    "tokens cycling (token % 8) through: zero blocks; saturated blocks (all codes +-6); e8m0 scales 0..3 "
    "(subnormal products); scales 2^40 up; alternating -0/+0 codes; unchanged";
inline constexpr const char* kMoeNanText = "one scale byte of one routed pair is 0xFF (NaN): must fail";

}  // namespace fb
