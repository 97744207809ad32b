// fp64 reference for the MoE MXFP4 GEMMs (stage 1, stage 2, the shared-expert fold F6) and the
// checks of a kernel's outputs against it.
//
// Reference: every e2m1 value times its e8m0 scale is exact in fp64, and so is each product; the
// dot products, SwiGLU (swiglu_oai / silu, the F2 formulas) and the slot sums are taken in fp64.
// The kernel's error is bounded element by element, derived from its rounding steps (u = 2^-24,
// nb = blocks along the dot product, G = sum over blocks of |S_b * 2^(sa-127) * 2^(sw-127)|):
//   dot         S_b and its scaling by 2^(sa-127) are exact; the weight scale's multiply is exact
//               unless the term is an fp32 subnormal (then <= 2^-150); nb - 1 adds:
//               e_dot <= gamma(nb) G + nb 2^-150
//   fast dot    (kernels/moe_gemm/moe_gemm_fast.hpp) every kept product exact in its operands; each
//               128-K partial within 2^-11 of its sum of |products| (the matrix unit's model, four
//               k32 steps at 2^-13; the emulation rounds it once), ng = ceil(nb / 4) partials added
//               in fp32, then (acc * f_a) * f_w: e_dot <= ((1 + 2^-11)(1 + gamma(ng))(1 + u)^2 - 1) A
//               + D + 2^-150 (1 + f_w), A = sum |a_k w_k|, D = that sum over the dropped blocks' k
//               (a block more than 12 binades below its row's largest scale), f_w = 2^(c_w - 133)
//               (an underflowing first scaling's 2^-150 grows by f_w in the second)
//   stage 1     out = f(g, u): |f(g~, u~) - f(g, u)| <= 1.1 |u'| e_g + |g'| e_u + 1.1 e_g e_u, with
//               |d/dg (g sigmoid(a g))| <= 1.0999 for every a > 0, |g sigmoid| <= |g|, the clamps
//               1-Lipschitz, u' = (|u| + e_u, +1 for oai, at most 8), g' = |g| + e_g (at most 7 for oai);
//               plus the fp32 evaluation (swiglu_out_rel_error) and the bf16 rounding (2^-8
//               relative, 2^-134 absolute). Where the contract's fp32 exp(-z) overflows (z < -88.7)
//               its sigmoid is exactly 0: the fp64 value itself is allowed there.
//   stage 2     p_s = fl(w_s y_s): |w| e_y + u |w| (|y| + e_y) + 2^-150; the slot sum (k adds from
//               +0): gamma(k) sum |p_s|; fold: one more fp32 add; chain: a bf16 rounding of the
//               routed sum, then the fp32 add; finally the bf16 rounding.
// Each check reports the output's plain error statistics and the largest ratio of an element's
// error to its own bound (must be <= 1). NaN and inf are counted and never pass.
#pragma once

#include <cstdint>
#include <vector>

#include "reference/metrics/bound.hpp"
#include "reference/metrics/error_stats.hpp"

namespace fb {

struct MoeGemmRefProblem {
  std::int64_t tokens = 0, topk = 0, experts = 0, block = 32, hidden = 0, inter = 0;
  bool oai = true;
  int shared = 0;     // 0: none, 1: chain, 2: fold (MoeSharedMode)
  bool fast = false;  // the fast variant's dot products (kernels/moe_gemm/moe_gemm_fast.hpp)
};

struct MoeGemmRefInputs {
  const std::int32_t* sorted_token_ids = nullptr;
  const float* sorted_weights = nullptr;   // stage 2
  const std::int32_t* sorted_expert_ids = nullptr;
  const std::int32_t* num_valid_ids = nullptr;
  const std::uint8_t* act = nullptr;       // xq [T][K/2] or a2q [T*k][I/2]
  const std::uint8_t* act_scales = nullptr;
  const std::uint8_t* weights = nullptr;   // w13 [E][2I][K/2] or w2 [E][K][I/2]
  const std::uint8_t* weight_scales = nullptr;
  const std::uint16_t* shared = nullptr;   // bf16 [T][K] (F6)
};

// token_mask: T bytes, nonzero = the token is checked (nullptr: every token).
std::vector<Fp64Check> moe_stage1_check_fp64(const MoeGemmRefProblem& p, const MoeGemmRefInputs& in,
                                             const std::uint16_t* a1, const std::uint8_t* token_mask);
std::vector<Fp64Check> moe_stage2_check_fp64(const MoeGemmRefProblem& p, const MoeGemmRefInputs& in,
                                             const std::uint16_t* out, const std::uint8_t* token_mask);

// The plain error of a stage-2 output against fp64 (F6 compares the fold's with the chain's).
ErrorStats moe_stage2_error(const MoeGemmRefProblem& p, const MoeGemmRefInputs& in, const std::uint16_t* out,
                            const std::uint8_t* token_mask);

}  // namespace fb
