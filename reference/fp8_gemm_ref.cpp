#include "reference/fp8_gemm_ref.hpp"

#include <cmath>

#include <Eigen/Core>
#include <fmt/format.h>

#include "reference/codecs/bf16.hpp"
#include "reference/metrics/error_stats.hpp"
#include "reference/metrics/ulp.hpp"

namespace fb {
namespace {

using Matrix = Eigen::Matrix<double, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;

double fp8_to_double(std::uint8_t code, Fp8Flavour f) {
  return f == Fp8Flavour::e4m3fn ? fp8_e4m3fn_to_float(code) : fp8_e4m3fnuz_to_float(code);
}

}  // namespace

std::vector<Fp64Check> fp8_gemm_check_fp64(const Fp8GemmRefProblem& p, const std::uint16_t* c,
                                           const std::vector<std::int64_t>& rows_in, double beta,
                                           const std::string& beta_reason) {
  std::vector<std::int64_t> rows = rows_in;
  if (rows.empty())
    for (std::int64_t m = 0; m < p.rows; ++m) rows.push_back(m);
  const auto r = static_cast<Eigen::Index>(rows.size());
  const std::int64_t blocks = (p.depth + p.block_k - 1) / p.block_k;

  Matrix ref = Matrix::Zero(r, p.cols), mag = Matrix::Zero(r, p.cols);
  for (std::int64_t kb = 0; kb < blocks; ++kb) {
    const std::int64_t k0 = kb * p.block_k, width = std::min(p.block_k, p.depth - k0);
    Matrix a(r, width), w(p.cols, width);
    for (Eigen::Index i = 0; i < r; ++i)
      for (std::int64_t k = 0; k < width; ++k) a(i, k) = fp8_to_double(p.a[rows[i] * p.depth + k0 + k], p.flavour);
    for (std::int64_t n = 0; n < p.cols; ++n)
      for (std::int64_t k = 0; k < width; ++k) w(n, k) = fp8_to_double(p.b[n * p.depth + k0 + k], p.flavour);
    const Matrix dot = a * w.transpose();
    const Matrix abs_dot = a.cwiseAbs() * w.cwiseAbs().transpose();
    for (Eigen::Index i = 0; i < r; ++i) {
      const double as = p.a_scale[rows[i] * p.a_stride_m + kb * p.a_stride_kb];
      for (std::int64_t n = 0; n < p.cols; ++n) {
        const double s = as * static_cast<double>(p.b_scale[(n / p.b_group_n) * p.b_stride_n + kb]);
        ref(i, n) += dot(i, n) * s;
        mag(i, n) += abs_dot(i, n) * std::fabs(s);
      }
    }
  }

  // Eigen's fp64 sums are not exact either: at most K * 2^-53 of T, added to beta.
  const double beta_total = beta + static_cast<double>(p.depth) * 0x1.0p-53;
  ErrorAccumulator acc;
  for (Eigen::Index i = 0; i < r; ++i) {
    for (std::int64_t n = 0; n < p.cols; ++n) {
      const std::int64_t index = rows[i] * p.cols + n;
      const std::uint16_t code = c[index];
      const double want = ref(i, n);
      const double budget = beta_total * mag(i, n) * (1.0 + 0x1.0p-8) + 0x1.0p-8 * std::fabs(want) + 0x1.0p-133;
      const double got = bf16_to_float(code);
      const std::int64_t ulp = std::isfinite(want) && !std::isnan(got) ? ulp_distance(UlpFormat::bf16, code, want) : -1;
      acc.add(index, got / budget, want / budget, ulp);
    }
  }
  Fp64Check check;
  check.quantity = "C/budget";
  check.stats = acc.finish();
  check.bound = {"err/abs/max", 1.0,
                 fmt::format("|C - C64| <= beta T (1 + 2^-8) + 2^-8 |C64| + 2^-133 per element, T = sum |a_s b_s A B|, "
                             "beta = {:.3g}: {}; measured as |C - C64| / budget",
                             beta_total, beta_reason)};
  return {check};
}

}  // namespace fb
