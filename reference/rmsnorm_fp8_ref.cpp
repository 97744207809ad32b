#include "reference/rmsnorm_fp8_ref.hpp"

#include <cmath>

#include <Eigen/Core>
#include <fmt/format.h>

#include "reference/codecs/bf16.hpp"
#include "reference/error_budget.hpp"
#include "reference/metrics/ulp.hpp"

namespace fb {
namespace {

constexpr double kU = kF32UnitRoundoff;

Eigen::ArrayXd widen_row(const std::uint16_t* p, std::int64_t n) {
  Eigen::ArrayXd a(n);
  for (std::int64_t i = 0; i < n; ++i) a[i] = bf16_to_float(p[i]);
  return a;
}

// One bf16 output against its fp64 values: ulp distance in bf16 (none where the value is not finite).
void add_bf16(ErrorAccumulator& acc, std::int64_t index, std::uint16_t got, double ref) {
  const double g = bf16_to_float(got);
  const bool finite = std::isfinite(ref) && std::isfinite(g);
  acc.add(index, g, ref, finite ? ulp_distance(UlpFormat::bf16, got, ref) : -1);
}

}  // namespace

double rmsnorm_y_rel_error(std::int64_t hidden, bool residual, double eps) {
  // Canonical order: a partial holds at most 8 * ceil(chunks / 256) terms; its first add is to +0
  // (exact), then one rounding per term; the tree adds 8 more levels.
  const std::int64_t chunks = (hidden + 7) / 8;
  const std::int64_t terms_per_partial = 8 * ((chunks + 255) / 256);
  const std::int64_t longest_add_path = (terms_per_partial - 1) + 8;
  const double e_s = residual ? kU : 0.0;                               // fl32(x + res)
  const double e_square = compose_rel(compose_rel(e_s, e_s), kU);        // s*s
  const double e_sum = compose_rel(e_square, gamma_rel(longest_add_path));  // non-negative terms
  // NOTE: s*s underflowing to a subnormal or zero loses at most 2^-150 per term, i.e. 2^-150 on
  // ss / n, against eps: a relative 2^-150 / eps on (ss / n + eps), added here.
  const double e_underflow = 0x1.0p-150 / eps;
  const double e_mean_eps = compose_rel(compose_rel(compose_rel(e_sum, kU), kU), e_underflow);  // / n, + eps
  const double e_r = compose_rel(reciprocal_rel(compose_rel(sqrt_rel(e_mean_eps), kU)), kU);  // sqrt, 1/x
  // y = (s * r) * (o + w): s, r, the product, o + w (exact or within u: no cancellation survives
  // rounding, see README), the last product.
  return compose_rel(compose_rel(compose_rel(e_s, e_r), kU), compose_rel(kU, kU));
}

void rmsnorm_ref_row(const RmsnormRefProblem& p, const RmsnormRefTensors& t, std::int64_t row, double* s_out,
                     double* y_out) {
  const std::int64_t n = p.hidden;
  Eigen::ArrayXd s = widen_row(t.x + row * n, n);
  if (p.residual) s += widen_row(t.residual + row * n, n);
  const double r = 1.0 / std::sqrt(s.square().sum() / static_cast<double>(n) + p.eps);
  const Eigen::ArrayXd y = s * r * (widen_row(t.weight, n) + p.weight_offset);
  Eigen::Map<Eigen::ArrayXd>(s_out, n) = s;
  Eigen::Map<Eigen::ArrayXd>(y_out, n) = y;
}

std::vector<Fp64Check> rmsnorm_fp8_check_fp64(const RmsnormRefProblem& p, const RmsnormRefTensors& t) {
  const double e_y = rmsnorm_y_rel_error(p.hidden, p.residual, p.eps);
  const std::int64_t n = p.hidden;
  std::vector<Fp64Check> checks;

  if (t.residual_out || t.out) {
    ErrorAccumulator res_acc, out_acc;
#pragma omp parallel if (p.rows * n >= (1 << 16))
    {
      ErrorAccumulator local_res, local_out;
      std::vector<double> s(static_cast<std::size_t>(n)), y(static_cast<std::size_t>(n));
#pragma omp for schedule(static)
      for (std::int64_t row = 0; row < p.rows; ++row) {
        rmsnorm_ref_row(p, t, row, s.data(), y.data());
        for (std::int64_t i = 0; i < n; ++i) {
          if (t.residual_out) add_bf16(local_res, row * n + i, t.residual_out[row * n + i], s[i]);
          if (t.out) add_bf16(local_out, row * n + i, t.out[row * n + i], y[i]);
        }
      }
#pragma omp critical
      {
        res_acc.merge(local_res);
        out_acc.merge(local_out);
      }
    }
    if (t.residual_out)
      checks.push_back({"residual_out", res_acc.finish(),
                        Bound{"err/ulp/max", 0,
                              "x + res of two bf16 is exact in fp32, or the smaller (< 2^-15 of the larger) "
                              "cannot cross a bf16 midpoint: residual_out is RN_bf16(x + res)"}});
    if (t.out)
      checks.push_back({"out", out_acc.finish(),
                        Bound{"err/ulp/max", static_cast<double>(bf16_ulp_bound(e_y)),
                              fmt::format("fp32 y within rel {:.3g} of fp64 (canonical sum of {} terms: longest "
                                          "add path, / n, + eps, sqrt, 1/x, three products) <= 2^-9: at most one "
                                          "bf16 midpoint between them",
                                          e_y, n)}});
  }

  const std::vector<Fp64Check> quant = fp8_quant_check_fp64(
      p.quant,
      [&](std::int64_t row, double* y) {
        std::vector<double> s(static_cast<std::size_t>(n));
        rmsnorm_ref_row(p, t, row, s.data(), y);
      },
      t.q, t.scales, compose_rel(e_y, kBf16UnitRoundoff),
      fmt::format("the producer quantizes bf16(y): fp32 y rel {:.3g}, then one bf16 rounding 2^-8", e_y));
  checks.insert(checks.end(), quant.begin(), quant.end());
  return checks;
}

}  // namespace fb
