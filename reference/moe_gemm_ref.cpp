#include "reference/moe_gemm_ref.hpp"

#include <fmt/format.h>

#include <Eigen/Core>
#include <algorithm>
#include <cmath>
#include <limits>

#include "reference/codecs/bf16.hpp"
#include "reference/codecs/e2m1.hpp"
#include "reference/error_budget.hpp"
#include "reference/moe_sort_mxfp4_ref.hpp"
#include "reference/swiglu_fp8_ref.hpp"

namespace fb {
namespace {

constexpr double kU = kF32UnitRoundoff;
constexpr double kHalfSubnormal = 0x1.0p-150;   // fp32: half the subnormal spacing
constexpr double kBf16HalfSubnormal = 0x1.0p-134;
constexpr double kSwishSlope = 1.0999;          // max |d/dx (x sigmoid(x))| = 1.09984...
constexpr float kAlpha = 1.702f;                // the kernel's fp32 alpha

double scale_value(std::uint8_t s) {
  return s == 0xFF ? std::numeric_limits<double>::quiet_NaN() : std::ldexp(1.0, static_cast<int>(s) - 127);
}

double e2m1_value(const std::uint8_t* row, std::int64_t c) {
  return e2m1_to_float(static_cast<std::uint8_t>(c % 2 ? row[c / 2] >> 4 : row[c / 2] & 0xF));
}

// One MXFP4 row in fp64: codes [cols/2], scale of block y from `scale(y)`.
template <class Scale>
Eigen::ArrayXd dequant_row(const std::uint8_t* codes, std::int64_t cols, Scale scale) {
  Eigen::ArrayXd v(cols);
  for (std::int64_t c = 0; c < cols; ++c) v[c] = e2m1_value(codes, c) * scale(c / 32);
  return v;
}

struct Dot {
  double value;
  double abs;  // sum of |products| (>= the sum of |block sums|)
};

Dot dot(const Eigen::ArrayXd& a, const Eigen::ArrayXd& w) {
  const Eigen::ArrayXd prod = a * w;
  return {prod.sum(), prod.abs().sum()};
}

double dot_error(const Dot& d, std::int64_t blocks) {
  return gamma_rel(blocks) * d.abs + static_cast<double>(blocks) * kHalfSubnormal;
}

// Sorted position of each routed pair (token * k + slot), -1 where none.
std::vector<std::int64_t> pair_positions(const MoeGemmRefProblem& p, const MoeGemmRefInputs& in) {
  std::vector<std::int64_t> pos(static_cast<std::size_t>(p.tokens * p.topk), -1);
  for (std::int64_t q = 0; q < in.num_valid_ids[0]; ++q) {
    const auto entry = static_cast<std::uint32_t>(in.sorted_token_ids[q]);
    const std::int64_t token = entry & 0xFFFFFFu, slot = entry >> 24;
    if (token < p.tokens && slot < p.topk) pos[static_cast<std::size_t>(token * p.topk + slot)] = q;
  }
  return pos;
}

Eigen::ArrayXd act_row(const MoeGemmRefInputs& in, std::int64_t row, std::int64_t q,
                       std::int64_t cols) {
  const std::int64_t pad = (cols / 32 + 7) / 8 * 8;
  return dequant_row(in.act + row * cols / 2, cols,
                     [&](std::int64_t y) { return scale_value(in.act_scales[mx_scale_addr_ref(q, y, pad)]); });
}

Eigen::ArrayXd weight_row(const MoeGemmRefInputs& in, std::int64_t row, std::int64_t cols) {
  const std::int64_t blocks = cols / 32;
  return dequant_row(in.weights + row * cols / 2, cols,
                     [&](std::int64_t y) { return scale_value(in.weight_scales[row * blocks + y]); });
}

// The fp64 activation and the kernel's bound at exact (g, u) with dot errors (eg, eu).
struct Activation {
  double value;
  double bound;
};

Activation swiglu_ref(bool oai, double g, double u, double eg, double eu) {
  const double gc = oai ? std::min(g, 7.0) : g;
  const double factor = oai ? std::clamp(u, -7.0, 7.0) + 1.0 : u;
  const double z = oai ? static_cast<double>(kAlpha) * gc : gc;
  const double e = std::exp(-z);
  const double value = gc * (1.0 / (1.0 + e)) * factor;
  const double u_max = oai ? std::min(std::abs(u) + eu, 7.0) + 1.0 : std::abs(u) + eu;
  const double g_max = oai ? std::min(std::abs(g) + eg, 7.0) : std::abs(g) + eg;
  const double delta = kSwishSlope * u_max * eg + g_max * eu + kSwishSlope * eg * eu;
  const double computed = std::abs(value) + delta;  // |f(g~, u~)|
  double bound = delta + swiglu_out_rel_error(oai) * computed + 0x1.0p-146;
  if (z < -87.0) bound += std::abs(value) + 0x1.0p-126;  // the contract's sigmoid flushes to 0 there
  bound += kBf16UnitRoundoff * (computed + bound) + kBf16HalfSubnormal;
  return {value, bound};
}

// Adds one element to the plain and the over-bound accumulators.
void add_element(ErrorAccumulator& plain, ErrorAccumulator& ratio, double& worst_bound, std::int64_t index, double got,
                 double ref, double bound) {
  plain.add(index, got, ref);
  const double err = std::abs(got - ref);
  // The ratio r as the error of 1 + r against 1: abs_max is the largest ratio, rmse its RMS.
  ratio.add(index, 1.0 + (std::isnan(bound) ? bound : err / std::max(bound, std::numeric_limits<double>::min())), 1.0);
  if (bound > worst_bound) worst_bound = bound;
}

std::vector<Fp64Check> finish(const char* name, const ErrorAccumulator& plain, const ErrorAccumulator& ratio,
                              double worst_bound, const char* reason) {
  std::vector<Fp64Check> checks;
  checks.push_back({std::string(name) + "/over_bound", ratio.finish(),
                    Bound{"err/abs/max", 1.0, std::string("each element's error over its own derived bound: ") + reason}});
  checks.push_back({name, plain.finish(),
                    Bound{"err/abs/max", worst_bound, "the largest per-element bound (reference/moe_gemm_ref.hpp)"}});
  return checks;
}

}  // namespace

std::vector<Fp64Check> moe_stage1_check_fp64(const MoeGemmRefProblem& p, const MoeGemmRefInputs& in,
                                             const std::uint16_t* a1, const std::uint8_t* token_mask) {
  const std::vector<std::int64_t> pos = pair_positions(p, in);
  const std::int64_t I = p.inter, K = p.hidden, blocks = K / 32;
  ErrorAccumulator plain, ratio;
  double worst_bound = 0.0;
#pragma omp parallel
  {
    ErrorAccumulator my_plain, my_ratio;
    double my_worst = 0.0;
#pragma omp for schedule(dynamic, 1)
    for (std::int64_t pair = 0; pair < p.tokens * p.topk; ++pair) {
      const std::int64_t t = pair / p.topk, q = pos[static_cast<std::size_t>(pair)];
      if ((token_mask && !token_mask[t]) || q < 0) continue;
      const std::int64_t e = in.sorted_expert_ids[q / p.block];
      const Eigen::ArrayXd a = act_row(in, t, q, K);
      for (std::int64_t n = 0; n < I; ++n) {
        const Dot g = dot(a, weight_row(in, e * 2 * I + n, K));
        const Dot u = dot(a, weight_row(in, e * 2 * I + I + n, K));
        const Activation f = swiglu_ref(p.oai, g.value, u.value, dot_error(g, blocks), dot_error(u, blocks));
        add_element(my_plain, my_ratio, my_worst, pair * I + n, bf16_to_float(a1[pair * I + n]), f.value, f.bound);
      }
    }
#pragma omp critical
    {
      plain.merge(my_plain);
      ratio.merge(my_ratio);
      worst_bound = std::max(worst_bound, my_worst);
    }
  }
  return finish("a1", plain, ratio, worst_bound,
                "gamma(K/32) on the block sums, SwiGLU's slopes (<= 1.1), its fp32 evaluation and the bf16 rounding");
}

namespace {

// fp64 out[t][d] and the kernel's bound, for every checked token: visit(t, refs, bounds) runs
// once per token (K values each), one thread at a time.
template <class Visit>
void stage2_ref(const MoeGemmRefProblem& p, const MoeGemmRefInputs& in, const std::uint8_t* token_mask, Visit visit) {
  const std::vector<std::int64_t> pos = pair_positions(p, in);
  const std::int64_t K = p.hidden, I = p.inter, blocks = I / 32, k = p.topk;
#pragma omp parallel for schedule(dynamic, 1)
  for (std::int64_t t = 0; t < p.tokens; ++t) {
    if (token_mask && !token_mask[t]) continue;
    std::vector<Eigen::ArrayXd> rows;
    std::vector<std::int64_t> experts;
    std::vector<double> weights;
    for (std::int64_t s = 0; s < k; ++s) {
      const std::int64_t q = pos[static_cast<std::size_t>(t * k + s)];
      if (q < 0) continue;
      rows.push_back(act_row(in, t * k + s, q, I));
      experts.push_back(in.sorted_expert_ids[q / p.block]);
      weights.push_back(static_cast<double>(in.sorted_weights[q]));
    }
    std::vector<double> refs(static_cast<std::size_t>(K)), bounds(refs.size());
    for (std::int64_t d = 0; d < K; ++d) {
      double ref = 0.0, err = 0.0, sum_abs = 0.0;
      for (std::size_t s = 0; s < rows.size(); ++s) {
        const Dot y = dot(rows[s], weight_row(in, experts[s] * K + d, I));
        const double w = std::abs(weights[s]), e_y = dot_error(y, blocks);
        ref += weights[s] * y.value;
        err += w * e_y + kU * w * (std::abs(y.value) + e_y) + kHalfSubnormal;
        sum_abs += w * (std::abs(y.value) + e_y) * (1.0 + kU) + kHalfSubnormal;
      }
      err += gamma_rel(static_cast<std::int64_t>(rows.size())) * sum_abs;
      if (p.shared != 0) {
        const double h = bf16_to_float(in.shared[t * K + d]);
        if (p.shared == 1) err += kBf16UnitRoundoff * (std::abs(ref) + err) + kBf16HalfSubnormal;  // chain
        ref += h;
        err += kU * (std::abs(ref) + err) + kHalfSubnormal;
      }
      err += kBf16UnitRoundoff * (std::abs(ref) + err) + kBf16HalfSubnormal;
      refs[static_cast<std::size_t>(d)] = ref;
      bounds[static_cast<std::size_t>(d)] = err;
    }
#pragma omp critical
    visit(t, refs, bounds);
  }
}

}  // namespace

std::vector<Fp64Check> moe_stage2_check_fp64(const MoeGemmRefProblem& p, const MoeGemmRefInputs& in,
                                             const std::uint16_t* out, const std::uint8_t* token_mask) {
  ErrorAccumulator plain, ratio;
  double worst_bound = 0.0;
  stage2_ref(p, in, token_mask, [&](std::int64_t t, const std::vector<double>& refs, const std::vector<double>& bounds) {
    for (std::size_t d = 0; d < refs.size(); ++d) {
      const std::int64_t i = t * p.hidden + static_cast<std::int64_t>(d);
      add_element(plain, ratio, worst_bound, i, bf16_to_float(out[i]), refs[d], bounds[d]);
    }
  });
  return finish("out", plain, ratio, worst_bound,
                "gamma(I/32) on the block sums, the weight multiply, gamma(k) on the slot sum, the shared add "
                "(and the chain's extra bf16 rounding), the bf16 rounding");
}

ErrorStats moe_stage2_error(const MoeGemmRefProblem& p, const MoeGemmRefInputs& in, const std::uint16_t* out,
                            const std::uint8_t* token_mask) {
  ErrorAccumulator plain;
  stage2_ref(p, in, token_mask, [&](std::int64_t t, const std::vector<double>& refs, const std::vector<double>&) {
    for (std::size_t d = 0; d < refs.size(); ++d) {
      const std::int64_t i = t * p.hidden + static_cast<std::int64_t>(d);
      plain.add(i, bf16_to_float(out[i]), refs[d]);
    }
  });
  return plain.finish();
}

}  // namespace fb
