#include "reference/router_ref.hpp"

#include <fmt/format.h>

#include <Eigen/Core>
#include <algorithm>
#include <cmath>
#include <cstring>
#include <numeric>

#include "reference/codecs/bf16.hpp"
#include "reference/metrics/ulp.hpp"

namespace fb {
namespace {

constexpr double kU = 1.0 / 16777216.0;  // 2^-24
// Absolute slack of a weight: where p falls below fp32's normal range (a saturated sigmoid, a far
// softmax tail) its relative error is unbounded, but its absolute error stays below 2^-126, and
// w = (p / sum) rsf carries it times rsf / sum <= 2^6 for rows whose largest chosen p is >= 2^-5.
constexpr double kTiny = 0x1p-120;

using RowMatrix = Eigen::Matrix<double, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;

double gamma(double n) { return n * kU / (1.0 - n * kU); }

// fp64 probabilities of one row of logits (sigmoid, or softmax).
std::vector<double> ref_probabilities(const RouterParams& p, const double* logits) {
  const auto E = static_cast<std::size_t>(p.experts);
  std::vector<double> prob(E);
  if (p.gate == RouterGate::sigmoid_bias) {
    for (std::size_t e = 0; e < E; ++e) prob[e] = 1.0 / (1.0 + std::exp(-logits[e]));
  } else {
    double m = -INFINITY;
    for (std::size_t e = 0; e < E; ++e) m = std::max(m, logits[e]);
    double sum = 0.0;
    for (std::size_t e = 0; e < E; ++e) sum += (prob[e] = std::exp(logits[e] - m));
    for (double& v : prob) v /= sum;
  }
  return prob;
}

}  // namespace

RouterRefLogits router_ref_logits(const RouterParams& p, const std::uint16_t* x, const void* w) {
  RowMatrix X(p.rows, p.hidden), W(p.experts, p.hidden);
  for (std::int64_t i = 0; i < p.rows * p.hidden; ++i) X.data()[i] = bf16_to_float(x[i]);
  for (std::int64_t i = 0; i < p.experts * p.hidden; ++i)
    W.data()[i] = p.weight == RouterWeight::f32 ? static_cast<const float*>(w)[i]
                                                : bf16_to_float(static_cast<const std::uint16_t*>(w)[i]);
  RowMatrix L = X * W.transpose();
  RowMatrix A = X.cwiseAbs() * W.cwiseAbs().transpose();
  RouterRefLogits r;
  r.logits.assign(L.data(), L.data() + L.size());
  r.magnitude.assign(A.data(), A.data() + A.size());
  return r;
}

double router_logit_gamma(const RouterParams& p) {
  const double lane_adds = 8.0 * static_cast<double>((p.slice() + 255) / 256);
  const double n = (p.weight == RouterWeight::f32 ? 1.0 : 0.0) + lane_adds + 5.0 + static_cast<double>(p.split_k - 1);
  return gamma(n);
}

std::vector<Fp64Check> router_check_fp64(const RouterParams& p, const RouterRefTensors& t, bool unit_scale) {
  const RouterRefLogits ref = router_ref_logits(p, t.x, t.w);
  const double g = router_logit_gamma(p);
  const std::int64_t E = p.experts, k = p.topk;

  ErrorAccumulator derived, absolute;
  double worst_bound = 0.0;
  for (std::int64_t i = 0; i < p.rows * E; ++i) {
    const double got = t.logits[i], want = ref.logits[static_cast<std::size_t>(i)];
    const double bound = g * ref.magnitude[static_cast<std::size_t>(i)];
    worst_bound = std::max(worst_bound, bound);
    std::uint32_t bits;
    std::memcpy(&bits, &t.logits[i], 4);
    const bool finite = std::isfinite(got) && std::isfinite(want);
    derived.add(i, finite ? std::abs(got - want) / std::max(bound, 1e-300) : got, 0.0);
    absolute.add(i, got, want, finite ? ulp_distance(UlpFormat::f32, bits, want) : -1);
  }

  // Weights from the kernel's logits and ids; ids against the fp64 ranking.
  ErrorAccumulator weights, ids;
  for (std::int64_t m = 0; m < p.rows; ++m) {
    const float* lrow = t.logits + m * E;
    std::vector<double> lk(lrow, lrow + E);
    const std::vector<double> pk = ref_probabilities(p, lk.data());
    double rel = 0.0;
    if (p.gate == RouterGate::sigmoid_bias) {
      rel = 2.0 * 4.0 * kU + static_cast<double>(k + 1) * kU;
    } else {
      double mx = -INFINITY, spread = 0.0;
      for (double v : lk) mx = std::max(mx, v);
      for (std::int64_t i = 0; i < k; ++i) {
        const std::int32_t id = t.topk_ids[m * k + i];
        if (id >= 0 && id < E) spread = std::max(spread, std::abs(lk[static_cast<std::size_t>(id)] - mx));
      }
      double worst_t = 0.0;
      for (double v : lk) worst_t = std::max(worst_t, 2.0 * kU + std::abs(v - mx) * kU);
      const double rel_p = (2.0 * kU + spread * kU) + (worst_t + 36.0 * kU) + kU;
      rel = 2.0 * rel_p + static_cast<double>(k + 1) * kU;
    }
    double sum = 0.0;
    bool ids_ok = true;
    for (std::int64_t i = 0; i < k; ++i) {
      const std::int32_t id = t.topk_ids[m * k + i];
      ids_ok = ids_ok && id >= 0 && id < E;
      if (ids_ok) sum += pk[static_cast<std::size_t>(id)];
    }
    for (std::int64_t i = 0; i < k; ++i) {
      const std::int32_t id = t.topk_ids[m * k + i];
      const double want = ids_ok ? pk[static_cast<std::size_t>(id)] / sum * static_cast<double>(p.routed_scaling) : NAN;
      const double got = t.topk_weights[m * k + i];
      weights.add(m * k + i, std::isfinite(got) && std::isfinite(want) ? std::abs(got - want) / (rel * std::abs(want) + kTiny)
                                                                       : got * want, 0.0);
    }

    // fp64 scores of the exact logits, ranked (ties to the lower id).
    const double* erow = ref.logits.data() + m * E;
    const std::vector<double> pe = ref_probabilities(p, erow);
    std::vector<double> score(pe);
    double slope = p.gate == RouterGate::sigmoid_bias ? 0.25 : 1.0, lbound = 0.0;
    for (std::int64_t e = 0; e < E; ++e) {
      if (p.gate == RouterGate::sigmoid_bias) score[static_cast<std::size_t>(e)] += t.bias[e];
      lbound = std::max(lbound, g * ref.magnitude[static_cast<std::size_t>(m * E + e)]);
    }
    std::vector<std::int32_t> order(static_cast<std::size_t>(E));
    std::iota(order.begin(), order.end(), 0);
    std::stable_sort(order.begin(), order.end(), [&](std::int32_t a, std::int32_t b) { return score[a] > score[b]; });
    std::int64_t errors = 0;
    bool nan = false;
    for (std::int64_t i = 0; i < k; ++i) {
      const std::int32_t got = t.topk_ids[m * k + i], want = order[static_cast<std::size_t>(i)];
      if (!std::isfinite(score[want])) nan = true;
      if (got == want) continue;
      if (got < 0 || got >= E) {
        ++errors;
        continue;
      }
      const double bias = p.gate == RouterGate::sigmoid_bias ? std::abs(t.bias[want]) : 0.0;
      const double tol = slope * lbound * (p.gate == RouterGate::softmax ? 2.0 : 1.0) +
                         8.0 * kU * (std::abs(pe[want]) + bias + 1.0);
      if (!(std::abs(score[got] - score[want]) <= tol)) ++errors;
    }
    ids.add(m, nan ? NAN : static_cast<double>(errors), 0.0);
  }

  std::vector<Fp64Check> out;
  out.push_back({"logits/derived", derived.finish(),
                 Bound{"err/abs/max", 1.0,
                       fmt::format("error / (gamma_n sum|x w|), gamma_n = {:.3g}: n roundings on the longest path "
                                   "(product, 8 ceil(L/256) lane adds, 5 tree levels, S-1 slice adds)",
                                   g)}});
  out.push_back({"logits/abs", absolute.finish(),
                 unit_scale ? Bound{"err/abs/max", 2e-6,
                                    "issue 16's target for unit-scale logits (W ~ N(0,1)/sqrt(K)): 2e-6 absolute"}
                            : Bound{"err/abs/max", worst_bound, "the largest derived per-element bound"}});
  out.push_back({"weights", weights.finish(),
                 Bound{"err/abs/max", 1.0,
                       "error / (rel |w| + 2^-120) against fp64 of the kernel's ids and logits; rel = 2 (4u) + (k+1)u "
                       "(sigmoid) or from exp(l - m)'s argument rounding (softmax)"}});
  out.push_back({"ids", ids.finish(),
                 Bound{"err/abs/max", 0.0,
                       "chosen ids that differ from the fp64 ranking outside a near tie (scores within "
                       "the scores' rounding: slope * logit bound + 8u (p + |bias| + 1))"}});
  return out;
}

std::vector<Fp64Check> router_check_sort_fp64(const MoeSortRefProblem& p, const std::int32_t* topk_ids,
                                              const float* topk_weights, const MoeSortMxfp4Outputs& out) {
  const MoeSortRef ref = moe_sort_ref(p, topk_ids, topk_weights);
  const std::int64_t valid = ref.num_valid[0];
  ErrorAccumulator nv, sid, sw, seid, buf;
  for (int i = 0; i < 2; ++i) nv.add(i, out.num_valid_ids[i], ref.num_valid[i]);
  for (std::int64_t i = 0; i < valid; ++i) {
    const auto r = static_cast<std::size_t>(i);
    sid.add(i, i < out.entries ? static_cast<double>(out.sorted_token_ids[i]) : NAN, ref.sorted_token_ids[r]);
    sw.add(i, i < out.entries ? static_cast<double>(out.sorted_weights[i]) : NAN, ref.sorted_weights[r]);
  }
  for (std::int64_t j = 0; j < valid / p.block; ++j)
    seid.add(j, j < out.blocks ? static_cast<double>(out.sorted_expert_ids[j]) : NAN,
             ref.sorted_expert_ids[static_cast<std::size_t>(j)]);
  for (std::int64_t i = 0; i < p.tokens * p.buf_cols; ++i) buf.add(i, bf16_to_float(out.moe_buf[i]), 0.0);
  const Bound exact{"err/abs/max", 0.0, "integer positions and copied weights: exact"};
  return {{"sort/num_valid_ids", nv.finish(), exact},
          {"sort/sorted_token_ids", sid.finish(), exact},
          {"sort/sorted_weights", sw.finish(), exact},
          {"sort/sorted_expert_ids", seid.finish(), exact},
          {"moe_buf", buf.finish(), {"err/abs/max", 0.0, "the sort zeroes the first T rows of moe_buf"}}};
}

}  // namespace fb
