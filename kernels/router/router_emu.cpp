// CPU emulation of the router kernels: the orders of router_math.hpp, step for step.
#include <fmt/format.h>

#include <cstring>
#include <vector>

#include "core/errors.hpp"
#include "kernels/router/router.hpp"
#include "kernels/router/router_math.hpp"
#include "reference/codecs/bf16.hpp"

namespace fb {
namespace {

float weight_at(const RouterParams& p, const void* w, std::int64_t e, std::int64_t k) {
  const std::int64_t i = e * p.hidden + k;
  if (p.weight == RouterWeight::f32) return static_cast<const float*>(w)[i];
  return bf16_to_float(static_cast<const std::uint16_t*>(w)[i]);
}

// The halving tree over 32 lane values (router_math.hpp, GEMV step 3).
float lane_tree(float* v) {
  for (std::int64_t h = kRouterLanes / 2; h > 0; h /= 2)
    for (std::int64_t l = 0; l < h; ++l) v[l] = v[l] + v[l + h];
  return v[0];
}

// Slice s's partial of (m, e).
float slice_partial(const RouterParams& p, const RouterBuffers& b, std::int64_t s, std::int64_t m, std::int64_t e) {
  float lanes[kRouterLanes] = {};
  const std::int64_t k0 = s * p.slice(), chunks = p.slice() / kRouterChunk;
  const std::uint16_t* x = b.x + m * p.hidden;
  for (std::int64_t c = 0; c < chunks; ++c) {
    float& acc = lanes[c % kRouterLanes];
    for (std::int64_t j = 0; j < kRouterChunk; ++j) {
      const std::int64_t k = k0 + c * kRouterChunk + j;
      acc = acc + router_product(x[k], weight_at(p, b.w, e, k));
    }
  }
  return lane_tree(lanes);
}

float reduced_logit(const RouterParams& p, const float* partials, std::int64_t m, std::int64_t e) {
  const std::int64_t me = p.rows * p.experts;
  float l = partials[m * p.experts + e];
  for (std::int64_t s = 1; s < p.split_k; ++s) l = l + partials[s * me + m * p.experts + e];
  return l;
}

}  // namespace

void router_validate(const RouterParams& p) {
  if (p.rows < 1) throw InputError(fmt::format("M={}: the router needs at least one row", p.rows));
  if (p.experts < kRouterLanes || p.experts % kRouterLanes != 0 || p.experts > kRouterMaxExperts)
    throw InputError(fmt::format("E={} is not a multiple of 32 in [32, 256]", p.experts));
  if (p.split_k < 1 || p.hidden % p.split_k != 0 || p.slice() % kRouterChunk != 0)
    throw InputError(fmt::format("K={} is not split_k={} slices of a multiple of 8", p.hidden, p.split_k));
  if (p.topk < 1 || p.topk > kRouterMaxTopk || p.topk > p.experts)
    throw InputError(fmt::format("topk={} is not in [1, min(8, E)]", p.topk));
}

void router_gate_row_emu(const RouterParams& p, const float* logits, const float* bias, std::int32_t* ids,
                         float* weights) {
  const std::int64_t E = p.experts, V = p.experts_per_lane();
  std::vector<float> prob(static_cast<std::size_t>(E)), score(static_cast<std::size_t>(E));
  if (p.gate == RouterGate::sigmoid_bias) {
    for (std::int64_t e = 0; e < E; ++e) {
      prob[e] = router_sigmoid(logits[e]);
      score[e] = prob[e] + bias[e];
    }
  } else {
    float m = -__builtin_inff();
    for (std::int64_t e = 0; e < E; ++e) m = router_max(m, logits[e]);
    std::vector<float> t(static_cast<std::size_t>(E));
    float lanes[kRouterLanes];
    for (std::int64_t l = 0; l < kRouterLanes; ++l) {
      float s = 0.0f;
      for (std::int64_t i = 0; i < V; ++i) {
        t[l * V + i] = exact_exp(logits[l * V + i] - m);
        s = i == 0 ? t[l * V] : s + t[l * V + i];
      }
      lanes[l] = s;
    }
    const float sum = lane_tree(lanes);
    for (std::int64_t e = 0; e < E; ++e) score[e] = prob[e] = t[e] / sum;
  }
  std::vector<bool> taken(static_cast<std::size_t>(E), false);
  float w[kRouterMaxTopk] = {};
  for (std::int64_t i = 0; i < p.topk; ++i) {
    std::uint64_t best = 0;
    for (std::int64_t e = 0; e < E; ++e) {
      const std::uint64_t c = taken[e] ? 0 : router_candidate(score[e], e);
      best = c > best ? c : best;
    }
    const std::int32_t id = router_candidate_id(best);
    taken[id] = true;
    ids[i] = id;
    w[i] = prob[id];
  }
  router_finish_weights(w, static_cast<int>(p.topk), p.routed_scaling);
  std::memcpy(weights, w, static_cast<std::size_t>(p.topk) * sizeof(float));
}

void router_gemv_emu(const RouterParams& p, const RouterBuffers& b) {
  const std::int64_t me = p.rows * p.experts;
#pragma omp parallel for collapse(2) schedule(static) if (me * p.hidden >= (1 << 22))
  for (std::int64_t m = 0; m < p.rows; ++m)
    for (std::int64_t e = 0; e < p.experts; ++e)
      for (std::int64_t s = 0; s < p.split_k; ++s) b.partials[s * me + m * p.experts + e] = slice_partial(p, b, s, m, e);
}

void router_reduce_emu(const RouterParams& p, const RouterBuffers& b) {
  for (std::int64_t m = 0; m < p.rows; ++m)
    for (std::int64_t e = 0; e < p.experts; ++e) b.logits[m * p.experts + e] = reduced_logit(p, b.partials, m, e);
}

void router_gate_emu(const RouterParams& p, const RouterBuffers& b) {
  for (std::int64_t m = 0; m < p.rows; ++m)
    router_gate_row_emu(p, b.logits + m * p.experts, b.bias, b.topk_ids + m * p.topk, b.topk_weights + m * p.topk);
}

// The fused gate sums the partials itself (the same order as the reduce), keeps the logits (an
// output) and gates them.
void router_gate_partials_emu(const RouterParams& p, const RouterBuffers& b) {
  router_reduce_emu(p, b);
  router_gate_emu(p, b);
}

void router_fused_emu(const RouterParams& p, const RouterBuffers& b) {
  router_gemv_emu(p, b);
  router_gate_partials_emu(p, b);
}

void router_chain_emu(const RouterParams& p, const RouterBuffers& b) {
  router_gemv_emu(p, b);
  router_reduce_emu(p, b);
  router_gate_emu(p, b);
}

}  // namespace fb
