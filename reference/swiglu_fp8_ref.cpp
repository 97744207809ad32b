#include "reference/swiglu_fp8_ref.hpp"

#include <atomic>
#include <cmath>

#include <Eigen/Core>
#include <fmt/format.h>

#include "reference/codecs/bf16.hpp"
#include "reference/error_budget.hpp"
#include "reference/metrics/ulp.hpp"

namespace fb {
namespace {

constexpr double kU = kF32UnitRoundoff;
constexpr double kAlpha = static_cast<double>(1.702f);  // the fp32 constant the kernel multiplies by
constexpr double kLimit = 7.0;
constexpr double kMaxExpArgument = 88.73;                // |z| where exp(-z) is finite and normal
const double kExpOverflow = std::ldexp(1.0 - 0x1.0p-25, 128);  // fp32 RN(v) = +inf from here on

// NaN-preserving clamps (std::min/max would keep the other operand).
double clamp_high(double v, double hi) { return v > hi ? hi : v; }
double clamp_both(double v, double lo, double hi) { return v > hi ? hi : (v < lo ? lo : v); }

}  // namespace

double swiglu_out_rel_error(bool oai) {
  const double e_z = oai ? kU : 0.0;                                      // fl32(alpha * g)
  // exp of a perturbed argument: exp(-z (1 + d)) = exp(-z) exp(-z d), |z d| <= 88.73 e_z.
  const double e_exp = compose_rel(2.0 * kU, std::expm1(kMaxExpArgument * e_z));  // faithful: <= 1 ulp
  const double e_denominator = compose_rel(e_exp, kU);                     // 1 + E, positive terms
  // IEEE division; sigmoid can be an fp32 subnormal (>= 2^-128): 2^-150 absolute = 2^-22 relative.
  const double e_sigmoid = compose_rel(compose_rel(reciprocal_rel(e_denominator), kU), 0x1.0p-22);
  const double e_g_sigmoid = compose_rel(e_sigmoid, kU);                   // g * sigmoid
  // oai: u + 1 (exact unless |u| < 2^-13, then within u without cancellation) and the product.
  return oai ? compose_rel(compose_rel(e_g_sigmoid, kU), kU) : compose_rel(e_g_sigmoid, kU);
}

std::int64_t swiglu_ref_row(const SwigluRefProblem& p, const std::uint16_t* gate_up, std::int64_t row, double* out) {
  const std::uint16_t* gate = gate_up + row * 2 * p.d;
  const std::uint16_t* up = gate + p.d;
  std::int64_t flushed = 0;
  Eigen::Map<Eigen::ArrayXd> o(out, p.d);
  for (std::int64_t i = 0; i < p.d; ++i) {
    const double gv = bf16_to_float(gate[i]), uv = bf16_to_float(up[i]);
    const double g = p.oai ? clamp_high(gv, kLimit) : gv;
    const double factor = p.oai ? clamp_both(uv, -kLimit, kLimit) + 1.0 : uv;
    const double e = std::exp(-(p.oai ? kAlpha * g : g));
    double sigmoid = 1.0 / (1.0 + e);
    if (e >= kExpOverflow) {
      sigmoid = 0.0;
      ++flushed;
    }
    o[i] = g * sigmoid * factor;
  }
  return flushed;
}

std::vector<Fp64Check> swiglu_fp8_check_fp64(const SwigluRefProblem& p, const SwigluRefTensors& t) {
  const double e_out = swiglu_out_rel_error(p.oai);
  const std::int64_t d = p.d;
  std::vector<Fp64Check> checks;
  std::atomic<std::int64_t> flushed{0};

  if (t.out) {
    ErrorAccumulator acc;
#pragma omp parallel if (p.rows * d >= (1 << 16))
    {
      ErrorAccumulator local;
      std::vector<double> ref(static_cast<std::size_t>(d));
#pragma omp for schedule(static)
      for (std::int64_t row = 0; row < p.rows; ++row) {
        flushed += swiglu_ref_row(p, t.gate_up, row, ref.data());
        for (std::int64_t i = 0; i < d; ++i) {
          const std::uint16_t code = t.out[row * d + i];
          const double got = bf16_to_float(code);
          const bool finite = std::isfinite(ref[i]) && std::isfinite(got);
          local.add(row * d + i, got, ref[i], finite ? ulp_distance(UlpFormat::bf16, code, ref[i]) : -1);
        }
      }
#pragma omp critical
      acc.merge(local);
    }
    checks.push_back({"out", acc.finish(),
                      Bound{"err/ulp/max", static_cast<double>(bf16_ulp_bound(e_out)),
                            fmt::format("fp32 activation within rel {:.3g} of fp64 (project exp <= 1 ulp, "
                                        "alpha*g rounding x |z| <= 88.73, 1+E, IEEE divide, products) <= 2^-9: "
                                        "at most one bf16 midpoint; {} elements where fp32 exp(-z) overflows "
                                        "take the contract's sigmoid 0",
                                        e_out, flushed.load())}});
  }

  const std::vector<Fp64Check> quant = fp8_quant_check_fp64(
      p.quant, [&](std::int64_t row, double* y) { swiglu_ref_row(p, t.gate_up, row, y); }, t.q, t.scales,
      compose_rel(e_out, kBf16UnitRoundoff),
      fmt::format("the producer quantizes bf16(out): fp32 rel {:.3g}, then one bf16 rounding 2^-8", e_out));
  checks.insert(checks.end(), quant.begin(), quant.end());
  return checks;
}

}  // namespace fb
