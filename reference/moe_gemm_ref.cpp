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

// The scale bytes of an activation row (at sorted position q) and of a weight row, by block.
auto act_scale_bytes(const MoeGemmRefInputs& in, std::int64_t q, std::int64_t cols) {
  const std::int64_t pad = (cols / 32 + 7) / 8 * 8;
  return [&in, q, pad](std::int64_t y) { return in.act_scales[mx_scale_addr_ref(q, y, pad)]; };
}
auto weight_scale_bytes(const MoeGemmRefInputs& in, std::int64_t row, std::int64_t cols) {
  const std::int64_t blocks = cols / 32;
  return [&in, row, blocks](std::int64_t y) { return in.weight_scales[row * blocks + y]; };
}

Eigen::ArrayXd act_row(const MoeGemmRefInputs& in, std::int64_t row, std::int64_t q,
                       std::int64_t cols) {
  const auto bytes = act_scale_bytes(in, q, cols);
  return dequant_row(in.act + row * cols / 2, cols, [&](std::int64_t y) { return scale_value(bytes(y)); });
}

Eigen::ArrayXd weight_row(const MoeGemmRefInputs& in, std::int64_t row, std::int64_t cols) {
  const auto bytes = weight_scale_bytes(in, row, cols);
  return dequant_row(in.weights + row * cols / 2, cols, [&](std::int64_t y) { return scale_value(bytes(y)); });
}

// The kernel's error bound for a dot product; 2^-40 of the absolute sum also covers the fp64
// reference's own rounding (its sums of <= 2^14 exact products: far below 2^-40 relative).
double dot_error(double abs_sum, std::int64_t blocks) {
  return (gamma_rel(blocks) + 0x1.0p-40) * abs_sum + static_cast<double>(blocks) * kHalfSubnormal;
}

// The fast variant's (the header's "fast dot").
constexpr int kFastWindow = 12;  // binades below a row's largest block scale that stay exact
double fast_dot_error(double abs_sum, double dropped, double factor_w, std::int64_t blocks) {
  const std::int64_t partials = (blocks + 3) / 4;
  const double rel = compose_rel(compose_rel(4 * 0x1.0p-13, gamma_rel(partials)), compose_rel(kU, kU));
  return (rel + 0x1.0p-40) * abs_sum + dropped + kHalfSubnormal * (1.0 + factor_w);
}

// The largest of a row's scale bytes (the fast variant's row scale).
template <class Scale>
int row_scale_max(std::int64_t blocks, Scale scale_byte) {
  int c = 0;
  for (std::int64_t y = 0; y < blocks; ++y) c = std::max(c, static_cast<int>(scale_byte(y)));
  return c;
}

// |v| on the elements of blocks the fast variant drops (0 elsewhere).
template <class Scale>
Eigen::ArrayXd dropped_part(const Eigen::ArrayXd& v, std::int64_t cols, Scale scale_byte) {
  const std::int64_t blocks = cols / 32;
  const int c = row_scale_max(blocks, scale_byte);
  Eigen::ArrayXd d = Eigen::ArrayXd::Zero(cols);
  for (std::int64_t y = 0; y < blocks; ++y)
    if (static_cast<int>(scale_byte(y)) < c - kFastWindow) d.segment(32 * y, 32) = v.segment(32 * y, 32).abs();
  return d;
}

// The fp64 dot products of a group of activation rows with every weight row of one expert:
// values(n, r) and abs_sums(n, r) = sum of |products| (two dense fp64 products, weights dequantized
// once per expert); and the error bound of each (the exact or the fast variant's).
struct ExpertProducts {
  Eigen::MatrixXd values, abs_sums, errors;
};

ExpertProducts expert_products(const MoeGemmRefProblem& p, const MoeGemmRefInputs& in, std::int64_t expert,
                               std::int64_t weight_rows, std::int64_t cols, const std::vector<std::int64_t>& act_rows,
                               const std::vector<std::int64_t>& positions) {
  const auto acts = static_cast<Eigen::Index>(act_rows.size());
  const std::int64_t blocks = cols / 32;
  Eigen::MatrixXd w(weight_rows, cols), a(cols, acts);
  for (std::int64_t n = 0; n < weight_rows; ++n) w.row(n) = weight_row(in, expert * weight_rows + n, cols).matrix().transpose();
  for (Eigen::Index r = 0; r < acts; ++r)
    a.col(r) = act_row(in, act_rows[static_cast<std::size_t>(r)], positions[static_cast<std::size_t>(r)], cols).matrix();
  ExpertProducts e;
  e.values.noalias() = w * a;
  e.abs_sums.noalias() = w.cwiseAbs() * a.cwiseAbs();
  if (!p.fast) {
    e.errors = e.abs_sums.unaryExpr([blocks](double s) { return dot_error(s, blocks); });
    return e;
  }
  // D = sum of |a_k w_k| over k in a dropped block of either row: |W_dropped| |A| + |W_kept| |A_dropped|.
  Eigen::MatrixXd wd(weight_rows, cols), ad(cols, acts);
  Eigen::VectorXd factor_w(weight_rows);
  for (std::int64_t n = 0; n < weight_rows; ++n) {
    const auto bytes = weight_scale_bytes(in, expert * weight_rows + n, cols);
    wd.row(n) = dropped_part(w.row(n).transpose().array(), cols, bytes).matrix().transpose();
    factor_w[n] = std::ldexp(1.0, row_scale_max(blocks, bytes) - 133);
  }
  for (Eigen::Index r = 0; r < acts; ++r)
    ad.col(r) = dropped_part(a.col(r).array(), cols, act_scale_bytes(in, positions[static_cast<std::size_t>(r)], cols)).matrix();
  Eigen::MatrixXd dropped = Eigen::MatrixXd::Zero(weight_rows, acts);
  if (wd.any() || ad.any()) dropped.noalias() = wd * a.cwiseAbs() + (w.cwiseAbs() - wd) * ad;
  e.errors.resize(weight_rows, acts);
  for (Eigen::Index r = 0; r < acts; ++r)
    for (std::int64_t n = 0; n < weight_rows; ++n)
      e.errors(n, r) = fast_dot_error(e.abs_sums(n, r), dropped(n, r), factor_w[n], blocks);
  return e;
}

// The checked pairs grouped by expert: pair ids (token * k + slot) and their sorted positions.
struct ExpertPairs {
  std::vector<std::int64_t> pairs, positions;
};

std::vector<ExpertPairs> pairs_by_expert(const MoeGemmRefProblem& p, const MoeGemmRefInputs& in,
                                         const std::vector<std::int64_t>& pos, const std::uint8_t* token_mask) {
  std::vector<ExpertPairs> by(static_cast<std::size_t>(p.experts));
  for (std::int64_t pair = 0; pair < p.tokens * p.topk; ++pair) {
    const std::int64_t q = pos[static_cast<std::size_t>(pair)];
    if (q < 0 || (token_mask && !token_mask[pair / p.topk])) continue;
    ExpertPairs& e = by[static_cast<std::size_t>(in.sorted_expert_ids[q / p.block])];
    e.pairs.push_back(pair);
    e.positions.push_back(q);
  }
  return by;
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
  const std::vector<ExpertPairs> by = pairs_by_expert(p, in, pair_positions(p, in), token_mask);
  const std::int64_t I = p.inter, K = p.hidden;
  ErrorAccumulator plain, ratio;
  double worst_bound = 0.0;
#pragma omp parallel
  {
    ErrorAccumulator my_plain, my_ratio;
    double my_worst = 0.0;
#pragma omp for schedule(dynamic, 1)
    for (std::int64_t e = 0; e < p.experts; ++e) {
      const ExpertPairs& ep = by[static_cast<std::size_t>(e)];
      if (ep.pairs.empty()) continue;
      std::vector<std::int64_t> rows(ep.pairs.size());
      for (std::size_t r = 0; r < rows.size(); ++r) rows[r] = ep.pairs[r] / p.topk;  // row = token
      const ExpertProducts prod = expert_products(p, in, e, 2 * I, K, rows, ep.positions);
      for (std::size_t r = 0; r < rows.size(); ++r) {
        const std::int64_t pair = ep.pairs[r];
        const auto c = static_cast<Eigen::Index>(r);
        for (std::int64_t n = 0; n < I; ++n) {
          const Activation f =
              swiglu_ref(p.oai, prod.values(n, c), prod.values(I + n, c), prod.errors(n, c), prod.errors(I + n, c));
          add_element(my_plain, my_ratio, my_worst, pair * I + n, bf16_to_float(a1[pair * I + n]), f.value, f.bound);
        }
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
                p.fast ? "the fast dot (2^-11 per 128-K matrix-unit partial, gamma over the partials, two scalings, the "
                         "dropped blocks), SwiGLU's slopes (<= 1.1), its fp32 evaluation and the bf16 rounding"
                       : "gamma(K/32) on the block sums, SwiGLU's slopes (<= 1.1), its fp32 evaluation and the bf16 rounding");
}

namespace {

// fp64 out[t][d] and the kernel's bound, for every checked token: visit(t, refs, bounds) runs
// once per token (K values each), one thread at a time.
template <class Visit>
void stage2_ref(const MoeGemmRefProblem& p, const MoeGemmRefInputs& in, const std::uint8_t* token_mask, Visit visit) {
  const std::vector<std::int64_t> pos = pair_positions(p, in);
  const std::vector<ExpertPairs> by = pairs_by_expert(p, in, pos, token_mask);
  const std::int64_t K = p.hidden, I = p.inter, k = p.topk;
  // y and its absolute product sum for every checked pair, [pair][K].
  std::vector<std::int64_t> slot_of(static_cast<std::size_t>(p.tokens * k), -1);
  std::int64_t checked = 0;
  for (const ExpertPairs& ep : by)
    for (std::int64_t pair : ep.pairs) slot_of[static_cast<std::size_t>(pair)] = checked++;
  std::vector<double> y(static_cast<std::size_t>(checked * K)), y_err(y.size());
#pragma omp parallel for schedule(dynamic, 1)
  for (std::int64_t e = 0; e < p.experts; ++e) {
    const ExpertPairs& ep = by[static_cast<std::size_t>(e)];
    if (ep.pairs.empty()) continue;
    const ExpertProducts prod = expert_products(p, in, e, K, I, ep.pairs, ep.positions);  // row = token*k + slot
    for (std::size_t r = 0; r < ep.pairs.size(); ++r) {
      const std::int64_t at = slot_of[static_cast<std::size_t>(ep.pairs[r])] * K;
      for (std::int64_t d = 0; d < K; ++d) {
        y[static_cast<std::size_t>(at + d)] = prod.values(d, static_cast<Eigen::Index>(r));
        y_err[static_cast<std::size_t>(at + d)] = prod.errors(d, static_cast<Eigen::Index>(r));
      }
    }
  }
#pragma omp parallel for schedule(dynamic, 1)
  for (std::int64_t t = 0; t < p.tokens; ++t) {
    if (token_mask && !token_mask[t]) continue;
    std::vector<double> refs(static_cast<std::size_t>(K)), bounds(refs.size());
    for (std::int64_t d = 0; d < K; ++d) {
      double ref = 0.0, err = 0.0, sum_abs = 0.0;
      std::int64_t terms = 0;
      for (std::int64_t s = 0; s < k; ++s) {
        const std::int64_t q = pos[static_cast<std::size_t>(t * k + s)];
        if (q < 0) continue;
        const auto at = static_cast<std::size_t>(slot_of[static_cast<std::size_t>(t * k + s)] * K + d);
        const double w = static_cast<double>(in.sorted_weights[q]), aw = std::abs(w);
        const double e_y = y_err[at];
        ref += w * y[at];
        err += aw * e_y + kU * aw * (std::abs(y[at]) + e_y) + kHalfSubnormal;
        sum_abs += aw * (std::abs(y[at]) + e_y) * (1.0 + kU) + kHalfSubnormal;
        ++terms;
      }
      err += gamma_rel(terms) * sum_abs;
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
                p.fast ? "the fast dot (2^-11 per 128-K matrix-unit partial, gamma over the partials, two scalings, the "
                         "dropped blocks), the weight multiply, gamma(k) on the slot sum, the bf16 rounding"
                       : "gamma(I/32) on the block sums, the weight multiply, gamma(k) on the slot sum, the shared add "
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
