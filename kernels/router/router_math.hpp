// The router's arithmetic and its canonical orders, shared by the kernels and the CPU emulation
// (host and device, FB_HD). docs/numeric-contract.md#router-gemv-and-gate.
//
// GEMV, one split-K partial P_s[m][e] (slice s = k in [s L, (s + 1) L), L = K / S):
//   1. the slice is cut into chunks of 8 consecutive k; chunk c goes to virtual lane c % 32;
//   2. each lane starts at +0 and, chunk by chunk in increasing c, element j = 0..7 in order, adds
//      the fp32 product f32(x[m][k]) * f32(W[e][k]) (rounded on its own: no fma; exact for bf16 W);
//   3. the 32 lanes are combined by a halving tree: v[l] = v[l] + v[l + h] for l < h, with
//      h = 16, 8, 4, 2, 1; P_s = v[0].
// The order depends on K, S alone: on the GPU lane l of a 32-thread lane group is virtual lane l,
// and the tree is an xor butterfly (fp32 + commutes, so every lane ends with the tree's value):
// the same on wave32 and wave64, for every block size, grid and row tile.
// Reduce: logit = ((P_0 + P_1) + P_2) + ... + P_{S-1}, starting from P_0 itself (S = 1: P_0).
//
// Gate, one row of E logits (E = 32 V): lane l holds experts l V .. l V + V - 1.
//   sigmoid_bias: p_e = sigmoid(logit_e) (project exp, IEEE division), score_e = p_e + bias_e.
//   softmax:      m = max of the non-NaN logits (order-free: a max of any order, and -0 vs +0
//                 cannot change exp(l - m)), t_e = exp(l_e - m); lane sums over its V experts in
//                 expert order from its first term, then the halving tree over the 32 lanes as
//                 above: sum; p_e = t_e / sum (IEEE division); score_e = p_e.
//   Selection, k rounds: the largest candidate key (router_candidate) among the experts not yet
//   taken. The key orders scores as numbers (-0 = +0), puts NaN below every number, and breaks
//   ties to the lower expert id; keys are distinct, so a max in any order finds the same one.
//   Weights: w_i = p of the i-th chosen; sum = ((w_0 + w_1) + w_2) + ...; w_i = (w_i / sum) * rsf.
#pragma once

#include <cstdint>

#include "reference/codecs/host_device.hpp"
#include "reference/math/exact_exp.hpp"

namespace fb {

// A score as an unsigned key that orders like the number: -0 counts as +0, NaN is below -inf.
FB_HD std::uint32_t router_score_key(float score) {
  std::uint32_t u = float_bits(score);
  if (is_nan_bits(u)) return 0u;
  if (u == 0x80000000u) u = 0u;
  return (u & 0x80000000u) ? ~u : (u | 0x80000000u);
}

// The selection's candidate: the score key above the complemented id, so equal scores prefer the
// lower id. 0 marks an expert already taken (below every real candidate: ~id > 0 for id < 2^32-1).
FB_HD std::uint64_t router_candidate(float score, std::int64_t id) {
  return (static_cast<std::uint64_t>(router_score_key(score)) << 32) | (~static_cast<std::uint32_t>(id));
}

FB_HD std::int32_t router_candidate_id(std::uint64_t c) {
  return static_cast<std::int32_t>(~static_cast<std::uint32_t>(c & 0xFFFFFFFFu));
}

// Eight candidates in descending order (Batcher's odd-even merge sort: 19 compare-exchanges in 6
// layers, no data-dependent branches). The gate sorts each lane's candidates once, so a selection
// round is the max over the lanes' first candidates and a pop, not a search of every slot.
// kComparators < 19 runs only the first ones (a broken network, for the test that shows its check fails).
template <int kComparators = 19>
FB_HD void router_sort_desc8(std::uint64_t (&c)[8]) {
  constexpr int kPairs[19][2] = {{0, 1}, {2, 3}, {4, 5}, {6, 7}, {0, 2}, {1, 3}, {4, 6}, {5, 7}, {1, 2}, {5, 6},
                                 {0, 4}, {1, 5}, {2, 6}, {3, 7}, {2, 4}, {3, 5}, {1, 2}, {3, 4}, {5, 6}};
#if defined(__CUDA_ARCH__) || defined(__HIP_DEVICE_COMPILE__)
#pragma unroll
#endif
  for (int i = 0; i < kComparators; ++i) {  // unrolled on the device: c stays in registers
    const std::uint64_t a = c[kPairs[i][0]], b = c[kPairs[i][1]];
    c[kPairs[i][0]] = a > b ? a : b;
    c[kPairs[i][1]] = a > b ? b : a;
  }
}

// NaN-skipping max (the softmax's m): a NaN never wins, so the result does not depend on order.
FB_HD float router_max(float a, float b) { return (b > a || a != a) ? b : a; }

FB_HD float router_sigmoid(float logit) { return exact_sigmoid(logit); }

// Renormalized, scaled weights in place: w_i = (w_i / sum) * rsf, sum in selection order.
// Loops of the fixed bound 8 (k <= 8) with the test inside, so a device caller's w[8] stays in
// registers (a runtime bound put it, and the gate's chosen ids, in a 64-byte local stack frame);
// the same adds and divisions in the same order as a loop to k.
FB_HD void router_finish_weights(float* w, int k, float rsf) {
  float sum = w[0];
  for (int i = 1; i < 8; ++i)
    if (i < k) sum = sum + w[i];
  for (int i = 0; i < 8; ++i)
    if (i < k) w[i] = (w[i] / sum) * rsf;
}

// The product of one GEMV term: exact widening of both operands, one fp32 multiply.
FB_HD float router_product(std::uint16_t x_bf16, float w) { return bits_float(static_cast<std::uint32_t>(x_bf16) << 16) * w; }

}  // namespace fb
