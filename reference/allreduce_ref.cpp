#include "reference/allreduce_ref.hpp"

#include <algorithm>
#include <cmath>

#include <Eigen/Core>
#include <fmt/format.h>

#include "reference/codecs/bf16.hpp"
#include "reference/codecs/e8m0.hpp"
#include "reference/error_budget.hpp"
#include "reference/metrics/error_stats.hpp"

namespace fb {
namespace {

constexpr double kU = kF32UnitRoundoff;
constexpr double kB = kBf16UnitRoundoff;
constexpr double kHalfBf16Subnormal = 0x1.0p-134;

using Matrix = Eigen::Matrix<double, Eigen::Dynamic, Eigen::Dynamic>;

// Column r holds rank r's inputs, exactly.
Matrix inputs_matrix(const AllreduceParams& p, const std::uint16_t* x) {
  const std::int64_t n = p.elements();
  Matrix m(n, p.ranks);
  for (int r = 0; r < p.ranks; ++r)
    for (std::int64_t i = 0; i < n; ++i) m(i, r) = bf16_to_float(x[r * n + i]);
  return m;
}

// The quantize-dequantize error bound of a value v in a group of amax A.
double quant_error(AllreduceVariant v, double value, double amax) {
  // The kernels floor the amax at the fp32 nearest 1e-10 (amax_floor_bits): the same value here.
  const double a = std::max(std::abs(amax), static_cast<double>(bits_float(kAmaxFloorBits)));
  if (v == AllreduceVariant::two_shot_fp8) {
    const double s = a / 448.0 * (1.0 + 3.0 * kU);
    return (0x1.0p-4 + 5.0 * kU) * std::abs(value) + 0x1.0p-10 * s;
  }
  const double s = a / 7.0 * (1.0 + kU);
  return 3.0 * kU * std::abs(value) + (0.5 + 8.0 * kU) * s;
}

double gamma_bf16_adds(std::int64_t m) {
  const double e = kB + 0x1.0p-23;
  const double me = static_cast<double>(m) * e;
  return me / (1.0 - me);
}

}  // namespace

std::vector<double> allreduce_ref_sums(const AllreduceParams& p, const std::uint16_t* x) {
  const Eigen::VectorXd s = inputs_matrix(p, x).rowwise().sum();
  return {s.data(), s.data() + s.size()};
}

std::vector<double> allreduce_error_bounds(const AllreduceParams& p, const std::uint16_t* x) {
  const Matrix m = inputs_matrix(p, x);
  const Eigen::VectorXd s = m.rowwise().sum();
  const Eigen::VectorXd mag = m.cwiseAbs().rowwise().sum();
  const std::int64_t n = p.elements();
  const double g = gamma_rel(p.ranks - 1);
  std::vector<double> bound(static_cast<std::size_t>(n));
  if (p.variant == AllreduceVariant::one_shot || p.variant == AllreduceVariant::two_shot) {
    for (std::int64_t i = 0; i < n; ++i)
      bound[i] = g * mag(i) + kB * (std::abs(s(i)) + g * mag(i)) + kHalfBf16Subnormal;
    return bound;
  }
  if (p.variant == AllreduceVariant::vendor) {
    const double gv = gamma_bf16_adds(p.ranks - 1);
    for (std::int64_t i = 0; i < n; ++i) bound[i] = gv * mag(i) + p.ranks * kHalfBf16Subnormal;
    return bound;
  }
  // Quantized: group by group.
  std::vector<double> e1(kAllreduceGroup);
  for (std::int64_t g0 = 0; g0 < n; g0 += kAllreduceGroup) {
    const std::int64_t len = std::min<std::int64_t>(kAllreduceGroup, n - g0);
    std::fill(e1.begin(), e1.end(), 0.0);
    for (int r = 0; r < p.ranks; ++r) {
      const double amax = m.col(r).segment(g0, len).cwiseAbs().maxCoeff();
      for (std::int64_t j = 0; j < len; ++j) {
        const double v = m(g0 + j, r), e = quant_error(p.variant, v, amax);
        e1[j] += e + g * (std::abs(v) + e);
      }
    }
    double amax_sum = 0.0;
    for (std::int64_t j = 0; j < len; ++j) amax_sum = std::max(amax_sum, std::abs(s(g0 + j)) + e1[j]);
    for (std::int64_t j = 0; j < len; ++j) {
      const double top = std::abs(s(g0 + j)) + e1[j];
      const double e2 = quant_error(p.variant, top, amax_sum);
      bound[g0 + j] = e1[j] + e2 + kB * (top + e2) + kHalfBf16Subnormal;
    }
  }
  return bound;
}

std::vector<Fp64Check> allreduce_check_fp64(const AllreduceParams& p, const std::uint16_t* x, const std::uint16_t* out) {
  const std::vector<double> s = allreduce_ref_sums(p, x);
  const std::vector<double> bound = allreduce_error_bounds(p, x);
  const std::int64_t n = p.elements();
  ErrorAccumulator ratio;
  for (int r = 0; r < p.ranks; ++r) {
    for (std::int64_t i = 0; i < n; ++i) {
      const double got = bf16_to_float(out[r * n + i]), want = s[i];
      const bool finite = std::isfinite(got) && std::isfinite(want);
      // NaN or inf (got or reference) is carried into the accumulator, which counts it: never a pass.
      ratio.add(r * n + i, finite ? std::abs(got - want) / bound[i] : got - want, 0.0);
    }
  }
  std::string reason;
  switch (p.variant) {
    case AllreduceVariant::one_shot:
    case AllreduceVariant::two_shot:
      reason = fmt::format("error / (g_{0} sum|x| + 2^-8 (|s| + g_{0} sum|x|) + 2^-134): {0} fp32 adds in rank order, "
                           "one bf16 rounding",
                           p.ranks - 1);
      break;
    case AllreduceVariant::vendor:
      reason = fmt::format("error / (g'_{0} sum|x| + R 2^-134), g' of unit 2^-8 + 2^-23: any order of {0} adds, "
                           "each rounded to bf16",
                           p.ranks - 1);
      break;
    default:
      reason = fmt::format("error / bound: each rank's per-32 {} quantization E(x_r, A_r), {} fp32 adds, the sum's "
                           "requantization, one bf16 rounding",
                           p.variant == AllreduceVariant::two_shot_fp8 ? "e4m3 (half ulp 2^-4 |t|, 2^-10 subnormal)"
                                                                       : "int4 (half a step, S = A/7)",
                           p.ranks - 1);
  }
  return {{"out/derived", ratio.finish(), Bound{"err/abs/max", 1.0, reason}}};
}

}  // namespace fb
