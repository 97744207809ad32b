// The project's exp against exp in double, over every fp32 from -104 to 89 (every input that gives
// a finite, non-zero result, plus the edges), and its special values. The bound asserted here is the
// project's stated accuracy; the maximum found is printed, for the README. The branch-free exp is
// also compared bit for bit with its earlier branchy form: every fp32 in [-104, 89], every NaN and
// infinity, the range edges densely and a sample of the rest.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <limits>

#include "reference/math/exact_exp.hpp"

namespace fb {
namespace {

// |got - ref| in units of the fp32 ulp at ref (ulp of the binade that holds ref; subnormal spacing below).
double ulp_error(float got, double ref) {
  const double ulp = ref < std::ldexp(1.0, -126) ? std::ldexp(1.0, -149) : std::ldexp(1.0, std::ilogb(ref) - 23);
  return std::fabs(static_cast<double>(got) - ref) / ulp;
}

// The earlier definition of exact_exp (range branches, float-to-int k, scaling in normal steps; k
// now rounded by one fma, as in the branch-free form), kept as the oracle of the branch-free one:
// every fp32 must give the same bits.
float branchy_exp(float x) {
  if (x != x) return x + x;
  if (x > 88.72283935546875f) return bits_float(0x7F800000u);
  if (x < -103.972084045410156f) return 0.0f;
  const float kRoundMagic = 12582912.0f;
  const float kf = fma32(x, 1.44269502162933349609375f, kRoundMagic) - kRoundMagic;
  float r = fma32(-kf, 0.693145751953125f, x);
  r = fma32(-kf, 1.42860676533018704503775e-06f, r);
  float p = detail::exp_polynomial(r, 1.0f);  // the polynomial is shared; the range logic is not
  int k = static_cast<int>(kf);
  if (k > 127) {
    p = p * 2.0f;
    k -= 1;
  }
  if (k < -126) {
    p = p * bits_float(0x1F800000u);
    k += 64;
  }
  return p * bits_float(static_cast<std::uint32_t>(k + 127) << 23);
}

// Outside [-104, 89] the branch-free exp clamps its argument, so its arithmetic is that of -104 or
// 89 (swept densely below): here every NaN and infinity, the edges densely, the rest with a stride.
TEST(ExactExp, SameBitsAsTheBranchyFormOutsideTheSweptRange) {
  std::int64_t bad = 0;
  std::uint32_t first_bad = 0xFFFFFFFFu;
  const std::uint32_t neg_end = float_bits(-104.0f), pos_end = float_bits(89.0f);
#pragma omp parallel for schedule(static, 1 << 16) reduction(+ : bad)
  for (std::int64_t i = 0; i < (std::int64_t{1} << 32); ++i) {
    const auto u = static_cast<std::uint32_t>(i);
    const std::uint32_t mag = u & 0x7FFFFFFFu;
    if (u <= pos_end || (u >= 0x80000000u && u <= neg_end)) continue;  // the range sweep's
    const bool near_edge = (u > pos_end && u - pos_end < (1u << 20)) || (u > neg_end && u - neg_end < (1u << 20));
    if (mag < 0x7F800000u && !near_edge && i % 257 != 0) continue;
    const float x = bits_float(u);
    if (float_bits(exact_exp(x)) != float_bits(branchy_exp(x))) {
      ++bad;
#pragma omp critical
      if (u < first_bad) first_bad = u;
    }
  }
  EXPECT_EQ(bad, 0) << "first at fp32 bits 0x" << std::hex << first_bad;
}

// Also the bits of the branchy form on every fp32 of the range.
TEST(ExactExp, WithinOneUlpOfExpInDoubleOverItsWholeRange) {
  double worst = 0.0;
  float worst_x = 0.0f;
  std::int64_t differ = 0;
  const std::uint32_t neg_end = float_bits(-104.0f), pos_end = float_bits(89.0f);
  // Negative inputs: bit patterns 0x80000000 .. bits(-104); positive: 0 .. bits(89).
  for (int side = 0; side < 2; ++side) {
    const std::uint32_t begin = side ? 0x80000000u : 0u;
    const std::uint32_t end = side ? neg_end : pos_end;
#pragma omp parallel
    {
      double local = 0.0;
      float local_x = 0.0f;
#pragma omp for schedule(static, 1 << 16) reduction(+ : differ)
      for (std::int64_t i = begin; i <= static_cast<std::int64_t>(end); ++i) {
        const float x = bits_float(static_cast<std::uint32_t>(i));
        const double ref = std::exp(static_cast<double>(x));
        const float got = exact_exp(x);
        differ += float_bits(got) != float_bits(branchy_exp(x));
        double err;
        if (ref > std::numeric_limits<float>::max()) err = std::isinf(got) ? 0.0 : INFINITY;
        else if (ref < std::ldexp(1.0, -150)) err = got == 0.0f ? 0.0 : ulp_error(got, ref);
        else err = ulp_error(got, ref);
        if (err > local) {
          local = err;
          local_x = x;
        }
      }
#pragma omp critical
      if (local > worst) {
        worst = local;
        worst_x = local_x;
      }
    }
  }
  std::printf("exact_exp: max error %.4f ulp (at x = %.9g) over every fp32 in [-104, 89]\n", worst, worst_x);
  EXPECT_LE(worst, 1.0) << "at x = " << worst_x;
  EXPECT_EQ(differ, 0) << "inputs where the branch-free exp differs from the branchy form";
}

TEST(ExactExp, SpecialValues) {
  EXPECT_EQ(exact_exp(0.0f), 1.0f);
  EXPECT_EQ(exact_exp(-0.0f), 1.0f);
  EXPECT_TRUE(std::isinf(exact_exp(89.0f)));
  EXPECT_TRUE(std::isinf(exact_exp(INFINITY)));
  EXPECT_EQ(exact_exp(-INFINITY), 0.0f);
  EXPECT_EQ(exact_exp(-104.0f), 0.0f);
  EXPECT_TRUE(std::isnan(exact_exp(NAN)));
  EXPECT_GT(exact_exp(-103.0f), 0.0f);  // subnormal results are kept, not flushed
}

// The bounded sigmoid (swiglu_oai's) against exact_sigmoid: every fp32 z in [-89, 86]; below -89
// both clamp -z to 89 (same arithmetic as -89), so there: -inf, the edge densely, a sample of the
// rest. A NaN z gives +0 (its callers carry the NaN in another operand).
TEST(ExactSigmoid, BoundedVariantHasTheSameBitsForEveryZAtMost86) {
  std::int64_t differ = 0;
  std::uint32_t first_bad = 0xFFFFFFFFu;
  const std::uint32_t pos_end = float_bits(86.0f), neg_end = float_bits(-89.0f);
#pragma omp parallel for schedule(static, 1 << 16) reduction(+ : differ)
  for (std::int64_t i = 0; i <= 0xFF800000ll; ++i) {
    const auto u = static_cast<std::uint32_t>(i);
    if (u > pos_end && u < 0x80000000u) continue;
    if (u > neg_end && u < 0xFF800000u && u - neg_end >= (1u << 20) && i % 257 != 0) continue;
    const float z = bits_float(u);
    if (float_bits(exact_sigmoid_z_at_most_86(z)) != float_bits(exact_sigmoid(z))) {
      ++differ;
#pragma omp critical
      if (u < first_bad) first_bad = u;
    }
  }
  EXPECT_EQ(differ, 0) << "first at fp32 bits 0x" << std::hex << first_bad;
  EXPECT_EQ(float_bits(exact_sigmoid_z_at_most_86(NAN)), 0u);
  EXPECT_EQ(float_bits(exact_sigmoid_z_at_most_86(-NAN)), 0u);
}

TEST(ExactSigmoid, SaturatesCleanlyAndIsSymmetricAroundZero) {
  EXPECT_EQ(exact_sigmoid(0.0f), 0.5f);
  EXPECT_EQ(exact_sigmoid(-200.0f), 0.0f);  // exp overflows to inf, 1 / inf = 0
  EXPECT_EQ(exact_sigmoid(200.0f), 1.0f);
  for (float z = -20.0f; z <= 20.0f; z += 0.37f) {
    const double ref = 1.0 / (1.0 + std::exp(-static_cast<double>(z)));
    EXPECT_NEAR(exact_sigmoid(z), ref, 4 * std::ldexp(1.0, std::ilogb(ref) - 23)) << z;
  }
}

}  // namespace
}  // namespace fb
