#include "reference/fp8_quant_ref.hpp"

#include <algorithm>
#include <cmath>
#include <vector>

#include <Eigen/Core>
#include <fmt/format.h>

#include "reference/codecs/e8m0.hpp"
#include "reference/metrics/ulp.hpp"

namespace fb {
namespace {

constexpr double kU = 0x1.0p-24;  // fp32 unit roundoff

double scale_value(const Fp8QuantRefLayout& l, const void* scales, std::int64_t index) {
  if (l.e8m0_scales) return e8m0_to_float(static_cast<const std::uint8_t*>(scales)[index]);
  return static_cast<const float*>(scales)[index];
}

}  // namespace

double fp8_scale_ref(double amax, const Fp8QuantRefLayout& layout) {
  const double max_value = fp8_max(layout.flavour);
  // The contract's floor is the fp32 constant 1e-10 (fl32(1e-10) = 0x2EDBE6FF), not the real number.
  const double ideal = std::max(amax, static_cast<double>(bits_float(kAmaxFloorBits))) / max_value;
  if (std::isnan(amax) || !layout.e8m0_scales) return ideal;
  return std::exp2(std::ceil(std::log2(ideal)));
}

std::vector<Fp64Check> fp8_quant_check_fp64(const Fp8QuantRefLayout& l, const RowReference& row_ref,
                                            const std::uint8_t* q, const void* scales, double value_rel_error,
                                            const std::string& value_error_reason) {
  const std::int64_t groups = l.cols / l.group_size;
  const double max_value = fp8_max(l.flavour);
  const UlpFormat q_format = l.flavour == Fp8Flavour::e4m3fn ? UlpFormat::fp8_e4m3fn : UlpFormat::fp8_e4m3fnuz;
  ErrorAccumulator scale_acc, q_acc;

#pragma omp parallel if (l.rows * l.cols >= (1 << 16))
  {
    ErrorAccumulator local_scale, local_q;
    Eigen::ArrayXd row(l.cols);
#pragma omp for schedule(static)
    for (std::int64_t r = 0; r < l.rows; ++r) {
      row_ref(r, row.data());
      for (std::int64_t g = 0; g < groups; ++g) {
        const auto block = row.segment(g * l.group_size, l.group_size);
        const double amax = block.abs().maxCoeff<Eigen::PropagateNaN>();
        const double ideal = fp8_scale_ref(amax, l);
        const std::int64_t si = l.k_major_scales ? g * l.rows + r : r * groups + g;
        const double got_scale = scale_value(l, scales, si);
        // e8m0: distance in powers of two; fp32: relative error (the bound is relative).
        const std::int64_t scale_steps =
            l.e8m0_scales && got_scale > 0 && ideal > 0
                ? static_cast<std::int64_t>(std::llabs(std::llround(std::log2(got_scale) - std::log2(ideal))))
                : -1;
        local_scale.add(si, got_scale, ideal, scale_steps);
        for (std::int64_t k = 0; k < l.group_size; ++k) {
          const std::int64_t col = g * l.group_size + k;
          const std::int64_t qi = r * l.cols + col;
          const double want = std::clamp(block[k] / got_scale, -max_value, max_value);
          const double got = fp8_to_float(q[qi], l.flavour);
          const bool finite = std::isfinite(want) && !std::isnan(got);
          // Dequantized error against the fp64 value; ulp distance in the scaled fp8 domain.
          local_q.add(qi, got * got_scale, block[k], finite ? ulp_distance(q_format, q[qi], want) : -1);
        }
      }
    }
#pragma omp critical
    {
      scale_acc.merge(local_scale);
      q_acc.merge(local_q);
    }
  }

  std::vector<Fp64Check> checks;
  const std::string eps_note = value_rel_error > 0 ? fmt::format(" (eps {:.3g}: {})", value_rel_error, value_error_reason) : "";
  if (l.e8m0_scales) {
    checks.push_back({"scales", scale_acc.finish(),
                      Bound{"err/ulp/max", 1,
                            "e8m0 scale = 2^ceil(log2 fl32(amax*fl32(1/MAX))): the fp32 product may cross one "
                            "power of two" + eps_note}});
  } else {
    checks.push_back({"scales", scale_acc.finish(),
                      Bound{"err/rel/max", value_rel_error + 2.0 * kU * (1.0 + kU),
                            "fl32(amax*fl32(1/MAX)): two fp32 roundings, rel <= eps + 2u, u = 2^-24" + eps_note}});
  }
  if (l.e8m0_scales && value_rel_error == 0.0) {
    // x * 2^(127-s) is exact (an fp32 subnormal product is below every fp8 step anyway), so each
    // byte must be RN_fp8(clamp(x / s)) itself.
    checks.push_back({"q", q_acc.finish(),
                      Bound{"err/ulp/max", 0, "power-of-two scale: x * 2^(127-s) is exact, one rounding to fp8"}});
  } else {
    checks.push_back({"q", q_acc.finish(),
                      Bound{"err/ulp/max", 1,
                            "x*fl32(1/s) is within eps + 2u of x/s, so it crosses at most one fp8 rounding "
                            "boundary" + eps_note}});
  }
  return checks;
}

}  // namespace fb
